package elasticsearchdocumentsexporter

import (
	"context"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/exporter"
	"go.opentelemetry.io/collector/exporter/exporterhelper"

	"github.com/tracegate/tracegate/exporter/elasticsearchdocumentsexporter/internal/metadata"
)

// NewFactory returns the elasticsearch_documents exporter factory.
func NewFactory() exporter.Factory {
	return exporter.NewFactory(metadata.Type, func() component.Config { return createDefaultConfig() },
		exporter.WithLogs(createLogs, metadata.LogsStability),
		exporter.WithTraces(createTraces, metadata.TracesStability))
}

// createLogs: no queue and no retries of the exporter helper's own: the buffer in front holds
// what failed and sends it again.
func createLogs(ctx context.Context, set exporter.Settings, cfg component.Config) (exporter.Logs, error) {
	e, err := newExporter(set, cfg.(*Config))
	if err != nil {
		return nil, err
	}
	return exporterhelper.NewLogs(ctx, set, cfg, e.consumeLogs,
		exporterhelper.WithStart(e.start),
		exporterhelper.WithShutdown(e.shutdown),
		exporterhelper.WithCapabilities(consumer.Capabilities{MutatesData: false}),
		exporterhelper.WithTimeout(exporterhelper.TimeoutConfig{Timeout: 0}),
	)
}

// createTraces: spans written as OpenTelemetry-native documents; as createLogs, no queue and no
// retries of the helper's own.
func createTraces(ctx context.Context, set exporter.Settings, cfg component.Config) (exporter.Traces, error) {
	e, err := newExporter(set, cfg.(*Config))
	if err != nil {
		return nil, err
	}
	return exporterhelper.NewTraces(ctx, set, cfg, e.consumeTraces,
		exporterhelper.WithStart(e.start),
		exporterhelper.WithShutdown(e.shutdown),
		exporterhelper.WithCapabilities(consumer.Capabilities{MutatesData: false}),
		exporterhelper.WithTimeout(exporterhelper.TimeoutConfig{Timeout: 0}),
	)
}
