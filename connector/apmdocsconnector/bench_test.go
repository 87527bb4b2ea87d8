package apmdocsconnector

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// tenSpans is a request of 10 spans: a server root, 9 children (HTTP and database calls,
// internal work), as tracegen sends them.
func tenSpans(at time.Time) ptrace.Traces {
	td := httpTrace(at)
	spans := td.ResourceSpans().At(0).ScopeSpans().At(0).Spans()
	child := spans.At(1)
	for i := 2; i < 10; i++ {
		s := spans.AppendEmpty()
		child.CopyTo(s)
		s.SetSpanID(pcommon.SpanID{byte(i)})
		if i%2 == 0 {
			s.Attributes().Clear()
			s.SetKind(ptrace.SpanKindInternal)
			s.SetName("render")
		}
	}
	return td
}

// BenchmarkTraces: a 10-span request through the traces side, into documents (the aggregation
// on), per span. `go test -run '^$' -bench Traces -benchmem`.
func BenchmarkTraces(b *testing.B) {
	for _, agg := range []bool{true, false} {
		name := "aggregation"
		if !agg {
			name = "documents only"
		}
		b.Run(name, func(b *testing.B) {
			cfg := createDefaultConfig()
			if !agg {
				cfg.Aggregation.Intervals = nil
			}
			c, err := newAPMDocs(connectortestSettings(), cfg)
			require.NoError(b, err)
			td := tenSpans(time.Now())
			sink := consumertest.NewNop()
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				if err := c.traces(context.Background(), td, sink); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*10), "ns/span")
		})
	}
}
