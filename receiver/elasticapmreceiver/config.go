package elasticapmreceiver

import (
	"errors"
	"fmt"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/config/confighttp"

	"github.com/tracegate/tracegate/internal/httpserve"
)

// Config configures the elasticapm receiver.
type Config struct {
	// ServerConfig is the HTTP server: endpoint (default localhost:8200, APM Server's port), tls,
	// auth (an authenticator extension checks the agents' secret token or API key),
	// read_timeout (default 30s, APM Server's), max_request_body_size (default 16 MiB of
	// decompressed NDJSON per request; above it 413), ...
	confighttp.ServerConfig `mapstructure:",squash"`

	// MaxEventSize is the largest NDJSON line (one event) taken; a longer one is answered with
	// 400 "event exceeded the permitted size", as APM Server does. Default 300 KiB, APM Server's.
	MaxEventSize int `mapstructure:"max_event_size"`

	// MaxConcurrentRequests bounds the requests decoded at once, and with max_request_body_size
	// the memory they take (a request is held whole until the pipeline took it). Default 4 ×
	// GOMAXPROCS (at least 8).
	MaxConcurrentRequests int `mapstructure:"max_concurrent_requests"`

	// QueueTimeout is how long a request may wait for one of those slots before it is answered
	// with 503. Default 1s.
	QueueTimeout time.Duration `mapstructure:"queue_timeout"`

	// RefusalWait is how long a request the pipeline refused with a retryable error (memory
	// limiter, full buffer) is offered again, with a short backoff, before 503 is answered: Elastic
	// APM agents never resend a request, so a short wait saves their events in a burst. 0 answers at
	// once. Default 1s; at most 1m.
	RefusalWait time.Duration `mapstructure:"refusal_wait"`

	// Output is what the receiver hands on: "otel" (default), the events converted to
	// OpenTelemetry traces, logs and metrics; or "apm_events", APM Server's own events as decoded,
	// every type to the logs pipeline, one log record each (internal/apmevent), for the apmdocs
	// connector that writes them as APM Server's documents (configs/elasticsearch/apm-classic.yaml).
	Output string `mapstructure:"output"`

	// ServerVersion is the APM Server version GET / reports. Agents choose features by it; 9.2.0 is
	// the oldest Elastic Stack tracegate's APM path supports. Default 9.2.0.
	ServerVersion string `mapstructure:"server_version"`

	// prevent unkeyed literal initialization
	_ struct{}
}

var _ component.Config = (*Config)(nil)

const maxEventLimit = 64 << 20

// The outputs.
const (
	OutputOTel      = "otel"
	OutputAPMEvents = "apm_events"
)

// Validate checks every limit.
func (cfg *Config) Validate() error {
	var errs []error
	errs = append(errs, httpserve.Limits{
		MaxRequestBodySize: cfg.MaxRequestBodySize, MaxConcurrentRequests: cfg.MaxConcurrentRequests,
		QueueTimeout: cfg.QueueTimeout, RefusalWait: cfg.RefusalWait,
	}.Errors()...)
	if cfg.MaxEventSize < 1 || cfg.MaxEventSize > maxEventLimit {
		errs = append(errs, fmt.Errorf("max_event_size must be between 1 and %d bytes, got %d", maxEventLimit, cfg.MaxEventSize))
	} else if int64(cfg.MaxEventSize) > cfg.MaxRequestBodySize && cfg.MaxRequestBodySize > 0 {
		errs = append(errs, fmt.Errorf("max_event_size (%d) must not exceed max_request_body_size (%d)", cfg.MaxEventSize, cfg.MaxRequestBodySize))
	}
	if cfg.Output != OutputOTel && cfg.Output != OutputAPMEvents {
		errs = append(errs, fmt.Errorf("output must be %q or %q, got %q", OutputOTel, OutputAPMEvents, cfg.Output))
	}
	if cfg.ServerVersion == "" {
		errs = append(errs, errors.New("server_version must not be empty"))
	}
	if cfg.ReadTimeout < 0 {
		errs = append(errs, fmt.Errorf("read_timeout must not be negative, got %s", cfg.ReadTimeout))
	}
	return errors.Join(errs...)
}
