package bufferprocessor

import (
	"context"
	"maps"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/open-telemetry/opentelemetry-collector-contrib/exporter/elasticsearchexporter"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/exporter"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/processor/processortest"

	"github.com/tracegate/tracegate/processor/bufferprocessor/internal/metadata"
)

// BenchmarkSignalPipelineCPU is BenchmarkPipelineCPU for OTLP logs and metrics: process CPU per
// item of "buffer (memory mode) → contrib elasticsearch exporter (sending_queue disabled)" against
// "exporter alone", 100-item batches from 8 producers, the fake Elasticsearch in a child process.
func BenchmarkSignalPipelineCPU(b *testing.B) {
	url := startFakeES(b)
	b.Run("logs", func(b *testing.B) {
		benchSignalPipelineCPU(b, logsTest, benchLogs, func(b *testing.B) func(context.Context, plog.Logs) error {
			return newBenchESSignalExporter(b, url, nil, func(f exporter.Factory, set exporter.Settings, cfg component.Config) (exporter.Logs, error) {
				return f.CreateLogs(context.Background(), set, cfg)
			}).ConsumeLogs
		})
	})
	b.Run("metrics", func(b *testing.B) {
		benchSignalPipelineCPU(b, metricsTest, benchMetrics, func(b *testing.B) func(context.Context, pmetric.Metrics) error {
			return newBenchESSignalExporter(b, url, nil, func(f exporter.Factory, set exporter.Settings, cfg component.Config) (exporter.Metrics, error) {
				return f.CreateMetrics(context.Background(), set, cfg)
			}).ConsumeMetrics
		})
	})
}

// newBenchESSignalExporter is the contrib exporter of the signal create makes, endpoints [url],
// sending_queue disabled (synchronous bulks, as in front of the buffer), plus settings.
func newBenchESSignalExporter[E component.Component](b *testing.B, url string, settings map[string]any,
	create func(exporter.Factory, exporter.Settings, component.Config) (E, error),
) E {
	b.Helper()
	f := elasticsearchexporter.NewFactory()
	cfg := f.CreateDefaultConfig()
	m := map[string]any{
		"endpoints":     []string{url},
		"sending_queue": map[string]any{"enabled": false},
	}
	maps.Copy(m, settings)
	require.NoError(b, confmap.NewFromStringMap(m).Unmarshal(cfg))
	exp, err := create(f, exporter.Settings{
		ID: component.NewID(f.Type()), TelemetrySettings: componenttest.NewNopTelemetrySettings(), BuildInfo: component.NewDefaultBuildInfo(),
	}, cfg)
	require.NoError(b, err)
	require.NoError(b, exp.Start(context.Background(), componenttest.NewNopHost()))
	b.Cleanup(func() { require.NoError(b, exp.Shutdown(context.Background())) })
	return exp
}

// itemCounter counts the items its next consumer accepted; wait blocks until a count is reached.
type itemCounter[T any] struct {
	sig   signal[T]
	next  func(context.Context, T) error
	mu    sync.Mutex
	cond  *sync.Cond
	items int64
}

func newItemCounter[T any](sig signal[T], next func(context.Context, T) error) *itemCounter[T] {
	c := &itemCounter[T]{sig: sig, next: next}
	c.cond = sync.NewCond(&c.mu)
	return c
}

func (c *itemCounter[T]) consume(ctx context.Context, data T) error {
	n := c.sig.items(data)
	if err := c.next(ctx, data); err != nil {
		return err
	}
	c.mu.Lock()
	c.items += n
	c.cond.Broadcast()
	c.mu.Unlock()
	return nil
}

func (c *itemCounter[T]) count() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.items
}

func (c *itemCounter[T]) wait(want int64) {
	c.mu.Lock()
	for c.items < want {
		c.cond.Wait()
	}
	c.mu.Unlock()
}

