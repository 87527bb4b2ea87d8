package translator

import (
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/tracegate/tracegate/receiver/ddtracereceiver/internal/payload"
)

// TestAttrWriterMatchesPut: collected attributes (above manyAttributes) come out exactly as
// pcommon.Map's Put calls would leave them: order of first appearance, last value and type of a
// repeated key, every value type.
func TestAttrWriterMatchesPut(t *testing.T) {
	for _, n := range []int{3, manyAttributes, manyAttributes + 1, 1000} {
		t.Run(strconv.Itoa(n), func(t *testing.T) {
			want, got := pcommon.NewMap(), pcommon.NewMap()
			w := newAttrWriter(got, n)
			for i := range n {
				k := fmt.Sprintf("k%d", i%(n/2+1)) // the second half repeats the first half's keys
				switch i % 6 {
				case 0:
					want.PutStr(k, fmt.Sprint("v", i))
					w.putStr(k, fmt.Sprint("v", i))
				case 1:
					want.PutInt(k, int64(-i))
					w.putInt(k, int64(-i))
				case 2:
					want.PutDouble(k, float64(i)+0.5)
					w.putDouble(k, float64(i)+0.5)
				case 3:
					want.PutEmptyBytes(k).FromRaw([]byte{byte(i), 0})
					w.putBytes(k, []byte{byte(i), 0})
				case 4:
					want.PutBool(k, i%12 == 4)
					w.putBool(k, i%12 == 4)
				case 5:
					want.PutEmptySlice(k).AppendEmpty().SetStr(fmt.Sprint("h", i))
					w.putStrSlice(k, fmt.Sprint("h", i))
				}
			}
			want.PutStr("", "")
			w.putStr("", "") // empty key and value survive the encoding
			w.finish()
			assert.Equal(t, n > manyAttributes, w.list != nil, "collected only above manyAttributes")
			require.Equal(t, want.Len(), got.Len())
			var wantKeys, gotKeys []string
			for k := range want.All() {
				wantKeys = append(wantKeys, k)
			}
			for k := range got.All() {
				gotKeys = append(gotKeys, k)
			}
			assert.Equal(t, wantKeys, gotKeys, "same order")
			assert.Equal(t, want.AsRaw(), got.AsRaw())
		})
	}
}

// TestSpanWithHugeMeta: a span with 200,000 tags (a 25 MiB body holds millions) translates with
// every tag, and in linear time: with Put's lookup it would take 2·10^10 key comparisons, far
// beyond this package's test timeout. Resource tags and link attributes take the same path.
// TestAttrWriterLeavesRoomForTheDocumentID: a span's map written to its expected size takes one
// attribute more (the pipeline's document id) without growing: PutStr then allocates only the
// value, not a new list.
func TestAttrWriterLeavesRoomForTheDocumentID(t *testing.T) {
	for _, n := range []int{1, 4, 10} {
		t.Run(strconv.Itoa(n), func(t *testing.T) {
			write := func(withID bool) func() {
				return func() {
					m := pcommon.NewMap()
					w := newAttrWriter(m, n)
					for i := range n {
						w.putInt(strconv.Itoa(i), int64(i))
					}
					w.finish()
					if withID {
						m.PutStr("elasticsearch.document_id", "id")
					}
				}
			}
			written, allocs := testing.AllocsPerRun(100, write(false)), testing.AllocsPerRun(100, write(true))
			assert.InDelta(t, written+1, allocs, 0.01, "only the new value is allocated")
		})
	}
}

func TestSpanWithHugeMeta(t *testing.T) {
	const n = 200_000
	meta := make([]payload.KV, 0, n+1)
	for i := range n {
		meta = append(meta, payload.KV{Key: "tag." + strconv.Itoa(i), Value: strconv.Itoa(i)})
	}
	meta = append(meta, payload.KV{Key: "tag.7", Value: "last wins"})
	links := []payload.Link{{TraceID: 1, SpanID: 2, Attributes: meta}}
	s := payload.Span{Service: "svc", Name: "op", TraceID: 1, SpanID: 2, Meta: meta, Links: links}
	p := payload.Payload{Tags: meta, Chunks: []payload.Chunk{{Priority: 1, Spans: []payload.Span{s}}}}
	for _, tt := range []struct {
		mapping Mapping
		extra   int
	}{
		{MappingSemconv, 3},         // operation.name, resource.name, sampling.priority
		{MappingDatadogReceiver, 4}, // dd.span.Resource, datadog.span.id, datadog.trace.id, sampling.priority
	} {
		t.Run(string(tt.mapping), func(t *testing.T) {
			res := New(Options{Mapping: tt.mapping}).ToTraces([]payload.Payload{p}, Headers{})
			require.Equal(t, 1, res.Spans)
			span := spansOf(res)[0]
			assert.Equal(t, n+tt.extra, span.Attributes().Len(), "every tag plus the mapping's own")
			v, _ := span.Attributes().Get("tag.7")
			assert.Equal(t, "last wins", v.Str())
			v, _ = span.Attributes().Get("tag.199999")
			assert.Equal(t, "199999", v.Str())
			assert.Equal(t, n, span.Links().At(0).Attributes().Len())
			resAttrs := res.Traces.ResourceSpans().At(0).Resource().Attributes()
			v, _ = resAttrs.Get("tag.7")
			assert.Equal(t, "last wins", v.Str())
		})
	}
}

