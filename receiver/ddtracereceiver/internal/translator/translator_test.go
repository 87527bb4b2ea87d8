package translator

import (
	"encoding/hex"
	"fmt"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/tracegate/tracegate/receiver/ddtracereceiver/internal/payload"
)

func spansOf(res Result) []ptrace.Span {
	var out []ptrace.Span
	rss := res.Traces.ResourceSpans()
	for i := 0; i < rss.Len(); i++ {
		ss := rss.At(i).ScopeSpans()
		for j := 0; j < ss.Len(); j++ {
			for k := 0; k < ss.At(j).Spans().Len(); k++ {
				out = append(out, ss.At(j).Spans().At(k))
			}
		}
	}
	return out
}

func one(spans ...payload.Span) []payload.Payload {
	return []payload.Payload{{Chunks: []payload.Chunk{{Priority: payload.PriorityNone, Spans: spans}}}}
}

// TestTraceIDFallbackCache is the second half of test vector 2: a later payload whose chunk lacks
// _dd.p.tid still gets the 128-bit id, through the bounded cache.
func TestTraceIDFallbackCache(t *testing.T) {
	tr := New(Options{TraceIDCacheSize: 2})
	const low = 0x1122334455667788
	first := tr.ToTraces(one(payload.Span{TraceID: low, SpanID: 1, Meta: []payload.KV{{Key: "_dd.p.tid", Value: "640cfd8d00000000"}}}), Headers{})
	later := tr.ToTraces(one(payload.Span{TraceID: low, SpanID: 2, ParentID: 1}), Headers{})
	want := "640cfd8d000000001122334455667788"
	assert.Equal(t, want, hexID(spansOf(first)[0].TraceID()))
	assert.Equal(t, want, hexID(spansOf(later)[0].TraceID()))

	// The cache is bounded: two newer traces push the first one out.
	tr.ToTraces(one(payload.Span{TraceID: 5, SpanID: 1, Meta: []payload.KV{{Key: "_dd.p.tid", Value: "0000000100000000"}}}), Headers{})
	tr.ToTraces(one(payload.Span{TraceID: 6, SpanID: 1, Meta: []payload.KV{{Key: "_dd.p.tid", Value: "0000000200000000"}}}), Headers{})
	evicted := tr.ToTraces(one(payload.Span{TraceID: low, SpanID: 3}), Headers{})
	assert.Equal(t, "00000000000000001122334455667788", hexID(spansOf(evicted)[0].TraceID()))

	// A malformed tag is ignored, not half-applied.
	bad := New(Options{TraceIDCacheSize: 10}).ToTraces(one(payload.Span{TraceID: 1, SpanID: 1, Meta: []payload.KV{{Key: "_dd.p.tid", Value: "zz"}}}), Headers{})
	assert.Equal(t, "00000000000000000000000000000001", hexID(spansOf(bad)[0].TraceID()))
}

func hexID(id [16]byte) string { return hex.EncodeToString(id[:]) }

func TestStatusOption(t *testing.T) {
	for _, tt := range []struct {
		ok    bool
		error int32
		want  ptrace.StatusCode
	}{
		{true, 0, ptrace.StatusCodeOk},
		{false, 0, ptrace.StatusCodeUnset},
		{false, 1, ptrace.StatusCodeError},
		{true, 1, ptrace.StatusCodeError},
	} {
		res := New(Options{StatusOKWithoutError: tt.ok}).ToTraces(one(payload.Span{TraceID: 1, SpanID: 1, Error: tt.error}), Headers{})
		assert.Equal(t, tt.want, spansOf(res)[0].Status().Code(), "ok=%v error=%d", tt.ok, tt.error)
	}
}

