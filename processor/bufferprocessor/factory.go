package bufferprocessor

import (
	"context"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/config/configoptional"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/processor"

	"github.com/tracegate/tracegate/processor/bufferprocessor/internal/metadata"
)

// NewFactory returns the factory of the buffer processor.
func NewFactory() processor.Factory {
	return processor.NewFactory(
		metadata.Type,
		createDefaultConfig,
		processor.WithTraces(createTraces, metadata.TracesStability),
		processor.WithLogs(createLogs, metadata.LogsStability),
		processor.WithMetrics(createMetrics, metadata.MetricsStability),
	)
}

func createDefaultConfig() component.Config {
	return &Config{
		Threads:       8,
		QueueSize:     100,
		MaxBatchItems: 0,
		Storage:       configoptional.Default(defaultStorage()),
		WhenFull:      WhenFullRefuse,
		Retry: RetryConfig{
			InitialInterval: time.Second,
			MaxInterval:     maxIntervalDefault,
		},
		ShutdownTimeout: 10 * time.Second,
	}
}

// The processors of the three signals: the same buffer, with the signal's Consume method.
type (
	tracesBuffer struct {
		*bufferProcessor[ptrace.Traces]
	}
	logsBuffer    struct{ *bufferProcessor[plog.Logs] }
	metricsBuffer struct {
		*bufferProcessor[pmetric.Metrics]
	}
)

func (b tracesBuffer) ConsumeTraces(ctx context.Context, td ptrace.Traces) error {
	return b.hold(ctx, td)
}
func (b logsBuffer) ConsumeLogs(ctx context.Context, ld plog.Logs) error { return b.hold(ctx, ld) }
func (b metricsBuffer) ConsumeMetrics(ctx context.Context, md pmetric.Metrics) error {
	return b.hold(ctx, md)
}

func newTracesBuffer(set processor.Settings, cfg *Config, next consumer.Traces) (tracesBuffer, error) {
	p, err := newBuffer(set, cfg, signal[ptrace.Traces](tracesSignal{}), spanTelemetry, next.ConsumeTraces)
	if err != nil {
		return tracesBuffer{}, err
	}
	return tracesBuffer{p}, nil
}

func createTraces(_ context.Context, set processor.Settings, cfg component.Config, next consumer.Traces) (processor.Traces, error) {
	p, err := newTracesBuffer(set, cfg.(*Config), next)
	if err != nil {
		return nil, err
	}
	return p, nil
}

func createLogs(_ context.Context, set processor.Settings, cfg component.Config, next consumer.Logs) (processor.Logs, error) {
	p, err := newBuffer(set, cfg.(*Config), signal[plog.Logs](logsSignal{}), logRecordTelemetry, next.ConsumeLogs)
	if err != nil {
		return nil, err
	}
	return logsBuffer{p}, nil
}

func createMetrics(_ context.Context, set processor.Settings, cfg component.Config, next consumer.Metrics) (processor.Metrics, error) {
	p, err := newBuffer(set, cfg.(*Config), signal[pmetric.Metrics](metricsSignal{}), metricPointTelemetry, next.ConsumeMetrics)
	if err != nil {
		return nil, err
	}
	return metricsBuffer{p}, nil
}
