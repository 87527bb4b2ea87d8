package pathbench

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/processor/processortest"

	"github.com/tracegate/tracegate/internal/testbed/cpubench"
	"github.com/tracegate/tracegate/internal/testbed/esexportertest"
	"github.com/tracegate/tracegate/processor/bufferprocessor"
)

// TestFakeElasticsearchProcess is the fake Elasticsearch of the benchmarks when this test binary
// is their child process (cpubench.StartFakeES); skipped otherwise.
func TestFakeElasticsearchProcess(t *testing.T) { cpubench.ServeFakeES(t) }

// produceItems sends n requests from pool through consume from cpubench.Producers goroutines,
// retrying a refusal of a full buffer the way a client retries a 429.
func produceItems[T any](b *testing.B, consume func(context.Context, T) error, pool []T, n int) {
	b.Helper()
	cpubench.Produce(b, consume, pool, n, func(err error) bool { return errors.Is(err, bufferprocessor.ErrFull) })
}

// bufferedExporter is the buffer in memory mode in front of the contrib exporter (counted,
// sending_queue disabled) into the fake Elasticsearch at url, with or without document ids; both
// are shut down with the benchmark.
func bufferedExporter(b *testing.B, url string, ids bool) (consumer.Traces, *cpubench.TracesCounter) {
	exp := cpubench.NewTracesCounter(esexportertest.NewExporter(b, url, map[string]any{
		"sending_queue":     map[string]any{"enabled": false},
		"traces_dynamic_id": map[string]any{"enabled": ids},
	}))
	f := bufferprocessor.NewFactory()
	cfg := f.CreateDefaultConfig().(*bufferprocessor.Config)
	cfg.Threads, cfg.QueueSize, cfg.MaxBatchItems = cpubench.Producers, 10_000, 2048
	p, err := f.CreateTraces(b.Context(), processortest.NewNopSettings(f.Type()), cfg, exp)
	require.NoError(b, err)
	require.NoError(b, p.Start(context.Background(), componenttest.NewNopHost()))
	b.Cleanup(func() { require.NoError(b, p.Shutdown(context.Background())) })
	return p, exp
}