// TestDeterministic checks that resources come out in one order whatever the input order, and
// that the metric wins over the meta value of the same attribute.
func TestDeterministic(t *testing.T) {
	a := payload.Span{Service: "b-svc", TraceID: 1, SpanID: 1, Meta: []payload.KV{{Key: "http.status_code", Value: "200"}}, Metrics: []payload.KF{{Key: "http.status_code", Value: 201}}}
	b := payload.Span{Service: "a-svc", TraceID: 1, SpanID: 2}
	for _, in := range [][]payload.Span{{a, b}, {b, a}} {
		res := New(Options{}).ToTraces(one(in...), Headers{})
		require.Equal(t, 2, res.Traces.ResourceSpans().Len())
		first, _ := res.Traces.ResourceSpans().At(0).Resource().Attributes().Get("service.name")
		assert.Equal(t, "a-svc", first.Str())
		code, _ := res.Traces.ResourceSpans().At(1).ScopeSpans().At(0).Spans().At(0).Attributes().Get("http.response.status_code")
		assert.Equal(t, int64(201), code.Int())
	}
}

func TestDroppedSpansCounted(t *testing.T) {
	res := New(Options{}).ToTraces(one(payload.Span{TraceID: 0, SpanID: 1}, payload.Span{TraceID: 1, SpanID: 0}, payload.Span{TraceID: 1, SpanID: 0}, payload.Span{TraceID: 1, SpanID: 1}), Headers{})
	assert.Equal(t, 1, res.Spans)
	assert.Equal(t, map[string]int{DropZeroTraceID: 1, DropZeroSpanID: 2}, res.Dropped)

	withNils := one(payload.Span{TraceID: 1, SpanID: 1})
	withNils[0].NilSpans = 3
	res = New(Options{}).ToTraces(withNils, Headers{})
	assert.Equal(t, 1, res.Spans)
	assert.Equal(t, map[string]int{DropNilSpan: 3}, res.Dropped)
}

func FuzzTranslate(f *testing.F) {
	f.Add([]byte(`[[{"service":"s","name":"http.request","trace_id":1,"span_id":2,"error":1,"meta":{"http.method":"GET","_dd.p.tid":"640cfd8d00000000","_dd.span_links":"[{\"trace_id\":\"1\",\"span_id\":2}]","events":"[{\"name\":\"e\",\"attributes\":{\"a\":[1,[2]]}}]"},"metrics":{"process_id":1,"_sampling_priority_v1":1}}]]`))
	f.Add([]byte(`[[{"name":"grpc.client","trace_id":1,"span_id":2,"resource":"/a.B/C","meta":{"_dd.base_service":"x","span.kind":"client"}}]]`))
	f.Add([]byte(`[[{"name":"kafka.produce","type":"queue","trace_id":1,"span_id":3,"parent_id":2,"meta":{"messaging.system":"kafka","offset":"x","partition":"2","http.url":"http://[::1]:x/a?b#c"},"metrics":{"grpc.code":99,"_dd.top_level":1}}]]`))
	translators := []*Translator{New(Options{TraceIDCacheSize: 16}), New(Options{TraceIDCacheSize: 16, Mapping: MappingDatadogReceiver})}
	f.Fuzz(func(t *testing.T, b []byte) {
		p, err := payload.DecodeTracesJSON(b)
		if err != nil {
			return
		}
		for _, tr := range translators {
			res := tr.ToTraces([]payload.Payload{p}, Headers{Lang: ".NET", ComputedTopLevel: len(b)%2 == 0})
			dropped := 0
			for _, n := range res.Dropped {
				dropped += n
			}
			if res.Traces.SpanCount() != res.Spans || res.Spans+dropped != p.SpanCount() {
				t.Fatalf("%s: %d spans in, %d out, %d counted, %d dropped", tr.opts.Mapping, p.SpanCount(), res.Traces.SpanCount(), res.Spans, dropped)
			}
		}
	})
}

