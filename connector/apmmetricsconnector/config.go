package apmmetricsconnector

import (
	"errors"
	"fmt"
	"time"

	lsmconfig "github.com/elastic/opentelemetry-collector-components/processor/lsmintervalprocessor/config"
)

// Config has the settings of EDOT's elasticapm connector (v0.36.0), under the same keys, so that a
// configuration moves from one to the other by renaming the component, and two of this
// connector's own.
type Config struct {
	// Aggregation is the aggregation store: its directory (in memory when empty), the client
	// metadata keys kept, the intervals and the cardinality limits.
	Aggregation *AggregationConfig `mapstructure:"aggregation"`

	// CustomResourceAttributes are added to every aggregated metric when the item's resource has
	// them. Keep their cardinality low.
	CustomResourceAttributes []string `mapstructure:"custom_resource_attributes"`

	// CustomSpanAttributes are added to the service_transaction, transaction and
	// service_destination metrics when the span has them. Keep their cardinality low.
	CustomSpanAttributes []string `mapstructure:"custom_span_attributes"`

	// FlushInterval is how long items are summed in memory before the sums are merged into the
	// aggregation store. Every merge costs the store a serialization and, later, a merge of its
	// own, so per request (EDOT's way) the store cost more than all the rest of the connector.
	// A flush lands just before every window's edge (20 ms), so the items stay in the window
	// they arrived in.
	FlushInterval time.Duration `mapstructure:"flush_interval"`

	// MaxPendingSeries bounds the series summed in memory: reaching it flushes at once, so memory
	// stays bounded whatever the cardinality; the store's limits then apply.
	MaxPendingSeries int `mapstructure:"max_pending_series"`
}

// AggregationConfig is EDOT's elasticapm connector's aggregation block.
type AggregationConfig struct {
	// Directory keeps the aggregation state on disk; empty: in memory.
	Directory string `mapstructure:"directory"`
	// MetadataKeys are client metadata keys whose values split the aggregation and are kept.
	MetadataKeys []string `mapstructure:"metadata_keys"`
	// Intervals are the aggregation intervals (default 1m, 10m, 60m). Other values are for tests:
	// Kibana reads the 1m, 10m and 60m data streams only.
	Intervals []time.Duration `mapstructure:"intervals"`
	// Limits are the cardinality limits per resource, scope, metric and data point.
	Limits AggregationLimitConfig `mapstructure:"limits"`
}

// AggregationLimitConfig holds the cardinality limit of each level.
type AggregationLimitConfig struct {
	ResourceLimit  LimitConfig `mapstructure:"resource"`
	ScopeLimit     LimitConfig `mapstructure:"scope"`
	MetricLimit    LimitConfig `mapstructure:"metric"`
	DatapointLimit LimitConfig `mapstructure:"datapoint"`
}

// LimitConfig is one cardinality limit; beyond it the store counts into an overflow series.
type LimitConfig struct {
	MaxCardinality int64 `mapstructure:"max_cardinality"`
}

var defaultIntervals = []time.Duration{time.Minute, 10 * time.Minute, 60 * time.Minute}

func createDefaultConfig() *Config {
	return &Config{
		Aggregation: &AggregationConfig{Limits: AggregationLimitConfig{
			ResourceLimit:  LimitConfig{MaxCardinality: 8000},
			ScopeLimit:     LimitConfig{MaxCardinality: 4000},
			MetricLimit:    LimitConfig{MaxCardinality: 4000},
			DatapointLimit: LimitConfig{MaxCardinality: 4000},
		}},
		FlushInterval:    10 * time.Second,
		MaxPendingSeries: 50_000,
	}
}