func benchSignalPipelineCPU[T any](b *testing.B, ts testSignal[T], batch func(n int) T, newExporter func(*testing.B) func(context.Context, T) error) {
	const (
		chunk    = 256
		perBatch = 100
	)
	alone := newItemCounter(ts.sig, newExporter(b))
	behind := newItemCounter(ts.sig, newExporter(b))
	cfg := memCfg()
	cfg.Threads, cfg.QueueSize = pipelineProducers, 10_000
	p, err := newBuffer(processortest.NewNopSettings(metadata.Type), cfg, ts.sig, ts.items, behind.consume)
	require.NoError(b, err)
	require.NoError(b, p.Start(context.Background(), componenttest.NewNopHost()))
	defer func() { require.NoError(b, p.Shutdown(context.Background())) }()

	pool := make([]T, 64)
	for i := range pool {
		pool[i] = batch(perBatch)
	}
	produceItems(b, alone.consume, pool, 64)
	produceItems(b, p.hold, pool, 64)
	behind.wait(64 * perBatch)

	var cpuAlone, cpuBuffer time.Duration
	var items int64
	b.ResetTimer()
	for done := 0; done < b.N; done += chunk {
		n := min(chunk, b.N-done)
		c0 := processCPU(b)
		produceItems(b, alone.consume, pool, n)
		cpuAlone += processCPU(b) - c0

		want := behind.count() + int64(n*perBatch)
		c0 = processCPU(b)
		produceItems(b, p.hold, pool, n)
		behind.wait(want)
		cpuBuffer += processCPU(b) - c0
		items += int64(n * perBatch)
	}
	b.StopTimer()
	a := float64(cpuAlone.Nanoseconds()) / float64(items)
	w := float64(cpuBuffer.Nanoseconds()) / float64(items)
	b.ReportMetric(a, "cpu-ns/item-exporter")
	b.ReportMetric(w, "cpu-ns/item-buffer+exporter")
	b.ReportMetric(100*(w-a)/a, "cpu-%-added")
}

// benchLogs is a batch of n log records as an SDK sends them: a service resource, a body, a few
// attributes, a timestamp.
func benchLogs(n int) plog.Logs {
	ld := plog.NewLogs()
	rl := ld.ResourceLogs().AppendEmpty()
	rl.Resource().Attributes().PutStr("service.name", "checkout")
	sl := rl.ScopeLogs().AppendEmpty()
	now := time.Now()
	for i := range n {
		lr := sl.LogRecords().AppendEmpty()
		lr.SetTimestamp(pcommon.NewTimestampFromTime(now.Add(time.Duration(i))))
		lr.SetSeverityNumber(plog.SeverityNumberInfo)
		lr.SetSeverityText("INFO")
		lr.Body().SetStr("order " + strconv.Itoa(i) + " placed for customer 4711, total 99.90 EUR")
		lr.Attributes().PutStr("http.route", "/api/v1/orders/{id}")
		lr.Attributes().PutInt("order.items", int64(i%7))
	}
	return ld
}

// benchMetrics is a batch of n data points: 10 sums of n/10 points each, one per attribute set.
func benchMetrics(n int) pmetric.Metrics {
	md := pmetric.NewMetrics()
	rm := md.ResourceMetrics().AppendEmpty()
	rm.Resource().Attributes().PutStr("service.name", "checkout")
	sm := rm.ScopeMetrics().AppendEmpty()
	now := pcommon.NewTimestampFromTime(time.Now())
	for m := range 10 {
		metric := sm.Metrics().AppendEmpty()
		metric.SetName("http.server.requests." + strconv.Itoa(m))
		sum := metric.SetEmptySum()
		sum.SetIsMonotonic(true)
		sum.SetAggregationTemporality(pmetric.AggregationTemporalityCumulative)
		for i := range n / 10 {
			dp := sum.DataPoints().AppendEmpty()
			dp.SetTimestamp(now)
			dp.SetIntValue(int64(i))
			dp.Attributes().PutStr("http.route", "/api/v1/orders/"+strconv.Itoa(i))
			dp.Attributes().PutInt("http.response.status_code", 200)
		}
	}
	return md
}
