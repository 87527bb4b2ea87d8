package ddtracereceiver

import (
	"errors"
	"fmt"
	"net/http"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/config/confighttp"

	"github.com/tracegate/tracegate/internal/httpserve"
	"github.com/tracegate/tracegate/receiver/ddtracereceiver/internal/chunkfilter"
	"github.com/tracegate/tracegate/receiver/ddtracereceiver/internal/obfuscation"
	"github.com/tracegate/tracegate/receiver/ddtracereceiver/internal/ratesampler"
	"github.com/tracegate/tracegate/receiver/ddtracereceiver/internal/translator"
)

// Config configures the ddtrace receiver.
type Config struct {
	// ServerConfig is the HTTP server: endpoint (default localhost:8126; transport unix with a
	// socket path for a Unix socket, as /var/run/datadog/apm.socket), tls, read_timeout (default
	// 5s, the agent's), max_request_body_size (default 25 MiB, the agent's max_payload_size), ...
	confighttp.ServerConfig `mapstructure:",squash"`

	// MaxConcurrentRequests bounds the requests read and decoded at once, and with
	// max_request_body_size the memory they take. Default 4 × GOMAXPROCS (at least 8).
	MaxConcurrentRequests int `mapstructure:"max_concurrent_requests"`

	// QueueTimeout is how long a request may wait for one of those slots (and for decode memory)
	// before it is refused, as the agent's decoder_timeout. Default 1s.
	QueueTimeout time.Duration `mapstructure:"queue_timeout"`

	// DecodeMemoryMiB bounds the memory all requests in progress may decode to, together. Each
	// reserves 64 × its body (what the worst crafted body decodes and translates to, measured:
	// 54 ×; real payloads need a few ×) before decoding, and waits up to queue_timeout for it; a
	// body whose reservation exceeds the whole budget waits to run alone. Without it, concurrent
	// crafted bodies could take max_concurrent_requests × 54 × max_request_body_size. Default 512.
	DecodeMemoryMiB int64 `mapstructure:"decode_memory_mib"`

	// RefusalStatus is the status for a payload the pipeline refused (memory limiter, full buffer)
	// when the tracer did not send Datadog-Send-Real-Http-Status: 200, what the Datadog Agent
	// answers (old tracers treat anything else as a failure and may log or drop noisily), or 429/503.
	// Tracers that send the header always get 429. Refused spans are counted either way. Default 200.
	RefusalStatus int `mapstructure:"refusal_status"`

	// RefusalWait is how long a payload the pipeline refused with a retryable error (memory
	// limiter, full buffer) is offered again, with a short backoff, before the refusal is answered.
	// The Datadog Agent holds a tracer whose payload its pipeline cannot take yet (the handler blocks
	// until it can), so a burst slows tracers down instead of dropping their spans; most tracers
	// never retry a payload. The request keeps its max_concurrent_requests slot meanwhile, so
	// memory stays bounded. 0 answers at once. Default 1s; at most 1m.
	RefusalWait time.Duration `mapstructure:"refusal_wait"`

	// TraceIDCacheSize bounds the cache that resolves 128-bit trace ids for chunks that arrive
	// without the _dd.p.tid tag (entries of 16 bytes). 0 disables it. Default 100000.
	TraceIDCacheSize int `mapstructure:"trace_id_cache_size"`

	// Mapping is how Datadog spans become OpenTelemetry spans: semconv (the default) follows the
	// semantic conventions (span names, attribute names, process facts on the resource only, no
	// tracer bookkeeping); datadogreceiver keeps contrib datadogreceiver's output for those who
	// depend on it.
	Mapping translator.Mapping `mapstructure:"mapping"`

	// StatusOKWithoutError gives spans without an error the status Ok, as contrib's datadogreceiver
	// does; false leaves them Unset, as the OpenTelemetry specification asks. Default: false with
	// the semconv mapping, true with datadogreceiver.
	StatusOKWithoutError *bool `mapstructure:"status_ok_without_error"`

	// AgentVersion is the Datadog Agent version reported in /info and Datadog-Agent-Version.
	// Tracers switch features on by version; 7.65.0 enables what tracegate supports. Default 7.65.0.
	AgentVersion string `mapstructure:"agent_version"`

	// Obfuscation hides SQL literals, cache values, query bodies and card numbers as the Datadog
	// Agent does by default, before spans are translated. On by default; enabled: false turns
	// every rule off.
	Obfuscation obfuscation.Config `mapstructure:"obfuscation"`

	// Filters drop whole chunks by their root span, as the agent's ignore_resources, filter_tags
	// and filter_tags_regex do (the same keys, at the top of this receiver's settings), before
	// anything else looks at them: rate_by_service does not count them and nothing stores them.
	Filters chunkfilter.Config `mapstructure:",squash"`

	// DropRejectedChunks drops the chunks their tracer rejected (sampling priority below 0: a
	// user, a sampling rule such as DD_TRACE_SAMPLE_RATE, a manual drop) right after decoding,
	// before obfuscation and translation: the chunks the tracesampling processor's
	// datadog.honour_priority drops anyway, without the work of translating them. Leave it off
	// where something between this receiver and that processor must see every span (the APM
	// aggregation of configs/elasticsearch/apm*.yaml), or where every chunk is to be stored.
	// rate_by_service counts before it, as before the processor. Default false.
	DropRejectedChunks bool `mapstructure:"drop_rejected_chunks"`

	// RateByService computes the per-service sampling rates the replies to /v0.4, /v0.5 and /v0.7
	// send to tracers, as the Datadog Agent's priority sampler does. Off by default: tracers are
	// told to keep every trace.
	RateByService ratesampler.Config `mapstructure:"rate_by_service"`

	// prevent unkeyed literal initialization
	_ struct{}
}

