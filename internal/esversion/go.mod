module github.com/tracegate/tracegate/internal/esversion

go 1.25.0
