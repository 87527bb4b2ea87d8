module github.com/tracegate/tracegate/internal/estemplates

go 1.25.0
