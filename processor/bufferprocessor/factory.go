package bufferprocessor

import (
	"context"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/config/configoptional"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/processor"

	"github.com/tracegate/tracegate/processor/bufferprocessor/internal/metadata"
)

// NewFactory returns the factory of the buffer processor.
func NewFactory() processor.Factory {
	return processor.NewFactory(
		metadata.Type,
		createDefaultConfig,
		processor.WithTraces(createTraces, metadata.TracesStability),
	)
}

func createDefaultConfig() component.Config {
	return &Config{
		Threads:       8,
		QueueSize:     100,
		MaxBatchSpans: 0,
		Storage:       configoptional.Default(defaultStorage()),
		WhenFull:      WhenFullRefuse,
		Retry: RetryConfig{
			InitialInterval: time.Second,
			MaxInterval:     30 * time.Second,
		},
		ShutdownTimeout: 10 * time.Second,
	}
}

func createTraces(_ context.Context, set processor.Settings, cfg component.Config, next consumer.Traces) (processor.Traces, error) {
	return newBufferProcessor(set, cfg.(*Config), next)
}
