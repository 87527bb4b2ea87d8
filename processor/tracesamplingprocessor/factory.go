package tracesamplingprocessor

import (
	"context"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/processor"
	"go.opentelemetry.io/collector/processor/processorhelper"

	"github.com/tracegate/tracegate/processor/tracesamplingprocessor/internal/metadata"
)

// NewFactory returns the tracesampling processor factory.
func NewFactory() processor.Factory {
	return processor.NewFactory(metadata.Type, createDefaultConfig,
		processor.WithTraces(createTraces, metadata.TracesStability))
}

// createDefaultConfig keeps what the Datadog agent and APM Server keep with their defaults;
// Datakit's rules are off until set.
func createDefaultConfig() component.Config {
	return &Config{
		Datadog: DatadogConfig{
			HonourPriority:  true,
			ErrorsPerSecond: 10,
			RareSampler:     RareSamplerConfig{TracesPerSecond: 5, Cooldown: 5 * time.Minute, Cardinality: 200},
		},
		Datakit: DatakitConfig{SamplingRate: 1},
		Elastic: ElasticConfig{DropUnsampled: true},
	}
}

func createTraces(ctx context.Context, set processor.Settings, cfg component.Config, next consumer.Traces) (processor.Traces, error) {
	p, err := newSamplingProcessor(set, cfg.(*Config))
	if err != nil {
		return nil, err
	}
	return processorhelper.NewTraces(ctx, set, cfg, next, p.processTraces,
		processorhelper.WithCapabilities(consumer.Capabilities{MutatesData: true}),
		processorhelper.WithShutdown(p.shutdown))
}
