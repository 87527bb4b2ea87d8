//go:generate go tool -modfile=../../internal/tools/go.mod mdatagen metadata.yaml

// Package elasticsearchdocumentsexporter writes documents that are ready as they are: log
// records whose body is a JSON document, each to the data stream and with the _id its attributes
// name (elasticsearch.index, elasticsearch.document_id), in bulk requests built with Elastic's
// go-docappender. The apmdocs connector makes such records (APM Server's documents, by apm-data's
// encoding); writing their bytes unchanged spares the parse into a map and the serialization back
// that the contrib exporter's bodymap mode costs. See README.md.
package elasticsearchdocumentsexporter