// TestManyResources interleaves the spans of more resources than are searched without a map:
// every span lands in its resource, and the resources come out sorted.
func TestManyResources(t *testing.T) {
	const resources, perResource = 3 * maxScannedGroups, 3
	var in []payload.Span
	for range perResource {
		for r := range resources {
			in = append(in, payload.Span{Service: fmt.Sprintf("svc-%02d", r), TraceID: 1, SpanID: uint64(1 + len(in))})
		}
	}
	res := New(Options{}).ToTraces(one(in...), Headers{})
	rss := res.Traces.ResourceSpans()
	require.Equal(t, resources, rss.Len())
	for r := range resources {
		service, _ := rss.At(r).Resource().Attributes().Get("service.name")
		assert.Equal(t, fmt.Sprintf("svc-%02d", r), service.Str())
		spans := rss.At(r).ScopeSpans().At(0).Spans()
		require.Equal(t, perResource, spans.Len())
		for i := range perResource {
			// Spans keep their order within a resource.
			assert.Equal(t, spanID(uint64(1+i*resources+r)), spans.At(i).SpanID())
		}
	}
}

func TestJoinOrReuse(t *testing.T) {
	for _, tt := range []struct{ resource, want string }{
		{"GET /cart", "GET /cart"},
		{"POST /cart", "GET /cart"},
		{"GET /carts", "GET /cart"},
		{"GET_/cart", "GET /cart"},
		{"", "GET /cart"},
	} {
		got := joinOrReuse(tt.resource, "GET", " ", "/cart")
		assert.Equal(t, tt.want, got, "resource %q", tt.resource)
		if tt.resource == tt.want {
			assert.Equal(t, unsafe.StringData(tt.resource), unsafe.StringData(got), "the resource itself is returned")
		}
	}
}

// TestProcessFactsApplyToTheWholePayload: tracers put process_id and _dd.hostname on the local
// root span only; every span of the payload comes from that process, so the trace is one resource
// with process.pid and host.name, not the root's resource and one without them. A span that says
// otherwise keeps its own.
func TestProcessFactsApplyToTheWholePayload(t *testing.T) {
	root := payload.Span{
		Service: "svc", Name: "web.request", TraceID: 1, SpanID: 1,
		Meta: []payload.KV{{Key: "_dd.hostname", Value: "node-7"}}, Metrics: []payload.KF{{Key: "process_id", Value: 4242}},
	}
	child := payload.Span{Service: "svc", Name: "db.query", TraceID: 1, SpanID: 2, ParentID: 1}
	other := payload.Span{Service: "svc", Name: "job", TraceID: 3, SpanID: 3, Metrics: []payload.KF{{Key: "process_id", Value: 99}}}
	for _, tt := range []struct {
		name  string
		spans []payload.Span
		want  map[int64][]string // pid -> span names in that resource
	}{
		{"root first", []payload.Span{root, child}, map[int64][]string{4242: {"web.request", "db.query"}}},
		{"root last (as in a flushed chunk)", []payload.Span{child, root}, map[int64][]string{4242: {"db.query", "web.request"}}},
		{"a span with its own pid", []payload.Span{root, child, other}, map[int64][]string{4242: {"web.request", "db.query"}, 99: {"job"}}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			res := New(Options{}).ToTraces(one(tt.spans...), Headers{})
			rss := res.Traces.ResourceSpans()
			require.Equal(t, len(tt.want), rss.Len())
			for i := range rss.Len() {
				attrs := rss.At(i).Resource().Attributes()
				pid, ok := attrs.Get("process.pid")
				require.True(t, ok, "resource %d without process.pid", i)
				host, _ := attrs.Get("host.name")
				assert.Equal(t, "node-7", host.Str(), "host.name of resource %d", i)
				var names []string
				spans := rss.At(i).ScopeSpans().At(0).Spans()
				for j := range spans.Len() {
					names = append(names, spans.At(j).Name())
				}
				assert.Equal(t, tt.want[pid.Int()], names, "spans of pid %d", pid.Int())
			}
		})
	}
}

