package payload

import (
	"maps"
	"runtime"
	"slices"
	"testing"

	pb "github.com/DataDog/datadog-agent/pkg/proto/pbgo/trace"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// minimalSpan writes the span of test vector 1 of the spec.
func minimalSpan(e *enc) *enc {
	return e.mapN(11).
		kv("service", "svc").kv("name", "web.request").kv("resource", "GET /x").
		str("trace_id").u(1).str("span_id").u(2).str("parent_id").u(0).
		str("start").i(1_700_000_000_000_000_000).str("duration").i(1_000_000_000).
		str("error").i(0).kv("type", "web").
		str("meta").mapN(1).kv("http.method", "GET")
}

func TestDecodeTracesMsgpack(t *testing.T) {
	body := minimalSpan(newEnc().arr(1).arr(1)).bytes()
	p, err := DecodeTracesMsgpack(body)
	require.NoError(t, err)
	require.Len(t, p.Chunks, 1)
	assert.Equal(t, int32(PriorityNone), p.Chunks[0].Priority)
	assert.Equal(t, []Span{{
		Service: "svc", Name: "web.request", Resource: "GET /x", Type: "web", TraceID: 1, SpanID: 2,
		Start: 1_700_000_000_000_000_000, Duration: 1_000_000_000, Meta: []KV{{"http.method", "GET"}},
	}}, p.Chunks[0].Spans)
}

// TestWireTolerance is test vector 15 and the agent's decoder rules: every tolerated encoding decodes
// the same as the agent's own decoder does.
func TestWireTolerance(t *testing.T) {
	tests := []struct {
		name string
		span func(e *enc) *enc
		want Span
	}{
		{"negative int64 trace id", func(e *enc) *enc { return e.mapN(1).str("trace_id").i(-1) }, Span{TraceID: 0xffffffffffffffff}},
		{"uint start", func(e *enc) *enc { return e.mapN(1).str("start").u(5) }, Span{Start: 5}},
		{"int metric", func(e *enc) *enc { return e.mapN(1).str("metrics").mapN(1).str("m").i(5) }, Span{Metrics: []KF{{"m", 5}}}},
		{"uint metric", func(e *enc) *enc { return e.mapN(1).str("metrics").mapN(1).str("m").u(7) }, Span{Metrics: []KF{{"m", 7}}}},
		{"bin service", func(e *enc) *enc { return e.mapN(1).str("service").bin([]byte("svc")) }, Span{Service: "svc"}},
		{"nil everywhere", func(e *enc) *enc {
			return e.mapN(6).str("service").nil().str("trace_id").nil().str("meta").nil().str("metrics").nil().str("start").nil().str("error").nil()
		}, Span{}},
		{"invalid utf-8 in meta", func(e *enc) *enc { return e.mapN(1).str("meta").mapN(1).str("k").bin([]byte{'a', 0xff, 'b'}) }, Span{Meta: []KV{{"k", "a\uFFFDb"}}}},
		{"unknown keys skipped", func(e *enc) *enc {
			return e.mapN(2).str("future").mapN(1).str("x").arr(2).i(1).i(2).kv("name", "n")
		}, Span{Name: "n"}},
		{"uint error", func(e *enc) *enc { return e.mapN(1).str("error").u(1) }, Span{Error: 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			body := tt.span(newEnc().arr(1).arr(1)).bytes()
			p, err := DecodeTracesMsgpack(body)
			require.NoError(t, err)
			assert.Equal(t, tt.want, p.Chunks[0].Spans[0])
			assertSameAsAgentV04(t, body, p)
		})
	}
}

func TestDecodeErrors(t *testing.T) {
	tests := []struct {
		name   string
		decode func([]byte) (Payload, error)
		body   []byte
		want   error // nil: any error
	}{
		{"empty", DecodeTracesMsgpack, nil, nil},
		{"truncated", DecodeTracesMsgpack, minimalSpan(newEnc().arr(1).arr(1)).bytes()[:20], nil},
		{"array header claims 2^32-1 traces", DecodeTracesMsgpack, []byte{0xdd, 0xff, 0xff, 0xff, 0xff}, ErrTooManyElements},
		{"map header claims 2^32-1 entries", DecodeTracesMsgpack, append(newEnc().arr(1).arr(1).bytes(), 0xdf, 0xff, 0xff, 0xff, 0xff), ErrTooManyElements},
		{"string where a span is expected", DecodeTracesMsgpack, newEnc().arr(1).arr(1).str("x").bytes(), nil},
		{"string trace id", DecodeTracesMsgpack, newEnc().arr(1).arr(1).mapN(1).kv("trace_id", "1").bytes(), nil},
		{"uint64 start overflows int64", DecodeTracesMsgpack, newEnc().arr(1).arr(1).mapN(1).str("start").u(1 << 63).bytes(), nil},
		{"v0.5 not a pair", DecodeV05, newEnc().arr(3).arr(0).arr(0).arr(0).bytes(), nil},
		{"v0.5 dictionary index out of range", DecodeV05, newEnc().arr(2).arr(1).str("").arr(1).arr(1).arr(12).u(9).bytes(), nil},
		{"v0.5 span of 11 elements", DecodeV05, newEnc().arr(2).arr(1).str("").arr(1).arr(1).arr(11).bytes(), nil},
		{"v0.5 dictionary claims 2^32-1 strings", DecodeV05, append(newEnc().arr(2).bytes(), 0xdd, 0xff, 0xff, 0xff, 0xff), ErrTooManyElements},
		{"v0.7 not a map", DecodeV07, newEnc().arr(0).bytes(), nil},
		{"json truncated", DecodeTracesJSON, []byte(`[[{"trace_id":1`), nil},
		{"json trailing data", DecodeTracesJSON, []byte(`[[]] [[]]`), nil},
		{"json string id", DecodeTracesJSON, []byte(`[[{"trace_id":"1"}]]`), nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := tt.decode(tt.body)
			require.Error(t, err)
			if tt.want != nil {
				assert.ErrorIs(t, err, tt.want, "error %v, want %v", err, tt.want)
			}
		})
	}
}

