package elasticmappingprocessor

import (
	"fmt"

	"go.opentelemetry.io/collector/component"
)

// The mapping modes of the elasticsearch exporter (v0.148.0).
const (
	ModeOTel = "otel"
	ModeECS  = "ecs"
	ModeNone = "none"
	ModeRaw  = "raw"
)

// Config configures the processor.
type Config struct {
	// Mode is the mapping every span, log record and metric gets: otel (Elasticsearch 8.16+), ecs (8.12+, with a
	// template for traces-*), none or raw (plain indices, any version). Default otel.
	Mode string `mapstructure:"mode"`
	// ECSDuration adds span.duration.us (the span's duration in microseconds, as ECS and the APM
	// UI expect) in ecs mode, where the exporter writes no duration at all. Default true.
	ECSDuration bool `mapstructure:"ecs_duration"`
	// ECSErrors copies the last exception event of a span into error.type, error.message and
	// error.stack_trace in ecs mode, where the exporter drops span events. Default true.
	ECSErrors bool `mapstructure:"ecs_errors"`
	// DocumentIDs sets elasticsearch.document_id on spans (trace id + span id), on span events in
	// otel mode (the span's id + the event's index) and on log records with a timestamp (a hash
	// of the record, its resource, scope and position), so that with the exporter's
	// traces_dynamic_id and logs_dynamic_id a resent copy is refused (409) instead of stored twice.
	// Default false.
	DocumentIDs bool `mapstructure:"document_ids"`
	// APMInputs gives spans the attributes Elastic's APM enrichment (the elasticapm processor)
	// reads where a receiver delivers them under other names: OpenTracing's db.type, db.instance,
	// message_bus.destination and peer.* tags (Jaeger), Zipkin's IP-only remote endpoint, the
	// service of a fully qualified rpc.method. Existing attributes win. Default false; the Kibana
	// APM overlay turns it on.
	APMInputs bool `mapstructure:"apm_inputs"`

	// prevent unkeyed literal initialization
	_ struct{}
}

var _ component.Config = (*Config)(nil)

// Validate checks the mode.
func (c *Config) Validate() error {
	switch c.Mode {
	case ModeOTel, ModeECS, ModeNone, ModeRaw:
		return nil
	}
	return fmt.Errorf("mode must be one of otel, ecs, none, raw, got %q", c.Mode)
}
