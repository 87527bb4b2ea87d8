//go:generate go tool -modfile=../../internal/tools/go.mod mdatagen metadata.yaml

// Package ddtracereceiver is a drop-in for the Datadog Agent's trace intake: services instrumented
// with any dd-trace library send their traces to it unchanged (DD_TRACE_AGENT_URL), and it turns
// them into OpenTelemetry spans. See README.md.
package ddtracereceiver
