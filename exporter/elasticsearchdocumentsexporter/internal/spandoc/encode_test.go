package spandoc

import (
	"bytes"
	"encoding/json"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// document is a span's whole document, parsed.
func document(t *testing.T, span ptrace.Span) map[string]any {
	t.Helper()
	var e Encoder
	tail := e.Tail(nil, pcommon.NewResource(), "", pcommon.NewInstrumentationScope(), "")
	idx := Route(Traces, span.Attributes(), pcommon.NewInstrumentationScope(), pcommon.NewMap())
	doc := e.AppendSpan(nil, span, idx, tail)
	var m map[string]any
	require.NoError(t, json.Unmarshal(doc, &m), "%s", doc)
	return m
}

// withDuplicateKey is a span whose attributes hold "a" twice, as a non-compliant SDK sends them:
// the collector's API cannot make one, the protobuf decoder keeps both.
func withDuplicateKey(t *testing.T, n int) ptrace.Span {
	t.Helper()
	td := ptrace.NewTraces()
	s := td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans().AppendEmpty()
	for i := range n {
		s.Attributes().PutInt(string(rune('c'+i%20))+string(rune('c'+i/20)), int64(i))
	}
	s.Attributes().PutStr("a", "first")
	s.Attributes().PutStr("b", "second")
	raw, err := (&ptrace.ProtoMarshaler{}).MarshalTraces(td)
	require.NoError(t, err)
	raw = bytes.Replace(raw, []byte("\x01b"), []byte("\x01a"), 1)
	got, err := (&ptrace.ProtoUnmarshaler{}).UnmarshalTraces(raw)
	require.NoError(t, err)
	return got.ResourceSpans().At(0).ScopeSpans().At(0).Spans().At(0)
}

func TestDocuments(t *testing.T) {
	t.Run("a duplicate key is written once, its first value", func(t *testing.T) {
		for _, n := range []int{0, manyKeys + 4} { // scanned, then through the set
			span := withDuplicateKey(t, n)
			require.Equal(t, n+2, span.Attributes().Len())
			attrs := document(t, span)["attributes"].(map[string]any)
			assert.Equal(t, "first", attrs["a"])
			assert.Len(t, attrs, n+1)
		}
	})
	t.Run("NaN and infinities are null, not invalid JSON", func(t *testing.T) {
		span := ptrace.NewSpan()
		span.Attributes().PutDouble("nan", math.NaN())
		span.Attributes().PutDouble("inf", math.Inf(-1))
		attrs := document(t, span)["attributes"].(map[string]any)
		assert.Equal(t, map[string]any{"nan": nil, "inf": nil}, attrs)
	})
	t.Run("several geo points, in the order their first half came", func(t *testing.T) {
		span := ptrace.NewSpan()
		span.Attributes().PutDouble("server.geo.location.lat", 1)
		span.Attributes().PutDouble("client.geo.location.lon", 2)
		span.Attributes().PutDouble("client.geo.location.lat", 3)
		span.Attributes().PutDouble("server.geo.location.lon", 4)
		var e Encoder
		doc := string(e.AppendSpan(nil, span, Index{}, []byte("}")))
		assert.Contains(t, doc, `"attributes":{"server.geo.location":[4.0,1.0],"client.geo.location":[2.0,3.0]}`)
	})
	t.Run("floats keep a radix point", func(t *testing.T) {
		for f, want := range map[float64]string{
			1: "1.0", 0.5: "0.5", 1e21: "1.0e+21", 1.5e-7: "1.5e-07", math.Copysign(0, -1): "-0.0", 100: "100.0",
			0: "0.0", -94: "-94.0", 999999: "999999.0", 1e6: "1.0e+06", -1e6: "-1.0e+06", 123456.5: "123456.5",
		} {
			assert.Equal(t, want, string(appendFloat(nil, f)), "%v", f)
		}
	})
	t.Run("whole numbers as strconv writes them", func(t *testing.T) {
		r := rand.New(rand.NewPCG(3, 4))
		for range 20000 {
			f := math.Trunc((r.Float64()*2 - 1) * 1.2e6)
			want := strconv.FormatFloat(f, 'g', -1, 64)
			if !strings.ContainsAny(want, ".e") {
				want += ".0"
			} else if strings.Contains(want, "e") && !strings.Contains(want, ".") {
				want = strings.Replace(want, "e", ".0e", 1)
			}
			require.Equal(t, want, string(appendFloat(nil, f)), "%v", f)
		}
	})
	t.Run("strings escaped", func(t *testing.T) {
		for in, want := range map[string]string{
			"plain": `"plain"`, `q"b\`: `"q\"b\\"`, "<&>": `"\u003c\u0026\u003e"`, "\x00\x1f\n\r\t": `"\u0000\u001f\n\r\t"`,
			"\xff": `"\ufffd"`, "a\u2028b\u2029": `"a\u2028b\u2029"`, "日本": `"日本"`,
		} {
			assert.Equal(t, want, string(appendString(nil, in)), "%q", in)
		}
	})
}

func TestRoute(t *testing.T) {
	scope := pcommon.NewInstrumentationScope()
	for name, tc := range map[string]struct {
		record, scope, resource map[string]any
		scopeName               string
		want                    string
	}{
		"defaults":                   {want: "traces-generic.otel-default"},
		"record first":               {record: map[string]any{"data_stream.dataset": "a"}, scope: map[string]any{"data_stream.dataset": "b"}, want: "traces-a.otel-default"},
		"resource last":              {resource: map[string]any{"data_stream.namespace": "Prod"}, want: "traces-generic.otel-prod"},
		"index named":                {scope: map[string]any{"elasticsearch.index": "my-index"}, want: "my-index"},
		"forbidden characters":       {record: map[string]any{"data_stream.dataset": "A-b/c", "data_stream.namespace": "x-y,z"}, want: "traces-a_b_c.otel-x-y_z"},
		"a receiver's scope":         {scopeName: "github.com/o/receiver/hostmetricsreceiver/internal", want: "traces-hostmetricsreceiver.otel-default"},
		"collector telemetry":        {scopeName: "go.opentelemetry.io/collector/service", want: "traces-collectortelemetry.otel-default"},
		"encoding.format":            {scope: map[string]any{"encoding.format": "aws.cloudtrail"}, want: "traces-aws.cloudtrail.otel-default"},
		"a dataset beats the scope":  {resource: map[string]any{"data_stream.dataset": "d"}, scopeName: "x/receiver/areceiver", want: "traces-d.otel-default"},
		"non-string values as text":  {record: map[string]any{"data_stream.dataset": 7}, want: "traces-7.otel-default"},
		"dataset cut to 100 bytes":   {record: map[string]any{"data_stream.dataset": string(bytes.Repeat([]byte("d"), 120))}, want: "traces-" + string(bytes.Repeat([]byte("d"), 95)) + ".otel-default"},
		"namespace cut to 100 bytes": {record: map[string]any{"data_stream.namespace": string(bytes.Repeat([]byte("n"), 101))}, want: "traces-generic.otel-" + string(bytes.Repeat([]byte("n"), 100))},
	} {
		t.Run(name, func(t *testing.T) {
			rec, res := pcommon.NewMap(), pcommon.NewMap()
			require.NoError(t, rec.FromRaw(tc.record))
			require.NoError(t, res.FromRaw(tc.resource))
			scope.Attributes().Clear()
			require.NoError(t, scope.Attributes().FromRaw(tc.scope))
			scope.SetName(tc.scopeName)
			assert.Equal(t, tc.want, Route(Traces, rec, scope, res).Name)
			if !Routes(rec) {
				assert.Equal(t, tc.want, Route(Traces, pcommon.NewMap(), scope, res).Name, "the scope's index serves")
			}
		})
	}
}
