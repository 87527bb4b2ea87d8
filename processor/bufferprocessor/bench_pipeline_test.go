package bufferprocessor

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/exporter"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/tracegate/tracegate/internal/testbed/cpubench"
	"github.com/tracegate/tracegate/internal/testbed/esexportertest"
)

// TestFakeElasticsearchProcess is the fake Elasticsearch of the CPU benchmarks when this test
// binary is their child process (cpubench.StartFakeES); skipped otherwise.
func TestFakeElasticsearchProcess(t *testing.T) { cpubench.ServeFakeES(t) }

// newBenchESExporter is the contrib exporter for a benchmark: endpoints [url], sending_queue
// disabled (synchronous bulks, as in front of the buffer).
func newBenchESExporter(b *testing.B, url string) exporter.Traces {
	return esexportertest.NewExporter(b, url, map[string]any{"sending_queue": map[string]any{"enabled": false}})
}

// produceItems sends n batches from pool through consume from cpubench.Producers goroutines,
// retrying a refusal of a full buffer the way a client retries a 429.
func produceItems[T any](b *testing.B, consume func(context.Context, T) error, pool []T, n int) {
	b.Helper()
	cpubench.Produce(b, consume, pool, n, func(err error) bool { return errors.Is(err, ErrFull) })
}

// produce is produceItems for a traces consumer.
func produce(b *testing.B, in consumer.Traces, pool []ptrace.Traces, n int) {
	b.Helper()
	produceItems(b, in.ConsumeTraces, pool, n)
}

// BenchmarkPipelineCPU: process CPU per span of "buffer (memory mode) → contrib elasticsearch
// exporter (sending_queue disabled)" against "exporter alone", same spans (100-span batches, 8
// producers; the buffer has threads=8 and max_batch_items 0, so the bulks are the same). The
// Elasticsearch side is a fake bulk responder in a child process, not counted. One op = one batch
// through each pipeline; the two alternate in chunks so that both see the same machine.
func BenchmarkPipelineCPU(b *testing.B) {
	const (
		chunk    = 256
		perBatch = 100
	)
	url := cpubench.StartFakeES(b)
	alone := cpubench.NewTracesCounter(newBenchESExporter(b, url))
	behind := cpubench.NewTracesCounter(newBenchESExporter(b, url))
	cfg := memCfg()
	cfg.Threads, cfg.QueueSize = cpubench.Producers, 10_000
	h := startB(b, cfg, behind)
	defer h.shutdownB(b)

	pool := make([]ptrace.Traces, 64)
	for i := range pool {
		pool[i] = benchTraces(perBatch)
	}
	// Warm both paths (connections, pools) before measuring.
	produce(b, alone, pool, 64)
	produce(b, h.p, pool, 64)
	behind.Wait(64 * perBatch)

	var cpuAlone, cpuBuffer, wallAlone, wallBuffer time.Duration
	var spansAlone, spansBuffer int64
	b.ResetTimer()
	for done := 0; done < b.N; done += chunk {
		n := min(chunk, b.N-done)

		c0, t0 := cpubench.ProcessCPU(b), time.Now()
		produce(b, alone, pool, n)
		cpuAlone += cpubench.ProcessCPU(b) - c0
		wallAlone += time.Since(t0)
		spansAlone += int64(n * perBatch)

		want := behind.Count() + int64(n*perBatch)
		c0, t0 = cpubench.ProcessCPU(b), time.Now()
		produce(b, h.p, pool, n)
		behind.Wait(want)
		cpuBuffer += cpubench.ProcessCPU(b) - c0
		wallBuffer += time.Since(t0)
		spansBuffer += int64(n * perBatch)
	}
	b.StopTimer()
	a := float64(cpuAlone.Nanoseconds()) / float64(spansAlone)
	w := float64(cpuBuffer.Nanoseconds()) / float64(spansBuffer)
	b.ReportMetric(a, "cpu-ns/span-exporter")
	b.ReportMetric(w, "cpu-ns/span-buffer+exporter")
	b.ReportMetric(100*(w-a)/a, "cpu-%-added")
	b.ReportMetric(float64(spansAlone)/wallAlone.Seconds(), "spans/s-exporter")
	b.ReportMetric(float64(spansBuffer)/wallBuffer.Seconds(), "spans/s-buffer+exporter")
}

// sinkCount is a next consumer that only counts spans (optionally after a fixed delay per
// delivery, standing in for a bulk round trip), and tracks the deliveries in flight.
type sinkCount struct {
	delay       time.Duration
	next        consumer.Traces // optional, called after delay
	inFlight    atomic.Int64
	maxInFlight atomic.Int64
	counter     *cpubench.TracesCounter
}

func newSinkCount() *sinkCount { return newSinkCountTo(0, nil) }

func newSinkCountTo(delay time.Duration, next consumer.Traces) *sinkCount {
	s := &sinkCount{delay: delay, next: next}
	s.counter = cpubench.NewTracesCounter(consumerFunc(s.consume))
	return s
}

type consumerFunc func(context.Context, ptrace.Traces) error

func (consumerFunc) Capabilities() consumer.Capabilities { return consumer.Capabilities{} }

func (f consumerFunc) ConsumeTraces(ctx context.Context, td ptrace.Traces) error { return f(ctx, td) }

func (*sinkCount) Capabilities() consumer.Capabilities { return consumer.Capabilities{} }

func (s *sinkCount) ConsumeTraces(ctx context.Context, td ptrace.Traces) error {
	return s.counter.ConsumeTraces(ctx, td)
}

func (s *sinkCount) consume(ctx context.Context, td ptrace.Traces) error {
	n := s.inFlight.Add(1)
	defer s.inFlight.Add(-1)
	raiseMax(&s.maxInFlight, n)
	if s.delay > 0 {
		time.Sleep(s.delay)
	}
	if s.next != nil {
		return s.next.ConsumeTraces(ctx, td)
	}
	return nil
}

func (s *sinkCount) spans() int64 { return s.counter.Count() }

func (s *sinkCount) waitSpans(want int64) { s.counter.Wait(want) }
