module github.com/tracegate/tracegate/internal/gcdefaults

go 1.25.0
