//go:generate go tool -modfile=../../internal/tools/go.mod mdatagen metadata.yaml

// Package datakitreceiver serves Datakit's trace inputs on Datakit's port and paths: applications
// traced for Datakit (ddtrace, Jaeger, Zipkin, OpenTelemetry) send to it unchanged. See README.md.
package datakitreceiver