// TestEventAttributesAreBounded: span events keep MaxEventAttributes attributes and count the rest
// as dropped, the OpenTelemetry SDKs' default limit.
func TestEventAttributesAreBounded(t *testing.T) {
	var attrs []payload.EventAttribute
	for i := range MaxEventAttributes + 10 {
		attrs = append(attrs, payload.EventAttribute{Key: "a" + strconv.Itoa(i), Type: payload.AttributeString, Str: "x"})
	}
	s := payload.Span{Service: "svc", Name: "op", TraceID: 1, SpanID: 2, Events: []payload.Event{{Name: "e", Attributes: attrs}}}
	res := New(Options{}).ToTraces(one(s), Headers{})
	ev := spansOf(res)[0].Events().At(0)
	assert.Equal(t, MaxEventAttributes, ev.Attributes().Len())
	assert.Equal(t, uint32(10), ev.DroppedAttributesCount())
	assert.Equal(t, 10, res.DroppedEventAttributes, "counted for the receiver's log")
}

// BenchmarkManyAttributes: the cost per attribute stays flat as a span's tag count grows.
func BenchmarkManyAttributes(b *testing.B) {
	for _, n := range []int{16, manyAttributes, 128, 1000, 10_000, 100_000} {
		b.Run(strconv.Itoa(n), func(b *testing.B) {
			meta := make([]payload.KV, n)
			for i := range meta {
				meta[i] = payload.KV{Key: "tag." + strconv.Itoa(i), Value: "v"}
			}
			tr := New(Options{})
			p := one(payload.Span{Service: "svc", Name: "op", TraceID: 1, SpanID: 2, Meta: meta})
			b.ReportAllocs()
			for b.Loop() {
				tr.ToTraces(p, Headers{})
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/attribute")
		})
	}
}

// TestUnreadableMetaJSONIsKept: _dd.span_links and events meta that cannot be read, or that would
// decode beyond the bound (tens of bytes of structures per '{'), stay on the span as the
// attributes they came as, instead of disappearing.
func TestUnreadableMetaJSONIsKept(t *testing.T) {
	huge := "[" + strings.Repeat("{},", 100_000) + "{}]"
	for _, tt := range []struct {
		name, key, value string
		links, events    int
	}{
		{"broken links", "_dd.span_links", `[{"trace_id":`, 0, 0},
		{"broken events", "events", `{not json`, 0, 0},
		{"links beyond the bound", "_dd.span_links", huge, 0, 0},
		{"events beyond the bound", "events", huge, 0, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := payload.Span{Service: "svc", Name: "op", TraceID: 1, SpanID: 2, Meta: []payload.KV{{Key: tt.key, Value: tt.value}}}
			span := spansOf(New(Options{}).ToTraces(one(s), Headers{}))[0]
			v, ok := span.Attributes().Get(tt.key)
			require.True(t, ok, "the meta was dropped")
			assert.Equal(t, tt.value, v.Str())
			assert.Equal(t, tt.links, span.Links().Len())
			assert.Equal(t, tt.events, span.Events().Len())
		})
	}
	// Readable meta becomes links and events, not attributes.
	s := payload.Span{Service: "svc", Name: "op", TraceID: 1, SpanID: 2, Meta: []payload.KV{
		{Key: "_dd.span_links", Value: `[{"trace_id":"1","span_id":"2"}]`}, {Key: "events", Value: `[{"name":"e","time_unix_nano":1}]`},
	}}
	span := spansOf(New(Options{}).ToTraces(one(s), Headers{}))[0]
	assert.Equal(t, 1, span.Links().Len())
	assert.Equal(t, 1, span.Events().Len())
	_, ok := span.Attributes().Get("_dd.span_links")
	assert.False(t, ok)
}
