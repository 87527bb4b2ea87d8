package elasticsearchdocumentsexporter

import (
	"math"
	"math/rand/v2"
	"strings"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// The corpus of the differential test: strings that need escaping or are not UTF-8, every value
// type, the attributes that route a document, geo points, links and events.
var (
	corpusStrings = []string{
		"", "checkout", `say "hi"`, `back\slash`, "<b>&amp;</b>", "tab\there", "line\nbreak", "cr\rhere",
		"\x01\x1fcontrol", "é 日本語 🚀", "sep\u2028and\u2029", "bad\xffutf8\xc3", "GET /api/v1/orders/{id}",
		strings.Repeat("long ", 40),
	}
	corpusKeys = []string{
		"http.request.method", "db.statement", "user.id", `we"ird`, "ключ", "a.b.c.d", "x<y>", "event.name",
		"exception.message", "count", "ratio", "flag", "payload", "nested", "list", "empty",
	}
	corpusFloats = []float64{0, 1, -1, 0.5, 1.0 / 3, 1e21, 1e-7, 123456789, -2.5e-300, math.MaxFloat64, math.SmallestNonzeroFloat64, math.Copysign(0, -1), -94, 999999, 1e6, 4096.25}
)

func pick[T any](rng *rand.Rand, xs []T) T { return xs[rng.IntN(len(xs))] }

// putRandomValue puts one value of a random type; depth bounds maps and slices inside.
func putRandomValue(rng *rand.Rand, v pcommon.Value, depth int) {
	kinds := 6
	if depth > 0 {
		kinds = 9
	}
	switch rng.IntN(kinds) {
	case 0:
		v.SetStr(pick(rng, corpusStrings))
	case 1:
		v.SetInt(rng.Int64() - math.MaxInt64/2)
	case 2:
		v.SetDouble(pick(rng, corpusFloats))
	case 3:
		v.SetBool(rng.IntN(2) == 0)
	case 4:
		b := make([]byte, rng.IntN(6))
		for i := range b {
			b[i] = byte(rng.IntN(256))
		}
		v.SetEmptyBytes().FromRaw(b)
	case 5:
		// an empty value: null
	case 6, 7:
		m := v.SetEmptyMap()
		for range rng.IntN(3) {
			putRandomValue(rng, m.PutEmpty(pick(rng, corpusKeys)), depth-1)
		}
	default:
		s := v.SetEmptySlice()
		for range rng.IntN(4) {
			putRandomValue(rng, s.AppendEmpty(), depth-1)
		}
	}
}

func randomAttributes(rng *rand.Rand, m pcommon.Map, n int) {
	for range n {
		putRandomValue(rng, m.PutEmpty(pick(rng, corpusKeys)), 2)
	}
	// One geo prefix per map at most: the contrib exporter writes several in a random order.
	switch rng.IntN(8) {
	case 0:
		m.PutDouble("geo.location.lat", 48.85)
		m.PutDouble("geo.location.lon", 2.35)
	case 1:
		m.PutDouble("geo.location.lat", 48.85)
	case 2:
		m.PutDouble("client.geo.location.lon", -73.9)
	}
}

// routing puts, now and then, the attributes that choose a data stream.
func routing(rng *rand.Rand, m pcommon.Map) {
	switch rng.IntN(8) {
	case 0:
		m.PutStr("data_stream.dataset", pick(rng, []string{"checkout", "My-Set/x", "Ünïcode", strings.Repeat("d", 120)}))
	case 1:
		m.PutStr("data_stream.namespace", pick(rng, []string{"prod", "Team A,B", "default"}))
	case 2:
		m.PutInt("data_stream.dataset", 42)
	case 3:
		m.PutStr("elastic.mapping.mode", "otel")
	}
}

func randomID(rng *rand.Rand, n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(rng.IntN(256))
	}
	return b
}

func randomTraces(rng *rand.Rand) ptrace.Traces {
	td := ptrace.NewTraces()
	for range 1 + rng.IntN(3) {
		rs := td.ResourceSpans().AppendEmpty()
		rs.Resource().Attributes().PutStr("service.name", pick(rng, corpusStrings))
		randomAttributes(rng, rs.Resource().Attributes(), rng.IntN(5))
		routing(rng, rs.Resource().Attributes())
		rs.Resource().SetDroppedAttributesCount(uint32(rng.IntN(2)))
		if rng.IntN(2) == 0 {
			rs.SetSchemaUrl("https://opentelemetry.io/schemas/1.26.0")
		}
		for range 1 + rng.IntN(2) {
			randomScopeSpans(rng, rs.ScopeSpans().AppendEmpty())
		}
	}
	return td
}

func randomScopeSpans(rng *rand.Rand, ss ptrace.ScopeSpans) {
	scopeNames := []string{
		"", "checkout-lib", "github.com/x/receiver/otlpreceiver/internal/trace",
		"go.opentelemetry.io/collector/service", "github.com/y/connector/spanmetricsconnector",
	}
	ss.Scope().SetName(pick(rng, scopeNames))
	ss.Scope().SetVersion(pick(rng, []string{"", "1.2.3"}))
	randomAttributes(rng, ss.Scope().Attributes(), rng.IntN(2))
	routing(rng, ss.Scope().Attributes())
	if rng.IntN(6) == 0 {
		ss.Scope().Attributes().PutStr("encoding.format", "aws.vpcflow")
	}
	if rng.IntN(3) == 0 {
		ss.SetSchemaUrl("https://opentelemetry.io/schemas/1.30.0")
	}
	for range 1 + rng.IntN(5) {
		randomSpan(rng, ss.Spans().AppendEmpty())
	}
}

