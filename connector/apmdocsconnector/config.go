package apmdocsconnector

import (
	"errors"
	"fmt"
	"time"

	"go.opentelemetry.io/collector/component"
)

// Config configures the apmdocs connector.
type Config struct {
	// Namespace is the data streams' namespace: traces-apm-<namespace>, logs-apm.error-<namespace>,
	// metrics-apm.transaction.1m-<namespace>, ... (APM Server's data_stream.namespace). Default
	// "default".
	Namespace string `mapstructure:"namespace"`

	// Aggregation makes the metricsets Kibana's APM UI reads for its charts.
	Aggregation AggregationConfig `mapstructure:"aggregation"`

	// DropUnsampled leaves out the transactions an agent did not sample (they were counted in the
	// metricsets first), as APM Server does. Default true.
	DropUnsampled bool `mapstructure:"drop_unsampled"`

	// DocumentIDs gives each document an id derived from what it is (a transaction's, span's or
	// error's id; a metricset's window and group), so that Elasticsearch refuses a copy (409)
	// that a replay of the buffer or a client's retry sends again. Default true.
	DocumentIDs bool `mapstructure:"document_ids"`

	// Observer is what the documents say wrote them (observer.*).
	Observer ObserverConfig `mapstructure:"observer"`

	// prevent unkeyed literal initialization
	_ struct{}
}

// AggregationConfig configures the metricsets.
type AggregationConfig struct {
	// Intervals are the windows counted: APM Server's 1m, 10m and 60m by default. Empty: no
	// metricsets (Kibana's APM UI then computes its charts from the transactions, slower).
	Intervals []time.Duration `mapstructure:"intervals"`
	// Delay is how long after a window's end its metricsets are written, for the events still on
	// their way. An event later than that is counted in a second set of documents for its window.
	// Default 10s.
	Delay time.Duration `mapstructure:"delay"`
	// MaxServices is the most services one window counts; more are counted as `_other`. Default
	// 1000.
	MaxServices int `mapstructure:"max_services"`
	// MaxGroups is the most transaction and destination groups one window counts, all services
	// together; more are counted in their service's `_other` group. Default 10000.
	MaxGroups int `mapstructure:"max_groups"`
}

// ObserverConfig names the writer in each document.
type ObserverConfig struct {
	// Hostname is observer.hostname. Default: this host's name.
	Hostname string `mapstructure:"hostname"`
	// Type is observer.type. Default "tracegate".
	Type string `mapstructure:"type"`
	// Version is observer.version, left out by default: the APM integration's pipelines refuse
	// documents of an APM Server newer than the installed integration.
	Version string `mapstructure:"version"`
}

var _ component.Config = (*Config)(nil)

func createDefaultConfig() *Config {
	return &Config{
		Namespace: "default",
		Aggregation: AggregationConfig{
			Intervals: []time.Duration{time.Minute, 10 * time.Minute, time.Hour},
			Delay:     10 * time.Second, MaxServices: 1000, MaxGroups: 10000,
		},
		DropUnsampled: true,
		DocumentIDs:   true,
		Observer:      ObserverConfig{Type: "tracegate"},
	}
}

// Validate checks the namespace and the aggregation's settings.
func (cfg *Config) Validate() error {
	var errs []error
	if err := validNamespace(cfg.Namespace); err != nil {
		errs = append(errs, err)
	}
	a := cfg.Aggregation
	seen := map[time.Duration]bool{}
	for _, d := range a.Intervals {
		if d < time.Second || d%time.Second != 0 {
			errs = append(errs, fmt.Errorf("aggregation.intervals: %s is not a whole number of seconds of at least 1s", d))
		}
		if seen[d] {
			errs = append(errs, fmt.Errorf("aggregation.intervals: %s appears twice", d))
		}
		seen[d] = true
	}
	if a.Delay < 0 {
		errs = append(errs, fmt.Errorf("aggregation.delay must not be negative, got %s", a.Delay))
	}
	if a.MaxServices < 1 {
		errs = append(errs, fmt.Errorf("aggregation.max_services must be at least 1, got %d", a.MaxServices))
	}
	if a.MaxGroups < 1 {
		errs = append(errs, fmt.Errorf("aggregation.max_groups must be at least 1, got %d", a.MaxGroups))
	}
	return errors.Join(errs...)
}

// validNamespace applies Elasticsearch's rules for a data stream namespace.
func validNamespace(ns string) error {
	if ns == "" || len(ns) > 100 {
		return fmt.Errorf("namespace must be 1 to 100 characters, got %q", ns)
	}
	for _, r := range ns {
		switch {
		case r >= 'A' && r <= 'Z':
			return fmt.Errorf("namespace must be lowercase, got %q", ns)
		case r == '-' || r == '\\' || r == '/' || r == '*' || r == '?' || r == '"' || r == '<' || r == '>' ||
			r == '|' || r == ' ' || r == ',' || r == '#' || r == ':':
			return fmt.Errorf("namespace must not contain %q, got %q", r, ns)
		}
	}
	return nil
}
