package durabletailsamplingprocessor

import (
	"context"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/processor"

	"github.com/tracegate/tracegate/processor/durabletailsamplingprocessor/internal/metadata"
)

// NewFactory returns the durable_tail_sampling processor factory.
func NewFactory() processor.Factory {
	return processor.NewFactory(metadata.Type, createDefaultConfig,
		processor.WithTraces(createTraces, metadata.TracesStability))
}

// createDefaultConfig decides 10 s after a trace's last span and holds at most 256 MiB of encoded
// spans in memory; policies have no default: the user says what to keep
// (configs/sampling/tail.yaml has tracegate's).
func createDefaultConfig() component.Config {
	return &Config{
		DecisionWait:            10 * time.Second,
		MaxTraceWait:            time.Minute,
		NumTraces:               100_000,
		ExpectedNewTracesPerSec: 1000,
		MaxPendingMiB:           256,
		DecisionCache: DecisionCacheConfig{
			SampledCacheSize:    100_000,
			NonSampledCacheSize: 100_000,
			TTL:                 5 * time.Minute,
		},
		Storage: StorageConfig{Fsync: "interval", FsyncInterval: 100 * time.Millisecond, CapacityMiB: 2048, SegmentMiB: 16},
	}
}

func createTraces(_ context.Context, set processor.Settings, cfg component.Config, next consumer.Traces) (processor.Traces, error) {
	return newTailProcessor(set, cfg.(*Config), next)
}