// TestHugeHeaderAllocatesNothing checks that a lying header is refused before any allocation
// proportional to its claim.
func TestHugeHeaderAllocatesNothing(t *testing.T) {
	for name, body := range map[string][]byte{
		"v0.4 traces":     {0xdd, 0xff, 0xff, 0xff, 0xff, 0x90},
		"v0.4 spans":      {0x91, 0xdd, 0xff, 0xff, 0xff, 0xff, 0x90},
		"v0.4 meta":       append(newEnc().arr(1).arr(1).mapN(1).str("meta").bytes(), 0xdf, 0xff, 0xff, 0xff, 0xff),
		"v0.5 dictionary": {0x92, 0xdd, 0xff, 0xff, 0xff, 0xff},
		"v0.7 chunks":     append(newEnc().mapN(1).str("chunks").bytes(), 0xdd, 0xff, 0xff, 0xff, 0xff),
	} {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		for range 100 {
			_, err4 := DecodeTracesMsgpack(body)
			_, err5 := DecodeV05(body)
			_, err7 := DecodeV07(body)
			require.True(t, err4 != nil && err5 != nil && err7 != nil, name)
		}
		runtime.ReadMemStats(&after)
		assert.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(1<<20), "%s: allocated %d bytes in 100 decodes", name, after.TotalAlloc-before.TotalAlloc)
	}
}

func TestDecodeV05(t *testing.T) {
	// Test vector 9: dictionary ["", svc, op, res, env, prod].
	body := newEnc().arr(2).
		arr(6).str("").str("svc").str("op").str("res").str("env").str("prod").
		arr(1).arr(1).arr(12).u(1).u(2).u(3).u(10).u(11).u(0).i(100).i(50).i(0).
		mapN(1).u(4).u(5).mapN(1).u(2).f(1.5).u(0).bytes()
	p, err := DecodeV05(body)
	require.NoError(t, err)
	assert.Equal(t, []Span{{
		Service: "svc", Name: "op", Resource: "res", TraceID: 10, SpanID: 11, Start: 100, Duration: 50,
		Meta: []KV{{"env", "prod"}}, Metrics: []KF{{"op", 1.5}},
	}}, p.Chunks[0].Spans)
	var agent pb.Traces
	require.NoError(t, agent.UnmarshalMsgDictionary(body))
	assert.Equal(t, normalize(FromTraces(agent)), normalize(p))
}

func TestDecodeV07(t *testing.T) {
	body := newEnc().mapN(6).kv("container_id", "c1").kv("language_name", "go").kv("env", "prod").kv("hostname", "h1").
		str("tags").mapN(1).kv("_dd.p.dm", "-0").
		str("chunks").arr(1).mapN(3).str("priority").i(2).kv("origin", "lambda").str("spans").arr(1)
	body = minimalSpan(body)
	p, err := DecodeV07(body.bytes())
	require.NoError(t, err)
	assert.Equal(t, "c1", p.ContainerID)
	assert.Equal(t, "h1", p.Hostname)
	assert.Equal(t, int32(2), p.Chunks[0].Priority)
	assert.Equal(t, "lambda", p.Chunks[0].Origin)
	var agent pb.TracerPayload
	_, err = agent.UnmarshalMsg(body.bytes())
	require.NoError(t, err)
	assert.Equal(t, normalize(FromTracerPayload(&agent)), normalize(p))
}

