package elasticmappingprocessor

import (
	"context"
	"fmt"
	"strconv"
	"testing"

	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/processor/processortest"

	"github.com/tracegate/tracegate/processor/elasticmappingprocessor/internal/metadata"
)

// benchTraces is an OTLP request: 100 spans with 10 attributes each.
func benchTraces(b *testing.B) []byte {
	td := ptrace.NewTraces()
	spans := td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans()
	for i := range 100 {
		s := spans.AppendEmpty()
		s.SetTraceID(pcommon.TraceID{1, byte(i)})
		s.SetSpanID(pcommon.SpanID{2, byte(i)})
		attrs := s.Attributes()
		for j := range 10 {
			attrs.PutStr("attribute."+strconv.Itoa(j), "value")
		}
	}
	req, err := (&ptrace.ProtoMarshaler{}).MarshalTraces(td)
	if err != nil {
		b.Fatal(err)
	}
	return req
}

// decode is what the OTLP receiver hands on: its decoder appends, so a map of 10 has room for 16.
func decode(b *testing.B, req []byte) ptrace.Traces {
	td, err := (&ptrace.ProtoUnmarshaler{}).UnmarshalTraces(req)
	if err != nil {
		b.Fatal(err)
	}
	return td
}

// BenchmarkProcessTraces: what the mapping costs per 100-span request, with and without ids. Each
// iteration decodes the request first (a processor mutates it); "decode only" is that cost alone.
func BenchmarkProcessTraces(b *testing.B) {
	req := benchTraces(b)
	b.Run("decode only", func(b *testing.B) {
		b.ReportAllocs()
		for range b.N {
			decode(b, req)
		}
	})
	for _, cfg := range []Config{
		{Mode: ModeOTel},
		{Mode: ModeOTel, DocumentIDs: true},
		{Mode: ModeOTel, DocumentIDs: true, APMInputs: true},
	} {
		b.Run(fmt.Sprintf("document_ids=%t,apm_inputs=%t", cfg.DocumentIDs, cfg.APMInputs), func(b *testing.B) {
			p, err := NewFactory().CreateTraces(context.Background(), processortest.NewNopSettings(metadata.Type),
				&cfg, consumertest.NewNop())
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			for range b.N {
				if err := p.ConsumeTraces(context.Background(), decode(b, req)); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
