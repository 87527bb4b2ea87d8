package apmmetricsconnector

import (
	"context"
	"sync/atomic"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/connector"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/pdata/pmetric"

	"github.com/tracegate/tracegate/connector/apmmetricsconnector/internal/metadata"
	"github.com/tracegate/tracegate/internal/sharedcomponent"
)

// NewFactory returns the apmmetrics connector factory. Its sides keep their signal: a pipeline
// graph makes a side for every pair of an exporting and a receiving pipeline whose signals the
// factory connects, so a traces to metrics side would sit next to the traces to traces one, and
// the fan-out in front of the two would copy every batch.
func NewFactory() connector.Factory {
	return connector.NewFactory(metadata.Type, func() component.Config { return createDefaultConfig() },
		connector.WithTracesToTraces(createTracesToTraces, metadata.TracesToTracesStability),
		connector.WithLogsToLogs(createLogsToLogs, metadata.LogsToLogsStability),
		connector.WithMetricsToMetrics(createMetricsToMetrics, metadata.MetricsToMetricsStability))
}

// instances holds one connector per component id and configuration, shared by its sides (one
// store: a second on the same directory would find it locked, and the service summary of spans
// and logs is one series). Each side holds it until its shutdown, so that a new pipeline graph (a
// reload) builds a new one.
var instances sharedcomponent.Registry[instanceID, *apmMetrics]

type instanceID struct {
	id  component.ID
	cfg *Config
}

// shared is one side of a shared connector.
type shared struct {
	*apmMetrics
	release func()
	side    string
}

func (s *shared) Shutdown(ctx context.Context) error {
	s.release()
	return s.sideDown(ctx, s.side)
}

// metricsSink is the store's next consumer: the metrics to metrics side's. The sides are created
// in any order, so the store is made before it is known; Start checks there is one.
type metricsSink struct {
	next atomic.Pointer[consumer.Metrics]
}

func (s *metricsSink) set(next consumer.Metrics) { s.next.Store(&next) }

func (s *metricsSink) isSet() bool { return s.next.Load() != nil }

func (s *metricsSink) ConsumeMetrics(ctx context.Context, md pmetric.Metrics) error {
	next := s.next.Load()
	if next == nil {
		return errNoMetricsToMetrics
	}
	return (*next).ConsumeMetrics(ctx, md)
}

func (s *metricsSink) Capabilities() consumer.Capabilities {
	return consumer.Capabilities{MutatesData: true}
}

// The sides: the pipeline types a side connects.
const (
	tracesToTraces   = "traces to traces"
	logsToLogs       = "logs to logs"
	metricsToMetrics = "metrics to metrics"
)

// newSide registers a side of the instance; Start checks a metrics to metrics side is among them.
func newSide(ctx context.Context, set connector.Settings, cfg component.Config, side string) (*shared, error) {
	key := instanceID{id: set.ID, cfg: cfg.(*Config)}
	c, release, err := instances.Acquire(key, func() (*apmMetrics, error) { return newAPMMetrics(ctx, set, key.cfg) })
	if err != nil {
		return nil, err
	}
	c.addSide()
	return &shared{apmMetrics: c, release: release, side: side}, nil
}

func createTracesToTraces(ctx context.Context, set connector.Settings, cfg component.Config, next consumer.Traces) (connector.Traces, error) {
	s, err := newSide(ctx, set, cfg, tracesToTraces)
	if err != nil {
		return nil, err
	}
	return &tracesForwarder{shared: s, next: next}, nil
}

func createLogsToLogs(ctx context.Context, set connector.Settings, cfg component.Config, next consumer.Logs) (connector.Logs, error) {
	s, err := newSide(ctx, set, cfg, logsToLogs)
	if err != nil {
		return nil, err
	}
	return &logsForwarder{shared: s, next: next}, nil
}

// createMetricsToMetrics: the side hands the metrics it is given on uncounted, and the store
// exports the aggregated metrics to the same next consumer.
func createMetricsToMetrics(ctx context.Context, set connector.Settings, cfg component.Config, next consumer.Metrics) (connector.Metrics, error) {
	s, err := newSide(ctx, set, cfg, metricsToMetrics)
	if err != nil {
		return nil, err
	}
	s.sink.set(next)
	return &metricsForwarder{shared: s, next: next}, nil
}
