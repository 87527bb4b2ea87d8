package tracesamplingprocessor

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"time"

	"go.opentelemetry.io/collector/component"
)

// Config configures the processor. Each section applies the semantics of the system it is named
// after; the defaults keep what the Datadog agent and APM Server keep, and turn Datakit's rules off.
type Config struct {
	// Datadog decides the traces of Datadog tracers (spans that carry sampling.priority).
	Datadog DatadogConfig `mapstructure:"datadog"`
	// Datakit applies Datakit's sampler and filters to every trace.
	Datakit DatakitConfig `mapstructure:"datakit"`
	// Elastic decides the transactions of Elastic APM agents.
	Elastic ElasticConfig `mapstructure:"elastic"`

	// prevent unkeyed literal initialization
	_ struct{}
}

// DatadogConfig holds the Datadog agent's decisions on a tracer's trace chunks.
type DatadogConfig struct {
	// HonourPriority drops the chunks the tracer rejected, as the agent does: priority below 0
	// (user reject) always, priority 0 (auto reject) unless the error or the rare sampler keeps it.
	// false stores every chunk. Default true.
	HonourPriority bool `mapstructure:"honour_priority"`
	// ErrorsPerSecond is the error sampler's budget (the agent's apm_config.errors_per_second):
	// priority-0 chunks with an error kept per second, spread over their signatures. 0 keeps none.
	// Default 10.
	ErrorsPerSecond float64 `mapstructure:"errors_per_second"`
	// RareSampler keeps a priority-0 chunk whose top-level span has a signature not seen within
	// the cooldown (the agent's apm_config.enable_rare_sampler). Off by default, as in the agent.
	RareSampler RareSamplerConfig `mapstructure:"rare_sampler"`
}

// RareSamplerConfig is the agent's rare sampler (apm_config.rare_sampler.*).
type RareSamplerConfig struct {
	// Enabled turns the rare sampler on. Default false.
	Enabled bool `mapstructure:"enabled"`
	// TracesPerSecond bounds the chunks it keeps (rare_sampler.tps). Default 5.
	TracesPerSecond float64 `mapstructure:"traces_per_second"`
	// Cooldown is how long a signature stays seen after it was kept (rare_sampler.cooldown).
	// Default 5m.
	Cooldown time.Duration `mapstructure:"cooldown"`
	// Cardinality bounds the signatures remembered per service and env (rare_sampler.cardinality).
	// Default 200.
	Cardinality int `mapstructure:"cardinality"`
}

// DatakitConfig holds Datakit's trace sampler and filters, under Datakit's names.
type DatakitConfig struct {
	// SamplingRate keeps a trace when the low 64 bits of its id modulo 10000 are at most
	// rate × 10000, so every replica keeps the same traces. Traces with an error span and
	// user-kept Datadog traces bypass it. 1 (the default) keeps every trace.
	SamplingRate float64 `mapstructure:"sampling_rate"`
	// CloseResource maps a service name, or "*" for every service, to regular expressions: a
	// trace with any span of that service whose resource matches one of them is dropped.
	CloseResource map[string][]string `mapstructure:"close_resource"`
	// KeepRareResource keeps a trace, bypassing the sampler, when its entry span's service,
	// resource and type were not seen within the last hour. Default false.
	KeepRareResource bool `mapstructure:"keep_rare_resource"`
	// OmitErrStatus drops traces whose web span answered one of these HTTP status codes (as
	// strings, as in Datakit), unless the trace has an error span.
	OmitErrStatus []string `mapstructure:"omit_err_status"`
}

// ElasticConfig holds APM Server's decisions on Elastic APM agents' events.
type ElasticConfig struct {
	// DropUnsampled drops the transactions an agent did not sample (sampled: false, no spans),
	// after the APM aggregation counted them, as APM Server 8.x does. Default true.
	DropUnsampled bool `mapstructure:"drop_unsampled"`
}

var _ component.Config = (*Config)(nil)

const (
	maxPerSecond   = 1_000_000
	maxCardinality = 1_000_000
)

// Validate checks every rate, bound and regular expression.
func (cfg *Config) Validate() error {
	return errors.Join(cfg.Datadog.validate(), cfg.Datakit.validate())
}

func (d *DatadogConfig) validate() error {
	var errs []error
	if d.ErrorsPerSecond < 0 || d.ErrorsPerSecond > maxPerSecond {
		errs = append(errs, fmt.Errorf("datadog.errors_per_second must be between 0 and %d, got %g", maxPerSecond, d.ErrorsPerSecond))
	}
	r := d.RareSampler
	if r.Enabled {
		if r.TracesPerSecond <= 0 || r.TracesPerSecond > maxPerSecond {
			errs = append(errs, fmt.Errorf("datadog.rare_sampler.traces_per_second must be above 0 and at most %d, got %g", maxPerSecond, r.TracesPerSecond))
		}
		if r.Cooldown <= 0 {
			errs = append(errs, fmt.Errorf("datadog.rare_sampler.cooldown must be positive, got %s", r.Cooldown))
		}
		if r.Cardinality < 1 || r.Cardinality > maxCardinality {
			errs = append(errs, fmt.Errorf("datadog.rare_sampler.cardinality must be between 1 and %d, got %d", maxCardinality, r.Cardinality))
		}
	}
	return errors.Join(errs...)
}

func (d *DatakitConfig) validate() error {
	var errs []error
	// 0 would still keep one trace in 10000 (Datakit's comparison is "at most"): a trap, refused.
	if !(d.SamplingRate > 0 && d.SamplingRate <= 1) {
		errs = append(errs, fmt.Errorf("datakit.sampling_rate must be above 0 and at most 1, got %g", d.SamplingRate))
	}
	for service, patterns := range d.CloseResource {
		for _, p := range patterns {
			if _, err := regexp.Compile(p); err != nil {
				errs = append(errs, fmt.Errorf("datakit.close_resource[%q]: %q is not a regular expression: %w", service, p, err))
			}
		}
	}
	for _, s := range d.OmitErrStatus {
		if code, err := strconv.Atoi(s); err != nil || code < 100 || code > 599 {
			errs = append(errs, fmt.Errorf("datakit.omit_err_status: %q is not an HTTP status code", s))
		}
	}
	return errors.Join(errs...)
}
