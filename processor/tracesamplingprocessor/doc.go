//go:generate go tool -modfile=../../internal/tools/go.mod mdatagen metadata.yaml

// Package tracesamplingprocessor decides which traces are stored, as the systems tracegate
// replaces decide: the Datadog tracer's sampling priority (with the agent's error and rare
// samplers for the traces it rejected), Datakit's sampler and filters, and Elastic APM agents'
// unsampled transactions. It sits after the APM aggregation, so that the aggregated metrics still
// count every span. Every trace it drops is counted with its reason. See README.md.
package tracesamplingprocessor
