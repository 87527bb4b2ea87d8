package elasticmappingprocessor

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/processor/processortest"

	"github.com/tracegate/tracegate/internal/estemplates"
	"github.com/tracegate/tracegate/internal/testbed/esexportertest"
	"github.com/tracegate/tracegate/internal/testbed/esstandin"
	"github.com/tracegate/tracegate/processor/elasticmappingprocessor/internal/metadata"
)

// testTraces is one resource with a successful span and a failed one carrying an exception event.
func testTraces() ptrace.Traces {
	td := ptrace.NewTraces()
	rs := td.ResourceSpans().AppendEmpty()
	rs.Resource().Attributes().PutStr("service.name", "checkout")
	spans := rs.ScopeSpans().AppendEmpty().Spans()
	start := pcommon.NewTimestampFromTime(time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC))
	ok := spans.AppendEmpty()
	ok.SetTraceID(pcommon.TraceID{1})
	ok.SetSpanID(pcommon.SpanID{1})
	ok.SetName("GET /cart")
	ok.SetStartTimestamp(start)
	ok.SetEndTimestamp(start + 2_500_000) // 2.5 ms
	ok.Status().SetCode(ptrace.StatusCodeOk)
	failed := spans.AppendEmpty()
	failed.SetTraceID(pcommon.TraceID{1})
	failed.SetSpanID(pcommon.SpanID{2})
	failed.SetParentSpanID(pcommon.SpanID{1})
	failed.SetName("SELECT cart")
	failed.SetStartTimestamp(start)
	failed.SetEndTimestamp(start + 1_000)
	failed.Status().SetCode(ptrace.StatusCodeError)
	ev := failed.Events().AppendEmpty()
	ev.SetName("exception")
	ev.Attributes().PutStr("exception.type", "*net.OpError")
	ev.Attributes().PutStr("exception.message", "connection refused")
	ev.Attributes().PutStr("exception.stacktrace", "main.query()\n\tdb.go:12")
	return td
}

func newTestProcessor(t *testing.T, cfg *Config, next consumer.Traces) consumer.Traces {
	t.Helper()
	p, err := NewFactory().CreateTraces(context.Background(), processortest.NewNopSettings(metadata.Type), cfg, next)
	require.NoError(t, err)
	return p
}

// TestDurationOnlyFromBothTimestamps: span.duration.us comes from a start and an end, never from a
// missing start (decades) or an end before the start; a span over 2^63 ns stays positive.
func TestDurationOnlyFromBothTimestamps(t *testing.T) {
	for _, tt := range []struct {
		name       string
		start, end pcommon.Timestamp
		want       int64 // -1: no field
	}{
		{"2.5 ms", 1_000_000_000, 1_002_500_000, 2500},
		{"zero length", 5, 5, 0},
		{"no start", 0, 1_700_000_000_000_000_000, -1},
		{"no end", 1_700_000_000_000_000_000, 0, -1},
		{"end before start", 2_000, 1_000, -1},
		{"longer than 2^63 ns", 1, 1<<63 + 1001, (1<<63 + 1000) / 1000},
	} {
		t.Run(tt.name, func(t *testing.T) {
			span := ptrace.NewSpan()
			span.SetStartTimestamp(tt.start)
			span.SetEndTimestamp(tt.end)
			addDuration(span)
			v, ok := span.Attributes().Get("span.duration.us")
			if tt.want < 0 {
				assert.False(t, ok, "a duration was written")
				return
			}
			require.True(t, ok)
			assert.Equal(t, tt.want, v.Int())
		})
	}
}

func TestProcessTraces(t *testing.T) {
	for _, tt := range []struct {
		name         string
		cfg          Config
		wantDuration []int64 // per span, -1 = absent
		wantErrMsg   string  // on the failed span, "" = absent
	}{
		{"otel sets only the mode", Config{Mode: ModeOTel, ECSDuration: true, ECSErrors: true}, []int64{-1, -1}, ""},
		{"ecs fills duration and errors", Config{Mode: ModeECS, ECSDuration: true, ECSErrors: true}, []int64{2500, 1}, "connection refused"},
		{"ecs with both off", Config{Mode: ModeECS}, []int64{-1, -1}, ""},
		{"none", Config{Mode: ModeNone, ECSDuration: true, ECSErrors: true}, []int64{-1, -1}, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			sink := new(consumertest.TracesSink)
			cfg := tt.cfg
			require.NoError(t, newTestProcessor(t, &cfg, sink).ConsumeTraces(context.Background(), testTraces()))
			got := sink.AllTraces()[0]
			ss := got.ResourceSpans().At(0).ScopeSpans().At(0)
			mode, ok := ss.Scope().Attributes().Get(MappingModeAttribute)
			require.True(t, ok)
			assert.Equal(t, tt.cfg.Mode, mode.Str())
			for i, want := range tt.wantDuration {
				d, has := ss.Spans().At(i).Attributes().Get("span.duration.us")
				if want < 0 {
					assert.False(t, has, "span %d has span.duration.us", i)
				} else {
					assert.Equal(t, want, d.Int(), "span %d", i)
				}
			}
			msg, ok := ss.Spans().At(1).Attributes().Get("error.message")
			if tt.wantErrMsg == "" {
				assert.False(t, ok)
			} else {
				assert.Equal(t, tt.wantErrMsg, msg.Str())
				typ, _ := ss.Spans().At(1).Attributes().Get("error.type")
				stack, _ := ss.Spans().At(1).Attributes().Get("error.stack_trace")
				assert.Equal(t, "*net.OpError", typ.Str())
				assert.Equal(t, "main.query()\n\tdb.go:12", stack.Str())
			}
		})
	}
}

