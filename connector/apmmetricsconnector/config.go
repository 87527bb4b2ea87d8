package apmmetricsconnector

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	lsmconfig "github.com/elastic/opentelemetry-collector-components/processor/lsmintervalprocessor/config"
	"go.opentelemetry.io/collector/component"
)

var _ component.Config = (*Config)(nil)

// Config of the apmmetrics connector. The keys under `aggregation` and the two custom attribute
// lists are the ones EDOT's elasticapm connector reads, so a configuration written for it works
// here after renaming the component; flush_interval and max_pending_series are tracegate's.
type Config struct {
	// Aggregation configures the store that holds the open windows (the lsminterval processor
	// tracegate runs inside the connector). Default: in memory, 1m/10m/60m, the limits below.
	Aggregation *Aggregation `mapstructure:"aggregation"`

	// CustomResourceAttributes names resource attributes copied onto every aggregated metric of
	// a resource that has them. Each distinct value is a series of its own: use attributes with
	// few values (a namespace, a region). Default: none.
	CustomResourceAttributes []string `mapstructure:"custom_resource_attributes"`

	// CustomSpanAttributes names span attributes that split the service_transaction,
	// transaction and service_destination metrics (not the service summary) when a span has
	// them; the same cardinality warning applies. Default: none.
	CustomSpanAttributes []string `mapstructure:"custom_span_attributes"`

	// FlushInterval (a duration, default 10s) is how long counts are summed in memory before
	// they are handed to the store in one batch per series. Each hand-over costs the store a
	// merge, so longer is cheaper at high cardinality; what is pending is lost in a crash, so
	// shorter loses less. It must divide the shortest aggregation interval: the loop flushes just
	// before each multiple of it, so every window edge is preceded by a flush.
	FlushInterval time.Duration `mapstructure:"flush_interval"`

	// MaxPendingSeries (a count, default 50000) caps the series summed in memory between two
	// flushes; reaching it flushes at once. At roughly 2.5 KB a series the default holds memory
	// to about 125 MB whatever the cardinality of the traffic.
	MaxPendingSeries int `mapstructure:"max_pending_series"`
}

// Aggregation is the store's part of the configuration.
type Aggregation struct {
	// Directory, when set, is where the store keeps its open windows on disk, so that a restart
	// resumes them. Default: empty, the windows live in memory and a crash loses them.
	Directory string `mapstructure:"directory"`

	// MetadataKeys are client metadata keys (an HTTP header or gRPC metadata a receiver keeps,
	// such as a tenant) whose values keep aggregates apart and travel with the exported
	// metrics. Case-insensitive, no duplicates. Default: none.
	MetadataKeys []string `mapstructure:"metadata_keys"`

	// Intervals are the window lengths, each a whole number of minutes: increasing, each a
	// multiple of the first, at most 24h. Default: 1m, 10m, 60m, the only ones Kibana's APM UI
	// reads (the data streams are named after them, e.g. transaction.1m).
	Intervals []time.Duration `mapstructure:"intervals"`

	// Limits cap the distinct series of each level per window.
	Limits AggregationLimits `mapstructure:"limits"`
}

// AggregationLimits holds one cap per level of the metric hierarchy. Once a level is full, new
// members are counted into one overflow member (service.name "_other" for resources, an
// "overflow" attribute naming the level for all), so totals stay right and memory stays bounded.
type AggregationLimits struct {
	// Resource: distinct resources (roughly services and their instances). Default 8000.
	Resource CardinalityLimit `mapstructure:"resource"`
	// Scope: distinct scopes per resource. Default 4000.
	Scope CardinalityLimit `mapstructure:"scope"`
	// Metric: distinct metrics per scope. Default 4000.
	Metric CardinalityLimit `mapstructure:"metric"`
	// Datapoint: distinct attribute sets per metric (e.g. transaction names). Default 4000.
	Datapoint CardinalityLimit `mapstructure:"datapoint"`
}

// CardinalityLimit is one level's cap.
type CardinalityLimit struct {
	// MaxCardinality is the number of distinct members kept per window; 0 means no cap.
	MaxCardinality int64 `mapstructure:"max_cardinality"`
}

const (
	// Below a second the store would be merging almost every request again, which is the cost
	// the in-memory sums exist to avoid.
	minFlushInterval = time.Second
	// Ten million series at ~2.5 KB each is 25 GB: a larger value is a typo, not a sizing.
	maxPendingSeriesLimit = 10_000_000
	// A window is held until it ends; past a day nothing reads it.
	maxInterval = 24 * time.Hour
	// Buckets of the exported latency histograms, the size OpenTelemetry's SDKs default to.
	histogramBuckets = 160
)

var defaultIntervals = []time.Duration{time.Minute, 10 * time.Minute, time.Hour}

func createDefaultConfig() *Config {
	return &Config{
		Aggregation: &Aggregation{Limits: AggregationLimits{
			Resource:  CardinalityLimit{MaxCardinality: 8000},
			Scope:     CardinalityLimit{MaxCardinality: 4000},
			Metric:    CardinalityLimit{MaxCardinality: 4000},
			Datapoint: CardinalityLimit{MaxCardinality: 4000},
		}},
		FlushInterval:    10 * time.Second,
		MaxPendingSeries: 50_000,
	}
}

// intervals are the configured window lengths, or the defaults.
func (cfg *Config) intervals() []time.Duration {
	if cfg.Aggregation != nil && len(cfg.Aggregation.Intervals) > 0 {
		return cfg.Aggregation.Intervals
	}
	return defaultIntervals
}

