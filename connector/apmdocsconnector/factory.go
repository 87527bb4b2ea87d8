package apmdocsconnector

import (
	"context"
	"sync/atomic"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/connector"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/tracegate/tracegate/connector/apmdocsconnector/internal/metadata"
	"github.com/tracegate/tracegate/internal/sharedcomponent"
)

// NewFactory returns the apmdocs connector factory: every signal becomes documents (logs).
func NewFactory() connector.Factory {
	return connector.NewFactory(metadata.Type, func() component.Config { return createDefaultConfig() },
		connector.WithTracesToLogs(createTracesToLogs, metadata.TracesToLogsStability),
		connector.WithLogsToLogs(createLogsToLogs, metadata.LogsToLogsStability),
		connector.WithMetricsToLogs(createMetricsToLogs, metadata.MetricsToLogsStability))
}

// instances holds one connector per component id and configuration, shared by its sides: one
// aggregation counts the events of every signal (a service's summary is one series).
var instances sharedcomponent.Registry[instanceID, *apmDocs]

type instanceID struct {
	id  component.ID
	cfg *Config
}

// side is one side of the shared connector.
type side struct {
	*apmDocs
	release func()
	next    consumer.Logs
}

func (s *side) Capabilities() consumer.Capabilities { return consumer.Capabilities{MutatesData: false} }

func (s *side) Shutdown(ctx context.Context) error {
	defer s.release()
	return s.sideDown(ctx)
}

func newSide(set connector.Settings, cfg component.Config, next consumer.Logs) (*side, error) {
	key := instanceID{id: set.ID, cfg: cfg.(*Config)}
	c, release, err := instances.Acquire(key, func() (*apmDocs, error) { return newAPMDocs(set, key.cfg) })
	if err != nil {
		return nil, err
	}
	c.addSide(next)
	return &side{apmDocs: c, release: release, next: next}, nil
}

type tracesSide struct{ *side }

func (s tracesSide) ConsumeTraces(ctx context.Context, td ptrace.Traces) error {
	return s.traces(ctx, td, s.next)
}

type logsSide struct{ *side }

func (s logsSide) ConsumeLogs(ctx context.Context, ld plog.Logs) error {
	return s.logs(ctx, ld, s.next)
}

type metricsSide struct{ *side }

func (s metricsSide) ConsumeMetrics(ctx context.Context, md pmetric.Metrics) error {
	return s.metrics(ctx, md, s.next)
}

func createTracesToLogs(_ context.Context, set connector.Settings, cfg component.Config, next consumer.Logs) (connector.Traces, error) {
	s, err := newSide(set, cfg, next)
	return tracesSide{s}, err
}

func createLogsToLogs(_ context.Context, set connector.Settings, cfg component.Config, next consumer.Logs) (connector.Logs, error) {
	s, err := newSide(set, cfg, next)
	return logsSide{s}, err
}

func createMetricsToLogs(_ context.Context, set connector.Settings, cfg component.Config, next consumer.Logs) (connector.Metrics, error) {
	s, err := newSide(set, cfg, next)
	return metricsSide{s}, err
}

// metricsetSink is where the aggregation writes: the first side's next consumer (the sides of
// one connector normally lead to one pipeline).
type metricsetSink struct {
	next atomic.Pointer[consumer.Logs]
}

func (s *metricsetSink) offer(next consumer.Logs) { s.next.CompareAndSwap(nil, &next) }

func (s *metricsetSink) get() consumer.Logs {
	if p := s.next.Load(); p != nil {
		return *p
	}
	return nil
}