func TestDecodeLinksAndEvents(t *testing.T) {
	span := newEnc().arr(1).arr(1).mapN(3).str("span_id").u(1).
		str("span_links").arr(1).mapN(6).str("trace_id").u(10).str("trace_id_high").u(20).str("span_id").u(30).
		str("attributes").mapN(1).kv("link.kind", "follows_from").kv("tracestate", "dd=s:1").str("flags").u(0x80000001).
		str("span_events").arr(1).mapN(3).kv("name", "exception").str("time_unix_nano").u(99).
		str("attributes").mapN(3).
		str("exception.message").mapN(2).str("type").i(0).kv("string_value", "x").
		str("n").mapN(2).str("type").i(2).str("int_value").i(3).
		str("list").mapN(2).str("type").i(4).str("array_value").mapN(1).str("values").arr(2).
		mapN(2).str("type").i(1).str("bool_value").boolean(true).
		mapN(2).str("type").i(3).str("double_value").f(2.5)
	p, err := DecodeTracesMsgpack(span.bytes())
	require.NoError(t, err)
	s := p.Chunks[0].Spans[0]
	assert.Equal(t, []Link{{TraceID: 10, TraceIDHigh: 20, SpanID: 30, Attributes: []KV{{"link.kind", "follows_from"}}, Tracestate: "dd=s:1", Flags: 0x80000001}}, s.Links)
	assert.Equal(t, []Event{{Name: "exception", TimeUnixNano: 99, Attributes: []EventAttribute{
		{Key: "exception.message", Type: AttributeString, Str: "x"},
		{Key: "n", Type: AttributeInt, Int: 3},
		{Key: "list", Type: AttributeArray, Array: []EventAttribute{{Type: AttributeBool, Bool: true}, {Type: AttributeDouble, Double: 2.5}}},
	}}}, s.Events)
	assertSameAsAgentV04(t, span.bytes(), p)
}

func TestDecodeJSON(t *testing.T) {
	p, err := DecodeTracesJSON([]byte(`[[{"service":"svc","name":"n","trace_id":-1,"span_id":2,"start":1.7e18,"error":1,
		"meta":{"b":"2","a":"1"},"metrics":{"m":1.5},"span_links":[{"trace_id":3,"span_id":4,"flags":1}]}, null]]`))
	require.NoError(t, err)
	assert.Equal(t, []Span{{
		Service: "svc", Name: "n", TraceID: 0xffffffffffffffff, SpanID: 2, Start: 1_700_000_000_000_000_000, Error: 1,
		Meta: []KV{{"a", "1"}, {"b", "2"}}, Metrics: []KF{{"m", 1.5}}, Links: []Link{{TraceID: 3, SpanID: 4, Flags: 1}},
	}}, p.Chunks[0].Spans)
}

// assertSameAsAgentV04 decodes body with the Datadog Agent's own decoder and checks that ours
// found the same spans.
func assertSameAsAgentV04(t *testing.T, body []byte, ours Payload) {
	t.Helper()
	var agent pb.Traces
	_, err := agent.UnmarshalMsg(body)
	require.NoError(t, err, "the agent's decoder refuses this input")
	assert.Equal(t, normalize(FromTraces(agent)), normalize(ours))
}

