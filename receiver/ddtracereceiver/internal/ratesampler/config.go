package ratesampler

import (
	"errors"
	"fmt"
)

// Config is the receiver's rate_by_service section.
type Config struct {
	// Enabled computes per-(service, env) rates from the traffic and sends them in the replies to
	// /v0.4, /v0.5 and /v0.7, so that tracers keep about target_traces_per_second traces and mark the
	// rest with priority 0. Off: every reply tells tracers to keep everything. Default false.
	Enabled bool `mapstructure:"enabled"`

	// TargetTracesPerSecond is the number of traces per second the tracers sending to this receiver
	// should keep, all (service, env) pairs together: the Datadog Agent's
	// apm_config.max_traces_per_second (its TargetTPS). Each replica computes its own rates, so
	// N replicas behind a load balancer keep about N × this. Default 10.
	TargetTracesPerSecond float64 `mapstructure:"target_traces_per_second"`

	// MaxServices bounds the (service, env) pairs rates are computed for, and with it the memory
	// the rates take (a few hundred bytes a pair). Traces of pairs past the limit count towards the
	// total, and their tracers get the default rate (service:,env:). The agent's
	// max_catalog_entries. Default 5000.
	MaxServices int `mapstructure:"max_services"`

	// prevent unkeyed literal initialization
	_ struct{}
}

// DefaultConfig is off, with the Datadog Agent's target and catalog size.
func DefaultConfig() Config {
	return Config{TargetTracesPerSecond: 10, MaxServices: 5000}
}

const (
	maxTarget   = 1_000_000 // keeping more traces per second than this is not sampling
	maxServices = 1_000_000
)

// Validate checks the bounds; the collector prefixes the errors with rate_by_service::.
func (c *Config) Validate() error {
	var errs []error
	// NaN fails both comparisons, so it is written as the negation of the valid range.
	if !(c.TargetTracesPerSecond > 0 && c.TargetTracesPerSecond <= maxTarget) {
		errs = append(errs, fmt.Errorf("target_traces_per_second must be greater than 0 and at most %d, got %v", maxTarget, c.TargetTracesPerSecond))
	}
	if c.MaxServices < 1 || c.MaxServices > maxServices {
		errs = append(errs, fmt.Errorf("max_services must be between 1 and %d, got %d", maxServices, c.MaxServices))
	}
	return errors.Join(errs...)
}