func TestExistingErrorFieldsWin(t *testing.T) {
	td := testTraces()
	span := td.ResourceSpans().At(0).ScopeSpans().At(0).Spans().At(1)
	span.Attributes().PutStr("error.message", "from the tracer")
	sink := new(consumertest.TracesSink)
	require.NoError(t, newTestProcessor(t, &Config{Mode: ModeECS, ECSErrors: true}, sink).ConsumeTraces(context.Background(), td))
	got, _ := sink.AllTraces()[0].ResourceSpans().At(0).ScopeSpans().At(0).Spans().At(1).Attributes().Get("error.message")
	assert.Equal(t, "from the tracer", got.Str())
}

// ecsDocs runs the processor (or only sets the mode, when fill is false) and the real v0.148.0
// exporter against an 8.13 stand-in with an ECS data stream template, and returns the span
// documents.
func ecsDocs(t *testing.T, fill bool) []map[string]any {
	t.Helper()
	es := esexportertest.StartStandin(t, esstandin.Options{Version: "8.13.4"})
	es.PutTemplate(esstandin.IndexTemplate{Name: "traces-ecs", Patterns: []string{"traces-*-*"}, Priority: 200, DataStream: true})
	exp := esexportertest.NewExporter(t, es.URL(), map[string]any{"sending_queue": map[string]any{"enabled": false}})
	cfg := &Config{Mode: ModeECS, ECSDuration: fill, ECSErrors: fill}
	require.NoError(t, newTestProcessor(t, cfg, exp).ConsumeTraces(context.Background(), testTraces()))
	var docs []map[string]any
	for _, d := range es.Documents() {
		var m map[string]any
		require.NoError(t, json.Unmarshal(d.Source, &m))
		require.True(t, strings.HasPrefix(d.Index, "traces-"), "document in %s: ecs mode must not write span events elsewhere", d.Index)
		docs = append(docs, m)
	}
	require.Len(t, docs, 2, "one document per span, and nothing for the exception event")
	return docs
}

func field(doc map[string]any, path string) (any, bool) {
	var cur any = doc
	for p := range strings.SplitSeq(path, ".") {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil, false
		}
		if v, ok := m[p]; ok {
			cur = v
			continue
		}
		return nil, false
	}
	return cur, true
}

// TestECSGapsOfTheExporter shows each gap of the v0.148.0 exporter's ECS mapping with the real
// exporter, and what the processor closes.
func TestECSGapsOfTheExporter(t *testing.T) {
	bare := ecsDocs(t, false)
	for _, doc := range bare {
		_, hasDuration := field(doc, "span.duration.us")
		assert.False(t, hasDuration, "gap 1: the exporter writes no duration in ecs mode")
		_, hasError := field(doc, "error.message")
		assert.False(t, hasError, "gap 2: span events (the exception) are dropped in ecs mode")
		mode, leaks := field(doc, "elastic.mapping.mode")
		assert.True(t, leaks, "gap 3: the mapping attribute leaks into the document")
		assert.Equal(t, "ecs", mode)
	}
	filled := ecsDocs(t, true)
	byName := map[string]map[string]any{}
	for _, doc := range filled {
		name, _ := field(doc, "span.name")
		byName[name.(string)] = doc
	}
	d, _ := field(byName["GET /cart"], "span.duration.us")
	assert.EqualValues(t, 2500, d)
	msg, _ := field(byName["SELECT cart"], "error.message")
	assert.Equal(t, "connection refused", msg)
	typ, _ := field(byName["SELECT cart"], "error.type")
	assert.Equal(t, "*net.OpError", typ)
	outcome, _ := field(byName["SELECT cart"], "event.outcome")
	assert.Equal(t, "failure", outcome)
	_, leaks := field(byName["GET /cart"], "elastic.mapping.mode")
	assert.True(t, leaks, "gap 3 stays: the pipeline cannot remove a scope attribute the exporter reads")
}

