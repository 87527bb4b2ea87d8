package elasticmappingprocessor

import (
	"context"
	"strconv"
	"testing"

	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/processor/processortest"

	"github.com/tracegate/tracegate/processor/elasticmappingprocessor/internal/metadata"
)

// benchTraces is a decoded OTLP request: 100 spans with 10 attributes each, every attribute map
// exactly as long as it is (as the OTLP decoder leaves it).
func benchTraces() ptrace.Traces {
	td := ptrace.NewTraces()
	spans := td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans()
	for i := range 100 {
		s := spans.AppendEmpty()
		s.SetTraceID(pcommon.TraceID{1, byte(i)})
		s.SetSpanID(pcommon.SpanID{2, byte(i)})
		attrs := s.Attributes()
		attrs.EnsureCapacity(10)
		for j := range 10 {
			attrs.PutStr("attribute."+strconv.Itoa(j), "value")
		}
	}
	return td
}

// BenchmarkProcessTraces: what the mapping costs per 100-span request, with and without ids. Each
// iteration copies the request first (a processor mutates it); "copy only" is that cost alone.
func BenchmarkProcessTraces(b *testing.B) {
	template := benchTraces()
	b.Run("copy only", func(b *testing.B) {
		b.ReportAllocs()
		for range b.N {
			td := ptrace.NewTraces()
			template.CopyTo(td)
		}
	})
	for _, ids := range []bool{false, true} {
		b.Run("document_ids="+strconv.FormatBool(ids), func(b *testing.B) {
			p, err := NewFactory().CreateTraces(context.Background(), processortest.NewNopSettings(metadata.Type),
				&Config{Mode: ModeOTel, DocumentIDs: ids}, consumertest.NewNop())
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			for range b.N {
				td := ptrace.NewTraces()
				template.CopyTo(td)
				if err := p.ConsumeTraces(context.Background(), td); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