var _ component.Config = (*Config)(nil)

// statusOKWithoutError is status_ok_without_error, or the mapping's default when unset.
func (cfg *Config) statusOKWithoutError() bool {
	if cfg.StatusOKWithoutError != nil {
		return *cfg.StatusOKWithoutError
	}
	return cfg.Mapping == translator.MappingDatadogReceiver
}

const (
	maxTraceIDCache    = 10_000_000
	maxDecodeMemoryMiB = 1 << 20 // 1 TiB
)

// Validate checks every limit.
func (cfg *Config) Validate() error {
	var errs []error
	errs = append(errs, httpserve.Limits{
		MaxRequestBodySize: cfg.MaxRequestBodySize, MaxConcurrentRequests: cfg.MaxConcurrentRequests,
		QueueTimeout: cfg.QueueTimeout, RefusalWait: cfg.RefusalWait,
	}.Errors()...)
	if cfg.DecodeMemoryMiB < 1 || cfg.DecodeMemoryMiB > maxDecodeMemoryMiB {
		errs = append(errs, fmt.Errorf("decode_memory_mib must be between 1 and %d, got %d", maxDecodeMemoryMiB, cfg.DecodeMemoryMiB))
	}
	switch cfg.RefusalStatus {
	case http.StatusOK, http.StatusTooManyRequests, http.StatusServiceUnavailable:
	default:
		errs = append(errs, fmt.Errorf("refusal_status must be 200, 429 or 503, got %d", cfg.RefusalStatus))
	}
	if cfg.TraceIDCacheSize < 0 || cfg.TraceIDCacheSize > maxTraceIDCache {
		errs = append(errs, fmt.Errorf("trace_id_cache_size must be between 0 and %d, got %d", maxTraceIDCache, cfg.TraceIDCacheSize))
	}
	switch cfg.Mapping {
	case translator.MappingSemconv, translator.MappingDatadogReceiver:
	default:
		errs = append(errs, fmt.Errorf("mapping must be %q or %q, got %q", translator.MappingSemconv, translator.MappingDatadogReceiver, cfg.Mapping))
	}
	if cfg.AgentVersion == "" {
		errs = append(errs, errors.New("agent_version must not be empty"))
	}
	if _, err := chunkfilter.New(cfg.Filters); err != nil {
		// Checked here, not by the section's own Validate: its keys sit at the receiver's top level.
		errs = append(errs, err)
	}
	if cfg.ReadTimeout < 0 {
		errs = append(errs, fmt.Errorf("read_timeout must not be negative, got %s", cfg.ReadTimeout))
	}
	return errors.Join(errs...)
}
