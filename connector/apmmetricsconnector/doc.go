//go:generate go tool -modfile=../../internal/tools/go.mod mdatagen metadata.yaml

// Package apmmetricsconnector counts spans and log records into the service summary, service
// transaction, transaction and service destination metrics Kibana's APM UI reads: the metrics of
// EDOT's elasticapm connector (v0.36.0), the same names, types, attributes, intervals and
// overflow, at a fraction of its cost per span. EDOT's connector evaluates OTTL expressions and
// hashes attribute maps for nine metric definitions per span, copies every batch (it mutates
// spans) and merges every request into its store; this one reads the attributes directly, never
// changes its input (it hands each batch on, uncopied, to the pipeline behind it), sums the items
// of many requests in memory and hands them to the same store (EDOT's lsminterval processor)
// every 10 s. See README.md.
package apmmetricsconnector