// Validate refuses a configuration the connector could not run as written; every error names
// its key and the value found.
func (cfg *Config) Validate() error {
	var errs []error
	switch {
	case cfg.FlushInterval < minFlushInterval:
		errs = append(errs, fmt.Errorf("flush_interval must be at least %s, got %s", minFlushInterval, cfg.FlushInterval))
	case cfg.intervals()[0]%cfg.FlushInterval != 0:
		errs = append(errs, fmt.Errorf("flush_interval must divide the shortest of aggregation.intervals (%s), got %s",
			cfg.intervals()[0], cfg.FlushInterval))
	}
	if cfg.MaxPendingSeries < 1 || cfg.MaxPendingSeries > maxPendingSeriesLimit {
		errs = append(errs, fmt.Errorf("max_pending_series must be between 1 and %d, got %d", maxPendingSeriesLimit, cfg.MaxPendingSeries))
	}
	errs = append(errs, checkNames("custom_resource_attributes", cfg.CustomResourceAttributes)...)
	errs = append(errs, checkNames("custom_span_attributes", cfg.CustomSpanAttributes)...)
	if a := cfg.Aggregation; a != nil {
		errs = append(errs, checkIntervals(a.Intervals)...)
		errs = append(errs, checkNames("aggregation.metadata_keys", a.MetadataKeys)...)
		for _, l := range []struct {
			key   string
			limit CardinalityLimit
		}{
			{"resource", a.Limits.Resource},
			{"scope", a.Limits.Scope},
			{"metric", a.Limits.Metric},
			{"datapoint", a.Limits.Datapoint},
		} {
			if l.limit.MaxCardinality < 0 {
				errs = append(errs, fmt.Errorf("aggregation.limits.%s.max_cardinality must be 0 (no cap) or more, got %d",
					l.key, l.limit.MaxCardinality))
			}
		}
	}
	if len(errs) == 0 {
		// The store's own checks, in case a newer release of it adds some.
		if err := cfg.storeConfig().Validate(); err != nil {
			errs = append(errs, fmt.Errorf("aggregation: %w", err))
		}
	}
	return errors.Join(errs...)
}

// checkIntervals: window lengths end up in data stream names as whole minutes ("1m"), and the
// store's windows must nest, so each is a multiple of the first.
func checkIntervals(ivls []time.Duration) []error {
	var errs []error
	for i, d := range ivls {
		switch {
		case d < time.Minute || d > maxInterval || d%time.Minute != 0:
			errs = append(errs, fmt.Errorf("aggregation.intervals must be whole minutes from 1m to %s, got %s", maxInterval, d))
		case i > 0 && d <= ivls[i-1]:
			errs = append(errs, fmt.Errorf("aggregation.intervals must increase, got %s after %s", d, ivls[i-1]))
		case i > 0 && d%ivls[0] != 0:
			errs = append(errs, fmt.Errorf("aggregation.intervals must be multiples of the first (%s), got %s", ivls[0], d))
		}
	}
	return errs
}

// checkNames: an empty name matches nothing and a repeated one (client metadata keys compare
// without case) would be read twice.
func checkNames(key string, names []string) []error {
	var errs []error
	seen := make(map[string]bool, len(names))
	for _, n := range names {
		folded := strings.ToLower(n)
		switch {
		case n == "":
			errs = append(errs, fmt.Errorf("%s must not hold an empty name", key))
		case seen[folded]:
			errs = append(errs, fmt.Errorf("%s names %q twice", key, n))
		}
		seen[folded] = true
	}
	return errs
}

// storeConfig translates this configuration into the store's. Besides what the user set, each
// interval gets OTTL statements that the store runs on every data point it exports for that
// interval: the connector sums a series once for all intervals, so only the store knows, when it
// exports, which interval a point belongs to. The statements write what Kibana's APM UI and the
// Elasticsearch exporter read: metricset.interval ("1m"), data_stream.dataset (the metricset
// name and the interval, e.g. "transaction.1m", which routes the document to its data stream)
// and processor.event ("metric", like every APM metric document).
func (cfg *Config) storeConfig() *lsmconfig.Config {
	out := &lsmconfig.Config{ExponentialHistogramMaxBuckets: histogramBuckets}
	for _, d := range cfg.intervals() {
		out.Intervals = append(out.Intervals, lsmconfig.IntervalConfig{Duration: d, Statements: intervalStatements(d)})
	}
	a := cfg.Aggregation
	if a == nil {
		return out
	}
	out.Directory, out.MetadataKeys = a.Directory, a.MetadataKeys
	limit := func(l CardinalityLimit, level string) lsmconfig.LimitConfig {
		tag := []lsmconfig.Attribute{{Key: "overflow", Value: level}}
		return lsmconfig.LimitConfig{MaxCardinality: l.MaxCardinality, Overflow: lsmconfig.OverflowConfig{Attributes: tag}}
	}
	out.ResourceLimit = limit(a.Limits.Resource, "resource")
	out.ScopeLimit = limit(a.Limits.Scope, "scope")
	out.MetricLimit = limit(a.Limits.Metric, "metric")
	out.DatapointLimit = limit(a.Limits.Datapoint, "datapoint")
	// The APM UI lists the resources beyond the cap as one service named "_other".
	out.ResourceLimit.Overflow.Attributes = slices.Insert(out.ResourceLimit.Overflow.Attributes, 0,
		lsmconfig.Attribute{Key: "service.name", Value: "_other"})
	return out
}

// intervalStatements are the OTTL statements the store runs on a data point of the d window.
func intervalStatements(d time.Duration) []string {
	label := fmt.Sprintf("%dm", d/time.Minute)
	return []string{
		`set(attributes["metricset.interval"], "` + label + `")`,
		`set(attributes["data_stream.dataset"], Format("%s.` + label + `", [attributes["metricset.name"]]))`,
		`set(attributes["processor.event"], "metric")`,
	}
}
