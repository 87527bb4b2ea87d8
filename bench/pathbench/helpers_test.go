package pathbench

import (
	"context"
	"errors"
	"testing"

	"go.opentelemetry.io/collector/consumer"

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
	return bufferedTo(b, esexportertest.NewExporter(b, url, map[string]any{
		"sending_queue":     map[string]any{"enabled": false},
		"traces_dynamic_id": map[string]any{"enabled": ids},
	}))
}