// normalize makes our wire-ordered form comparable with the agent's maps: keys sorted, the last
// value of a repeated key kept, empty slices nil, and invalid UTF-8 repaired everywhere (the agent
// repairs span strings but passes payload, chunk, link and event strings through; we repair all,
// since neither pdata nor Elasticsearch takes invalid UTF-8).
func normalize(p Payload) Payload {
	p.arena = nil // where the decoder cut the spans from, not what it decoded
	fix := func(s *string) { *s = repairUTF8([]byte(*s)) }
	for _, f := range []*string{&p.ContainerID, &p.LanguageName, &p.LanguageVersion, &p.TracerVersion, &p.RuntimeID, &p.Env, &p.Hostname, &p.AppVersion} {
		fix(f)
	}
	fixKVs := func(kvs []KV) []KV {
		for i := range kvs {
			fix(&kvs[i].Key)
			fix(&kvs[i].Value)
		}
		return kvs
	}
	p.Tags = fixKVs(p.Tags)
	for ci := range p.Chunks {
		fix(&p.Chunks[ci].Origin)
		p.Chunks[ci].Tags = fixKVs(p.Chunks[ci].Tags)
		for si := range p.Chunks[ci].Spans {
			s := &p.Chunks[ci].Spans[si]
			for li := range s.Links {
				fix(&s.Links[li].Tracestate)
				s.Links[li].Attributes = fixKVs(s.Links[li].Attributes)
			}
			for ei := range s.Events {
				fix(&s.Events[ei].Name)
				for ai := range s.Events[ei].Attributes {
					fix(&s.Events[ei].Attributes[ai].Key)
					fix(&s.Events[ei].Attributes[ai].Str)
					for vi := range s.Events[ei].Attributes[ai].Array {
						fix(&s.Events[ei].Attributes[ai].Array[vi].Str)
					}
				}
			}
		}
	}
	for ci := range p.Chunks {
		if len(p.Chunks[ci].Spans) == 0 {
			p.Chunks[ci].Spans = nil
		}
		p.Chunks[ci].Tags = dedupKV(p.Chunks[ci].Tags)
		for si := range p.Chunks[ci].Spans {
			s := &p.Chunks[ci].Spans[si]
			s.Meta = dedupKV(s.Meta)
			s.Metrics = dedupKF(s.Metrics)
			s.MetaStruct = dedupKB(s.MetaStruct)
			if len(s.Links) == 0 {
				s.Links = nil
			}
			for li := range s.Links {
				s.Links[li].Attributes = dedupKV(s.Links[li].Attributes)
			}
			if len(s.Events) == 0 {
				s.Events = nil
			}
			for ei := range s.Events {
				attrs := map[string]EventAttribute{}
				for _, a := range s.Events[ei].Attributes {
					if len(a.Array) == 0 {
						a.Array = nil
					}
					attrs[a.Key] = a
				}
				s.Events[ei].Attributes = nil
				for _, k := range slices.Sorted(maps.Keys(attrs)) {
					s.Events[ei].Attributes = append(s.Events[ei].Attributes, attrs[k])
				}
			}
		}
	}
	p.Tags = dedupKV(p.Tags)
	if len(p.Chunks) == 0 {
		p.Chunks = nil
	}
	return p
}

func dedupKV(kvs []KV) []KV {
	m := map[string]string{}
	for _, kv := range kvs {
		m[kv.Key] = kv.Value
	}
	return sortedKVs(m)
}

func dedupKF(kfs []KF) []KF {
	m := map[string]float64{}
	for _, kf := range kfs {
		m[kf.Key] = kf.Value
	}
	return sortedKFs(m)
}

func dedupKB(kbs []KB) []KB {
	m := map[string][]byte{}
	for _, kb := range kbs {
		if len(kb.Value) == 0 {
			kb.Value = nil
		}
		m[kb.Key] = kb.Value
	}
	return sortedKBs(m)
}

// TestIsASCII checks the word-at-a-time ASCII test against a byte loop: every length around the
// word size, with a non-ASCII byte at every position.
func TestIsASCII(t *testing.T) {
	for n := 0; n <= 25; n++ {
		b := make([]byte, n)
		for i := range b {
			b[i] = 'a' + byte(i%26)
		}
		assert.True(t, isASCII(b), "length %d", n)
		for i := range b {
			c := b[i]
			b[i] = 0x80
			assert.False(t, isASCII(b), "length %d, byte %d", n, i)
			b[i] = c
		}
	}
}

// TestNilSpansAreCounted: nil entries of span arrays carry nothing and are skipped, but counted,
// so the receiver can report them as dropped. A pooled reader must not carry the count over.
func TestNilSpansAreCounted(t *testing.T) {
	v04 := newEnc().arr(2).arr(3).nil()
	v04 = minimalSpan(v04).nil()
	v04 = minimalSpan(v04.arr(1))
	v07 := newEnc().mapN(1).str("chunks").arr(2).mapN(1).str("spans").arr(2).nil()
	v07 = minimalSpan(v07).mapN(1).str("spans").arr(1).nil()
	for _, tt := range []struct {
		name        string
		decode      func([]byte) (Payload, error)
		body        []byte
		spans, nils int
	}{
		{"v0.4", DecodeTracesMsgpack, v04.bytes(), 2, 2},
		{"v0.7", DecodeV07, v07.bytes(), 1, 2},
		{"json", DecodeTracesJSON, []byte(`[[null,{"trace_id":1,"span_id":2},null],[null]]`), 1, 3},
		{"none", DecodeTracesMsgpack, minimalSpan(newEnc().arr(1).arr(1)).bytes(), 1, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			for range 2 { // the second decode may reuse the first one's pooled reader
				p, err := tt.decode(tt.body)
				require.NoError(t, err)
				assert.Equal(t, tt.spans, p.SpanCount())
				assert.Equal(t, tt.nils, p.NilSpans)
				p.Release()
			}
		})
	}
}