// Validate checks this connector's own settings and the store's.
func (cfg *Config) Validate() error {
	var errs []error
	if cfg.FlushInterval <= 0 {
		errs = append(errs, fmt.Errorf("flush_interval must be positive, got %s", cfg.FlushInterval))
	}
	if cfg.MaxPendingSeries <= 0 {
		errs = append(errs, fmt.Errorf("max_pending_series must be positive, got %d", cfg.MaxPendingSeries))
	}
	if cfg.Aggregation != nil {
		errs = append(errs, validIntervals(cfg.Aggregation.Intervals)...)
	}
	lsm := cfg.lsmConfig()
	// Every window edge must be a flush, so that items stay in the window they arrived in.
	if len(lsm.Intervals) > 0 && cfg.FlushInterval > 0 && lsm.Intervals[0].Duration%cfg.FlushInterval != 0 {
		errs = append(errs, fmt.Errorf("flush_interval %s must divide the shortest aggregation interval %s",
			cfg.FlushInterval, lsm.Intervals[0].Duration))
	}
	if err := lsm.Validate(); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// validIntervals: whole minutes (the data streams are named after them: a 30s interval would be
// "0m"), increasing, each a multiple of the first (the store's windows nest).
func validIntervals(ivls []time.Duration) []error {
	var errs []error
	for i, d := range ivls {
		switch {
		case d <= 0 || d%time.Minute != 0:
			errs = append(errs, fmt.Errorf("aggregation interval %s is not a whole number of minutes", d))
		case i > 0 && d <= ivls[i-1]:
			errs = append(errs, fmt.Errorf("aggregation intervals must be in increasing order: %s after %s", d, ivls[i-1]))
		case i > 0 && d%ivls[0] != 0:
			errs = append(errs, fmt.Errorf("aggregation interval %s is not a multiple of the first, %s", d, ivls[0]))
		}
	}
	return errs
}

// lsmConfig is the store's configuration, as EDOT's connector builds it (config.go of
// elasticapmconnector v0.36.0, Apache License 2.0): per interval the metricset.interval,
// data_stream.dataset and processor.event attributes; the overflow attributes per level.
func (cfg *Config) lsmConfig() *lsmconfig.Config {
	intervals := defaultIntervals
	if cfg.Aggregation != nil && len(cfg.Aggregation.Intervals) != 0 {
		intervals = cfg.Aggregation.Intervals
	}
	out := &lsmconfig.Config{ExponentialHistogramMaxBuckets: 160}
	for _, i := range intervals {
		out.Intervals = append(out.Intervals, lsmconfig.IntervalConfig{
			Duration: i,
			Statements: []string{
				fmt.Sprintf(`set(attributes["metricset.interval"], "%dm")`, int(i.Minutes())),
				fmt.Sprintf(`set(attributes["data_stream.dataset"], Concat([attributes["metricset.name"], "%dm"], "."))`, int(i.Minutes())),
				`set(attributes["processor.event"], "metric")`,
			},
		})
	}
	if cfg.Aggregation == nil {
		return out
	}
	a := cfg.Aggregation
	out.Directory = a.Directory
	out.MetadataKeys = a.MetadataKeys
	limit := func(l LimitConfig, attrs ...lsmconfig.Attribute) lsmconfig.LimitConfig {
		return lsmconfig.LimitConfig{MaxCardinality: l.MaxCardinality, Overflow: lsmconfig.OverflowConfig{Attributes: attrs}}
	}
	// service.name _other is what the APM UI shows for the overflow of services.
	out.ResourceLimit = limit(a.Limits.ResourceLimit, lsmconfig.Attribute{Key: "service.name", Value: "_other"}, lsmconfig.Attribute{Key: "overflow", Value: "resource"})
	out.ScopeLimit = limit(a.Limits.ScopeLimit, lsmconfig.Attribute{Key: "overflow", Value: "scope"})
	out.MetricLimit = limit(a.Limits.MetricLimit, lsmconfig.Attribute{Key: "overflow", Value: "metric"})
	out.DatapointLimit = limit(a.Limits.DatapointLimit, lsmconfig.Attribute{Key: "overflow", Value: "datapoint"})
	return out
}
