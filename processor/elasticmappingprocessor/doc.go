//go:generate go tool -modfile=../../internal/tools/go.mod mdatagen metadata.yaml

// Package elasticmappingprocessor chooses the elasticsearch exporter's document mapping for every
// span, in the pipeline, so that clients need to send nothing: it sets the scope attribute
// elastic.mapping.mode, the only per-span switch the exporter honors at v0.148.0 (its mapping.mode
// setting is ignored). In ecs mode it also fills what the exporter's ECS encoder leaves out: the
// span duration and the error fields of exception events. See README.md.
package elasticmappingprocessor
