package durabletailsamplingprocessor

import (
	"context"
	"runtime"
	"testing"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// BenchmarkPendingMemory reports the heap a waiting trace of 10 spans holds, with storage (the
// spans on disk) and without (encoded in memory):
//
//	go test -run '^$' -bench PendingMemory -benchtime 1x .
func BenchmarkPendingMemory(b *testing.B) {
	for _, disk := range []bool{true, false} {
		name := "memory"
		if disk {
			name = "disk"
		}
		b.Run(name, func(b *testing.B) {
			const traces = 20000
			cfg := testConfig(errorsOnly)
			if disk {
				cfg.Storage.Directory, cfg.Storage.Fsync = b.TempDir(), "never"
				cfg.Storage.CapacityMiB, cfg.Storage.SegmentMiB = 1024, 16
			}
			for range b.N {
				p := newTestProcessor(b, cfg, &recordingSink{})
				before := heapInUse()
				for i := range traces {
					require.NoError(b, p.ConsumeTraces(context.Background(), tenSpanTrace(i)))
				}
				after := heapInUse()
				b.ReportMetric(float64(after-before)/traces, "heap-B/trace")
				require.NoError(b, p.Shutdown(context.Background()))
			}
		})
	}
}

func heapInUse() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// tenSpanTrace is a trace of ten spans with a few attributes each, under one resource.
func tenSpanTrace(i int) ptrace.Traces {
	td := ptrace.NewTraces()
	rs := td.ResourceSpans().AppendEmpty()
	rs.Resource().Attributes().PutStr("service.name", "checkout")
	rs.Resource().Attributes().PutStr("host.name", "checkout-7d9f8-x2k4q")
	spans := rs.ScopeSpans().AppendEmpty().Spans()
	for n := range 10 {
		s := spans.AppendEmpty()
		s.SetTraceID(pcommon.TraceID{byte(i), byte(i >> 8), byte(i >> 16), 1})
		s.SetSpanID(pcommon.SpanID{byte(n + 1), byte(i), byte(i >> 8)})
		s.SetName("GET /orders/{id}")
		s.Attributes().PutStr("http.route", "/orders/{id}")
		s.Attributes().PutInt("http.response.status_code", 200)
		s.Attributes().PutStr("url.path", "/orders/12345")
	}
	return td
}