// TestProcessFactsPerChunk: a payload that a forwarder batched from several processes keeps each
// trace's own pid and host (from its chunk's root); a chunk without them (a partial flush's
// children) takes the payload's.
func TestProcessFactsPerChunk(t *testing.T) {
	root := func(id uint64, pid float64, host string) payload.Span {
		return payload.Span{
			Service: "svc", Name: "root", TraceID: id, SpanID: id,
			Meta: []payload.KV{{Key: "_dd.hostname", Value: host}}, Metrics: []payload.KF{{Key: "process_id", Value: pid}},
		}
	}
	child := func(trace, id uint64) payload.Span {
		return payload.Span{Service: "svc", Name: "child", TraceID: trace, SpanID: id, ParentID: trace}
	}
	p := payload.Payload{Chunks: []payload.Chunk{
		{Priority: payload.PriorityNone, Spans: []payload.Span{child(10, 11), root(10, 1, "host-a")}},
		{Priority: payload.PriorityNone, Spans: []payload.Span{root(20, 2, "host-b"), child(20, 21)}},
		{Priority: payload.PriorityNone, Spans: []payload.Span{child(30, 31)}}, // partial flush: no root
	}}
	res := New(Options{}).ToTraces([]payload.Payload{p}, Headers{})
	got := map[string]int{} // "pid/host" -> spans
	rss := res.Traces.ResourceSpans()
	for i := range rss.Len() {
		attrs := rss.At(i).Resource().Attributes()
		pid, _ := attrs.Get("process.pid")
		host, _ := attrs.Get("host.name")
		got[fmt.Sprintf("%d/%s", pid.Int(), host.Str())] += rss.At(i).ScopeSpans().At(0).Spans().Len()
	}
	assert.Equal(t, map[string]int{"1/host-a": 3, "2/host-b": 2}, got, "the rootless chunk takes the payload's first process")
}

// TestRuntimeIDIsTheServiceInstance: the tracer's runtime-id (one per process; on the root span,
// or the v0.7 payload) becomes the resource's service.instance.id, for every span of its trace,
// and two processes of one service are two resources.
func TestRuntimeIDIsTheServiceInstance(t *testing.T) {
	root := func(id uint64, rid string) payload.Span {
		return payload.Span{Service: "svc", Name: "root", TraceID: id, SpanID: id, Meta: []payload.KV{{Key: "runtime-id", Value: rid}}}
	}
	child := func(trace, id uint64) payload.Span {
		return payload.Span{Service: "svc", Name: "child", TraceID: trace, SpanID: id, ParentID: trace}
	}
	p := payload.Payload{RuntimeID: "from-payload", Chunks: []payload.Chunk{
		{Priority: payload.PriorityNone, Spans: []payload.Span{child(10, 11), root(10, "rid-a")}},
		{Priority: payload.PriorityNone, Spans: []payload.Span{root(20, "rid-b"), child(20, 21)}},
	}}
	res := New(Options{}).ToTraces([]payload.Payload{p}, Headers{})
	got := map[string]int{}
	rss := res.Traces.ResourceSpans()
	for i := range rss.Len() {
		id, _ := rss.At(i).Resource().Attributes().Get("service.instance.id")
		got[id.Str()] += rss.At(i).ScopeSpans().At(0).Spans().Len()
	}
	assert.Equal(t, map[string]int{"rid-a": 2, "rid-b": 2}, got)

	p = payload.Payload{RuntimeID: "from-payload", Chunks: []payload.Chunk{{Priority: payload.PriorityNone, Spans: []payload.Span{child(30, 31)}}}}
	res = New(Options{}).ToTraces([]payload.Payload{p}, Headers{})
	id, _ := res.Traces.ResourceSpans().At(0).Resource().Attributes().Get("service.instance.id")
	assert.Equal(t, "from-payload", id.Str(), "v0.7's payload field when no span has it")
}
