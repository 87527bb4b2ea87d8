module github.com/tracegate/tracegate

go 1.25.0
