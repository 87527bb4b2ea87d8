package datakitreceiver

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/config/confighttp"

	"github.com/tracegate/tracegate/internal/httpserve"
	"github.com/tracegate/tracegate/receiver/ddtracereceiver"
)

// Config configures the datakit receiver.
type Config struct {
	// ServerConfig is the one HTTP server every route is served on: endpoint (default
	// localhost:9529, Datakit's http_api.listen), max_request_body_size (default 32 MiB), tls, ...
	confighttp.ServerConfig `mapstructure:",squash"`

	// MaxConcurrentRequests bounds the Jaeger, Zipkin and OpenTelemetry requests read and decoded
	// at once, and with max_request_body_size the memory they take (Datadog tracers' requests are
	// bounded by ddtrace.max_concurrent_requests). Default 4 × GOMAXPROCS, at least 8.
	MaxConcurrentRequests int `mapstructure:"max_concurrent_requests"`

	// QueueTimeout is how long such a request may wait for a slot before it is answered 429.
	// Default 1s.
	QueueTimeout time.Duration `mapstructure:"queue_timeout"`

	// RefusalWait is how long data the pipeline refused for a moment (memory limiter, full buffer)
	// is offered again before the refusal is answered with 429: Jaeger and Zipkin clients never
	// resend. 0 answers at once. Default 1s; at most 1m.
	RefusalWait time.Duration `mapstructure:"refusal_wait"`

	// Paths are the routes of the Jaeger, Zipkin and OpenTelemetry inputs, Datakit's by default.
	Paths Paths `mapstructure:"paths"`

	// DDTrace is the ddtrace receiver's settings for Datadog tracers' routes (/v0.3 to /v0.7,
	// /info): mapping, obfuscation, filters, drop_rejected_chunks, rate_by_service, limits. Its
	// endpoint is not used.
	// refusal_status defaults to 429 here: a refused payload is never answered as taken.
	DDTrace *ddtracereceiver.Config `mapstructure:"ddtrace"`

	// prevent unkeyed literal initialization
	_ struct{}
}

// Paths are the routes of Datakit's Jaeger, Zipkin and OpenTelemetry inputs.
type Paths struct {
	// Jaeger takes Thrift binary batches, as jaeger clients' HTTP senders post them (Datakit's
	// jaeger endpoint). Default /apis/traces.
	Jaeger string `mapstructure:"jaeger"`
	// ZipkinV1 takes Zipkin v1 JSON or Thrift spans (Datakit's pathV1). Default /api/v1/spans.
	ZipkinV1 string `mapstructure:"zipkin_v1"`
	// ZipkinV2 takes Zipkin v2 JSON or protobuf spans (Datakit's pathV2). Default /api/v2/spans.
	ZipkinV2 string `mapstructure:"zipkin_v2"`
	// OTLPPrefix is put before OTLP/HTTP's /v1/traces, /v1/metrics and /v1/logs. Default /otel.
	OTLPPrefix string `mapstructure:"otlp_prefix"`
}

var _ component.Config = (*Config)(nil)

// Validate checks the limits, the paths, and the ddtrace section.
func (cfg *Config) Validate() error {
	errs := httpserve.Limits{
		MaxRequestBodySize: cfg.MaxRequestBodySize, MaxConcurrentRequests: cfg.MaxConcurrentRequests,
		QueueTimeout: cfg.QueueTimeout, RefusalWait: cfg.RefusalWait,
	}.Errors()
	errs = append(errs, cfg.Paths.validate()...)
	if cfg.DDTrace == nil {
		errs = append(errs, errors.New("ddtrace: must not be empty"))
	} else if err := cfg.DDTrace.Validate(); err != nil {
		errs = append(errs, fmt.Errorf("ddtrace: %w", err))
	}
	return errors.Join(errs...)
}

// validate checks that every route is absolute and that no two collide, with each other or with
// the Datadog tracers' routes.
func (p Paths) validate() []error {
	var errs []error
	seen := map[string]string{}
	for _, r := range p.routes() {
		switch {
		case !strings.HasPrefix(r.path, "/"):
			errs = append(errs, fmt.Errorf("paths::%s must start with /, got %q", r.key, r.path))
		case seen[r.path] != "":
			errs = append(errs, fmt.Errorf("paths::%s: %s is also paths::%s", r.key, r.path, seen[r.path]))
		case isDDTracePath(r.path):
			errs = append(errs, fmt.Errorf("paths::%s: %s is a Datadog tracers' route", r.key, r.path))
		}
		seen[r.path] = r.key
	}
	return errs
}

// isDDTracePath tells whether path is served by the ddtrace intake.
func isDDTracePath(path string) bool {
	for _, prefix := range []string{"/v0.", "/info", "/telemetry/", "/dogstatsd/", "/api/v0.2/"} {
		if strings.HasPrefix(path, prefix) {
			return true
		}
	}
	return false
}