func randomSpan(rng *rand.Rand, s ptrace.Span) {
	if rng.IntN(10) > 0 {
		s.SetTraceID(pcommon.TraceID(randomID(rng, 16)))
	}
	s.SetSpanID(pcommon.SpanID(randomID(rng, 8)))
	if rng.IntN(2) == 0 {
		s.SetParentSpanID(pcommon.SpanID(randomID(rng, 8)))
	}
	s.TraceState().FromRaw(pick(rng, []string{"", "dd=s:1", "a=1,b=2"}))
	s.SetName(pick(rng, corpusStrings))
	s.SetKind(ptrace.SpanKind(rng.IntN(6)))
	start := pcommon.Timestamp(1_700_000_000_000_000_000 + rng.Int64N(1e15))
	s.SetStartTimestamp(start)
	s.SetEndTimestamp(start + pcommon.Timestamp(rng.Int64N(5e9)))
	randomAttributes(rng, s.Attributes(), rng.IntN(8))
	routing(rng, s.Attributes())
	if rng.IntN(2) == 0 {
		s.Attributes().PutStr("elasticsearch.document_id", string(randomHex(rng)))
	}
	s.SetDroppedAttributesCount(uint32(rng.IntN(2)))
	s.SetDroppedEventsCount(uint32(rng.IntN(2)))
	s.SetDroppedLinksCount(uint32(rng.IntN(2)))
	s.Status().SetCode(ptrace.StatusCode(rng.IntN(3)))
	s.Status().SetMessage(pick(rng, []string{"", "boom", `bad "input"`}))
	for range rng.IntN(3) {
		l := s.Links().AppendEmpty()
		if rng.IntN(4) > 0 {
			l.SetTraceID(pcommon.TraceID(randomID(rng, 16)))
			l.SetSpanID(pcommon.SpanID(randomID(rng, 8)))
		}
		l.TraceState().FromRaw(pick(rng, []string{"", "k=v"}))
		randomAttributes(rng, l.Attributes(), rng.IntN(3))
		l.SetDroppedAttributesCount(uint32(rng.IntN(2)))
	}
	for range rng.IntN(3) {
		ev := s.Events().AppendEmpty()
		ev.SetName(pick(rng, []string{"", "exception", "cache.miss"}))
		ev.SetTimestamp(start + pcommon.Timestamp(rng.Int64N(1e9)))
		randomAttributes(rng, ev.Attributes(), rng.IntN(4))
		routing(rng, ev.Attributes())
		ev.SetDroppedAttributesCount(uint32(rng.IntN(2)))
	}
}

func randomHex(rng *rand.Rand) []byte {
	const digits = "0123456789abcdef"
	b := make([]byte, 24)
	for i := range b {
		b[i] = digits[rng.IntN(16)]
	}
	return b
}

// handMadeTraces are the cases the random corpus may miss.
func handMadeTraces() map[string]ptrace.Traces {
	one := func(fill func(rs ptrace.ResourceSpans, ss ptrace.ScopeSpans, s ptrace.Span)) ptrace.Traces {
		td := ptrace.NewTraces()
		rs := td.ResourceSpans().AppendEmpty()
		ss := rs.ScopeSpans().AppendEmpty()
		s := ss.Spans().AppendEmpty()
		s.SetTraceID(pcommon.TraceID{1, 2, 3})
		s.SetSpanID(pcommon.SpanID{4, 5})
		s.SetStartTimestamp(1_700_000_000_000_000_007)
		s.SetEndTimestamp(1_700_000_000_250_000_000)
		fill(rs, ss, s)
		return td
	}
	return map[string]ptrace.Traces{
		"nothing but ids": one(func(ptrace.ResourceSpans, ptrace.ScopeSpans, ptrace.Span) {}),
		"only attributes that steer": one(func(rs ptrace.ResourceSpans, ss ptrace.ScopeSpans, s ptrace.Span) {
			rs.Resource().Attributes().PutStr("data_stream.namespace", "prod")
			ss.Scope().Attributes().PutStr("elastic.mapping.mode", "otel")
			s.Attributes().PutStr("elasticsearch.document_id", "abc")
		}),
		"index named": one(func(_ ptrace.ResourceSpans, _ ptrace.ScopeSpans, s ptrace.Span) {
			s.Attributes().PutStr("elasticsearch.index", "traces-custom-default")
		}),
		"event name over event.name": one(func(_ ptrace.ResourceSpans, _ ptrace.ScopeSpans, s ptrace.Span) {
			ev := s.Events().AppendEmpty()
			ev.SetName("exception")
			ev.Attributes().PutStr("a", "1")
			ev.Attributes().PutInt("event.name", 7)
			ev.Attributes().PutStr("b", "2")
			s.Events().AppendEmpty().SetName("no attributes")
			s.Events().AppendEmpty()
		}),
		"geo both halves, prefixed": one(func(_ ptrace.ResourceSpans, _ ptrace.ScopeSpans, s ptrace.Span) {
			s.Attributes().PutDouble("client.geo.location.lat", 1)
			s.Attributes().PutStr("x", "y")
			s.Attributes().PutDouble("client.geo.location.lon", 2)
			s.Attributes().PutStr("geo.location.lat", "not a double")
		}),
	}
}
