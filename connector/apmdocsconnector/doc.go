//go:generate go tool -modfile=../../internal/tools/go.mod mdatagen metadata.yaml

// Package apmdocsconnector writes what every protocol brings as APM Server's own documents, for
// Kibana's APM UI on the Elastic Stack 8.x: spans, span events and logs converted by apm-data (APM
// Server's conversion), the Elastic APM agents' events as their intake decoded them, APM
// Server's processors applied, the transaction, service transaction, service destination and
// service summary metricsets counted, and each event encoded by apm-data as APM Server encodes it.
// The documents leave as log records the Elasticsearch exporter writes as they are (bodymap mode),
// each to its data stream. See README.md.
package apmdocsconnector
