package bufferprocessor

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/processor/processortest"
	"go.uber.org/zap"

	"github.com/tracegate/tracegate/internal/testbed/cpubench"
	"github.com/tracegate/tracegate/internal/testbed/esexportertest"
	"github.com/tracegate/tracegate/processor/bufferprocessor/internal/metadata"
)

// BenchmarkSignalPipelineCPU is BenchmarkPipelineCPU for OTLP logs and metrics: process CPU per
// item of "buffer (memory mode) → contrib elasticsearch exporter (sending_queue disabled)" against
// "exporter alone", 100-item batches from 8 producers, the fake Elasticsearch in a child process.
func BenchmarkSignalPipelineCPU(b *testing.B) {
	url := cpubench.StartFakeES(b)
	b.Run("logs", func(b *testing.B) {
		benchSignalPipelineCPU(b, logsTest, benchLogs, func(b *testing.B) func(context.Context, plog.Logs) error {
			return esexportertest.NewLogsExporter(b, url, noSendingQueue, zap.NewNop()).ConsumeLogs
		})
	})
	b.Run("metrics", func(b *testing.B) {
		benchSignalPipelineCPU(b, metricsTest, benchMetrics, func(b *testing.B) func(context.Context, pmetric.Metrics) error {
			return esexportertest.NewMetricsExporter(b, url, noSendingQueue, zap.NewNop()).ConsumeMetrics
		})
	})
}

func benchSignalPipelineCPU[T any](b *testing.B, ts testSignal[T], batch func(n int) T, newExporter func(*testing.B) func(context.Context, T) error) {
	const (
		chunk    = 256
		perBatch = 100
	)
	alone := cpubench.NewCounter(ts.sig.items, newExporter(b))
	behind := cpubench.NewCounter(ts.sig.items, newExporter(b))
	cfg := memCfg()
	cfg.Threads, cfg.QueueSize = cpubench.Producers, 10_000
	p, err := newBuffer(processortest.NewNopSettings(metadata.Type), cfg, ts.sig, ts.items, behind.Consume)
	require.NoError(b, err)
	require.NoError(b, p.Start(context.Background(), componenttest.NewNopHost()))
	defer func() { require.NoError(b, p.Shutdown(context.Background())) }()

	pool := make([]T, 64)
	for i := range pool {
		pool[i] = batch(perBatch)
	}
	produceItems(b, alone.Consume, pool, 64)
	produceItems(b, p.hold, pool, 64)
	behind.Wait(64 * perBatch)

	var cpuAlone, cpuBuffer time.Duration
	var items int64
	b.ResetTimer()
	for done := 0; done < b.N; done += chunk {
		n := min(chunk, b.N-done)
		c0 := cpubench.ProcessCPU(b)
		produceItems(b, alone.Consume, pool, n)
		cpuAlone += cpubench.ProcessCPU(b) - c0

		want := behind.Count() + int64(n*perBatch)
		c0 = cpubench.ProcessCPU(b)
		produceItems(b, p.hold, pool, n)
		behind.Wait(want)
		cpuBuffer += cpubench.ProcessCPU(b) - c0
		items += int64(n * perBatch)
	}
	b.StopTimer()
	a := float64(cpuAlone.Nanoseconds()) / float64(items)
	w := float64(cpuBuffer.Nanoseconds()) / float64(items)
	b.ReportMetric(a, "cpu-ns/item-exporter")
	b.ReportMetric(w, "cpu-ns/item-buffer+exporter")
	b.ReportMetric(100*(w-a)/a, "cpu-%-added")
}

// noSendingQueue makes the contrib exporter synchronous, as in front of the buffer.
var noSendingQueue = map[string]any{"sending_queue": map[string]any{"enabled": false}}

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