// TestScalarsOffECSObjects: an attribute named like a field the ECS template maps as an object
// (Zipkin's and Jaeger's `error` tag above all) would make Elasticsearch reject the document. In
// ecs mode it moves into that object; the documents the real exporter writes then have objects
// there. Other modes are left alone.
func TestScalarsOffECSObjects(t *testing.T) {
	tests := []struct {
		name  string
		attrs map[string]any
		want  map[string]any // attributes after the processor
	}{
		{"zipkin error message", map[string]any{"error": "connection refused"}, map[string]any{"error.message": "connection refused"}},
		{"error flag", map[string]any{"error": "true"}, map[string]any{"error.value": "true"}},
		{"boolean error", map[string]any{"error": true}, map[string]any{"error.value": true}},
		{"message already set", map[string]any{"error": "boom", "error.message": "first"}, map[string]any{"error.message": "first", "error.value": "boom"}},
		{"every name taken", map[string]any{"host": "a", "host.value": "b", "host.original": "c"}, map[string]any{"host.value": "b", "host.original": "c", "host.value2": "a"}},
		{"other object names", map[string]any{"http": "x", "service": int64(3), "url": "u"}, map[string]any{"http.value": "x", "service.value": int64(3), "url.value": "u"}},
		{"an object stays", map[string]any{"error": map[string]any{"message": "m"}}, map[string]any{"error": map[string]any{"message": "m"}}},
		{"dotted keys stay", map[string]any{"error.type": "E", "http.method": "GET"}, map[string]any{"error.type": "E", "http.method": "GET"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, mode := range []string{ModeECS, ModeOTel} {
				td := ptrace.NewTraces()
				rs := td.ResourceSpans().AppendEmpty()
				require.NoError(t, rs.Resource().Attributes().FromRaw(tt.attrs))
				span := rs.ScopeSpans().AppendEmpty().Spans().AppendEmpty()
				require.NoError(t, span.Attributes().FromRaw(tt.attrs))
				sink := new(consumertest.TracesSink)
				require.NoError(t, newTestProcessor(t, &Config{Mode: mode}, sink).ConsumeTraces(context.Background(), td))
				out := sink.AllTraces()[0].ResourceSpans().At(0)
				want := tt.want
				if mode != ModeECS {
					want = tt.attrs
				}
				assert.Equal(t, want, out.ScopeSpans().At(0).Spans().At(0).Attributes().AsRaw(), "%s: span", mode)
				assert.Equal(t, want, out.Resource().Attributes().AsRaw(), "%s: resource", mode)
			}
		})
	}
}

// TestECSDocumentsHaveObjectsWhereTheTemplateDoes: through the real exporter, a Zipkin-style
// failed span's document holds error as an object with the message, not the plain value that
// Elasticsearch rejects against the ECS template.
func TestECSDocumentsHaveObjectsWhereTheTemplateDoes(t *testing.T) {
	es := esexportertest.StartStandin(t, esstandin.Options{Version: "8.13.4"})
	es.PutTemplate(esstandin.IndexTemplate{Name: "traces-ecs", Patterns: []string{"traces-*-*"}, Priority: 200, DataStream: true})
	exp := esexportertest.NewExporter(t, es.URL(), map[string]any{"sending_queue": map[string]any{"enabled": false}})
	td := testTraces()
	failed := td.ResourceSpans().At(0).ScopeSpans().At(0).Spans().At(1)
	failed.Events().RemoveIf(func(ptrace.SpanEvent) bool { return true }) // Zipkin sends none
	failed.Attributes().PutStr("error", "connection refused")
	require.NoError(t, newTestProcessor(t, &Config{Mode: ModeECS}, exp).ConsumeTraces(context.Background(), td))
	var found bool
	for _, d := range es.Documents() {
		var doc map[string]any
		require.NoError(t, json.Unmarshal(d.Source, &doc))
		if name, _ := field(doc, "span.name"); name != "SELECT cart" {
			continue
		}
		found = true
		_, isObject := doc["error"].(map[string]any)
		require.True(t, isObject, "error is %#v, which the ECS template's object mapping refuses", doc["error"])
		msg, _ := field(doc, "error.message")
		assert.Equal(t, "connection refused", msg)
	}
	assert.True(t, found)
}

// TestECSObjectFieldsFromTheTemplate: the fields moved off are the ECS template's object fields.
func TestECSObjectFieldsFromTheTemplate(t *testing.T) {
	want := map[string]bool{
		"data_stream": true, "trace": true, "span": true, "parent": true, "event": true,
		"service": true, "error": true, "http": true, "url": true, "host": true, "elastic": true,
	}
	got, err := estemplates.ECSObjectFields()
	require.NoError(t, err)
	assert.Equal(t, want, got)
	assert.False(t, got["@timestamp"], "a date, not an object")
}
