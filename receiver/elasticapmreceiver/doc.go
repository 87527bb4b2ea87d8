//go:generate go tool -modfile=../../internal/tools/go.mod mdatagen metadata.yaml

// Package elasticapmreceiver is a drop-in for Elastic APM Server's intake: services instrumented
// with Elastic APM agents send to it unchanged, on APM Server's port with APM Server's answers, and
// their events become OpenTelemetry spans, logs and metrics as EDOT's intake receiver makes them.
// See README.md.
package elasticapmreceiver
