package elasticmappingprocessor

import (
	"context"
	"testing"

	"github.com/elastic/opentelemetry-collector-components/processor/elasticapmprocessor"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/processor/processortest"
)

// TestFillAPMInputs: one vector per input the APM enrichment needs under another name, with the
// receivers' own attribute names (Jaeger's OpenTracing tags, Zipkin's remote endpoint, ddtrace's
// fully qualified rpc.method); what the span already has wins.
func TestFillAPMInputs(t *testing.T) {
	for _, tt := range []struct {
		name  string
		kind  ptrace.SpanKind
		attrs map[string]any
		want  map[string]any // added attributes
	}{
		{"jaeger sql", ptrace.SpanKindClient, map[string]any{"db.type": "sql", "db.instance": "shop"}, map[string]any{"db.system.name": "other_sql", "db.namespace": "shop"}},
		{"jaeger redis", ptrace.SpanKindClient, map[string]any{"db.type": "redis"}, map[string]any{"db.system.name": "redis"}},
		{"db.system wins", ptrace.SpanKindClient, map[string]any{"db.type": "sql", "db.system": "mysql", "db.name": "a", "db.instance": "b"}, map[string]any{}},
		{"jaeger peer", ptrace.SpanKindClient, map[string]any{"peer.hostname": "db1", "peer.port": "5432"}, map[string]any{"server.address": "db1", "server.port": int64(5432)}},
		{"zipkin ip only", ptrace.SpanKindClient, map[string]any{"net.peer.ip": "10.0.0.7", "net.peer.port": int64(6379)}, map[string]any{"server.address": "10.0.0.7", "server.port": int64(6379)}},
		{"zipkin ip, newer name", ptrace.SpanKindProducer, map[string]any{"network.peer.address": "10.0.0.8"}, map[string]any{"server.address": "10.0.0.8"}},
		{"server.address wins", ptrace.SpanKindClient, map[string]any{"server.address": "a", "net.peer.ip": "10.0.0.7"}, map[string]any{}},
		{"an url is the target", ptrace.SpanKindClient, map[string]any{"url.full": "http://a/", "net.peer.ip": "10.0.0.7"}, map[string]any{}},
		{"not an exit span", ptrace.SpanKindServer, map[string]any{"net.peer.ip": "10.0.0.7"}, map[string]any{}},
		{"bad port", ptrace.SpanKindClient, map[string]any{"peer.hostname": "db1", "peer.port": "x"}, map[string]any{"server.address": "db1"}},
		{"messaging", ptrace.SpanKindProducer, map[string]any{"message_bus.destination": "orders"}, map[string]any{"messaging.destination.name": "orders"}},
		{"rpc service from the method", ptrace.SpanKindClient, map[string]any{"rpc.method": "shop.Cart/Get"}, map[string]any{"rpc.service": "shop.Cart"}},
		{"rpc short method", ptrace.SpanKindClient, map[string]any{"rpc.method": "Get"}, map[string]any{}},
		{"rpc service wins", ptrace.SpanKindClient, map[string]any{"rpc.method": "shop.Cart/Get", "rpc.service": "Cart"}, map[string]any{}},
		{"zipkin string status", ptrace.SpanKindServer, map[string]any{"http.status_code": "503"}, map[string]any{"http.response.status_code": int64(503)}},
		{"integer status kept", ptrace.SpanKindServer, map[string]any{"http.status_code": int64(404)}, map[string]any{}},
		{"status code wins", ptrace.SpanKindServer, map[string]any{"http.status_code": "503", "http.response.status_code": int64(500)}, map[string]any{}},
		{"not a status", ptrace.SpanKindServer, map[string]any{"http.status_code": "ok"}, map[string]any{}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			span := ptrace.NewSpan()
			span.SetKind(tt.kind)
			require.NoError(t, span.Attributes().FromRaw(tt.attrs))
			added := fillAPMInputs(span, false)
			got := span.Attributes().AsRaw()
			for k, v := range tt.attrs {
				assert.Equal(t, v, got[k], "the span's own %s is kept", k)
				delete(got, k)
			}
			assert.Equal(t, tt.want, got)
			assert.Equal(t, len(tt.want) > 0, added)
		})
	}
}

// TestFillAPMInputsChanges: what fillAPMInputs changes rather than adds. Datadog's span.type
// (only on a Datadog tracer's span) moves to datadog.span.type; an unspecified kind becomes
// internal; an OpenTracing error log becomes an exception event.
func TestFillAPMInputsChanges(t *testing.T) {
	for _, tt := range []struct {
		name      string
		kind      ptrace.SpanKind
		datadog   bool
		attrs     map[string]any
		wantKind  ptrace.SpanKind
		wantAttrs map[string]any
		changed   bool
	}{
		{
			"datadog http", ptrace.SpanKindClient, true,
			map[string]any{"span.type": "http", "url.full": "http://a/"},
			ptrace.SpanKindClient,
			map[string]any{"datadog.span.type": "http", "url.full": "http://a/"},
			true,
		},
		{
			"datadog type already aside", ptrace.SpanKindServer, true,
			map[string]any{"span.type": "web", "datadog.span.type": "x"},
			ptrace.SpanKindServer,
			map[string]any{"datadog.span.type": "x"},
			true,
		},
		{
			"another tracer's span.type stays", ptrace.SpanKindClient, false,
			map[string]any{"span.type": "db"},
			ptrace.SpanKindClient,
			map[string]any{"span.type": "db"},
			false,
		},
		{
			"zipkin string integers", ptrace.SpanKindClient, false,
			map[string]any{"http.response.status_code": "503", "server.address": "db", "server.port": "5432", "url.port": "8443", "rpc.grpc.status_code": "14"},
			ptrace.SpanKindClient,
			map[string]any{"http.response.status_code": int64(503), "server.address": "db", "server.port": int64(5432), "url.port": int64(8443), "rpc.grpc.status_code": int64(14)},
			true,
		},
		{
			"zipkin peer port", ptrace.SpanKindClient, false,
			map[string]any{"net.peer.name": "db", "net.peer.port": "6379"},
			ptrace.SpanKindClient,
			map[string]any{"net.peer.name": "db", "net.peer.port": int64(6379)},
			true,
		},
		{
			"not an integer stays a string", ptrace.SpanKindServer, false,
			map[string]any{"http.response.status_code": "n/a", "server.port": "http", "tracegate.port": "80"},
			ptrace.SpanKindServer,
			map[string]any{"http.response.status_code": "n/a", "server.port": "http", "tracegate.port": "80"},
			false,
		},
		{"unspecified kind", ptrace.SpanKindUnspecified, false, map[string]any{}, ptrace.SpanKindInternal, map[string]any{}, true},
		{"a kind stays", ptrace.SpanKindConsumer, false, map[string]any{}, ptrace.SpanKindConsumer, map[string]any{}, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			span := ptrace.NewSpan()
			span.SetKind(tt.kind)
			require.NoError(t, span.Attributes().FromRaw(tt.attrs))
			changed := fillAPMInputs(span, tt.datadog)
			assert.Equal(t, tt.wantKind, span.Kind())
			assert.Equal(t, tt.wantAttrs, span.Attributes().AsRaw())
			assert.Equal(t, tt.changed, changed)
		})
	}
}

// TestFillAPMInputsErrorLogs: OpenTracing's error log fields (error.kind, error.object, message,
// stack, as Jaeger clients log an error) become an exception event's; other events stay.
func TestFillAPMInputsErrorLogs(t *testing.T) {
	for _, tt := range []struct {
		name     string
		event    string
		attrs    map[string]any
		wantName string
		added    map[string]any
	}{
		{
			"jaeger error log", "error",
			map[string]any{"error.kind": "NotFoundError", "message": "no profile", "stack": "main.go:42"},
			"exception",
			map[string]any{"exception.type": "NotFoundError", "exception.message": "no profile", "exception.stacktrace": "main.go:42"},
		},
		{"error object only", "error", map[string]any{"error.object": "Error: boom"}, "exception", map[string]any{"exception.message": "Error: boom"}},
		{"exception fields win", "error", map[string]any{"error.kind": "A", "exception.type": "B"}, "exception", map[string]any{}},
		{"an error event without error fields", "error", map[string]any{"level": "warn"}, "error", map[string]any{}},
		{"another event", "retry", map[string]any{"message": "again"}, "retry", map[string]any{}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			span := ptrace.NewSpan()
			span.SetKind(ptrace.SpanKindInternal)
			ev := span.Events().AppendEmpty()
			ev.SetName(tt.event)
			require.NoError(t, ev.Attributes().FromRaw(tt.attrs))
			changed := fillAPMInputs(span, false)
			assert.Equal(t, tt.wantName, ev.Name())
			got := ev.Attributes().AsRaw()
			for k, v := range tt.attrs {
				assert.Equal(t, v, got[k], "the log's own %s is kept", k)
				delete(got, k)
			}
			assert.Equal(t, tt.added, got)
			assert.Equal(t, tt.wantName != tt.event, changed)
		})
	}
}

// TestFillAPMResource: a Jaeger client's version as the Jaeger receiver writes it becomes the
// agent name and version APM Server's Jaeger intake gave; an SDK's or agent's own name wins; a
// Datadog tracer's resource is told apart.
func TestFillAPMResource(t *testing.T) {
	for _, tt := range []struct {
		name    string
		attrs   map[string]any
		added   map[string]any
		datadog bool
	}{
		{"jaeger go", map[string]any{"opencensus.exporterversion": "Jaeger-Go-2.30.0"}, map[string]any{"agent.name": "Jaeger/Go", "agent.version": "2.30.0"}, false},
		{"jaeger, no language", map[string]any{"opencensus.exporterversion": "Jaeger-"}, map[string]any{"agent.name": "Jaeger"}, false},
		{"agent name wins", map[string]any{"opencensus.exporterversion": "Jaeger-Go-2.30.0", "agent.name": "java"}, map[string]any{}, false},
		{"an sdk names itself", map[string]any{"opencensus.exporterversion": "Jaeger-Go-2.30.0", "telemetry.sdk.name": "opentelemetry"}, map[string]any{}, false},
		{"opencensus", map[string]any{"opencensus.exporterversion": "OpenCensus-0.1"}, map[string]any{}, false},
		{"datadog", map[string]any{"telemetry.sdk.name": "datadog"}, map[string]any{}, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			res := pcommon.NewResource()
			require.NoError(t, res.Attributes().FromRaw(tt.attrs))
			assert.Equal(t, tt.datadog, fillAPMResource(res))
			got := res.Attributes().AsRaw()
			for k, v := range tt.attrs {
				assert.Equal(t, v, got[k], "the resource's own %s is kept", k)
				delete(got, k)
			}
			assert.Equal(t, tt.added, got)
		})
	}
}

// TestStringIntegersThroughTheEnrichment: spans as Zipkin delivers them from an OpenTelemetry SDK
// (every attribute a string), through the mapping with apm_inputs and Elastic's enrichment: the
// 503 makes a failed "HTTP 5xx" transaction, the port is part of the exit span's target.
func TestStringIntegersThroughTheEnrichment(t *testing.T) {
	sink := &consumertest.TracesSink{}
	ef := elasticapmprocessor.NewFactory()
	enrich, err := ef.CreateTraces(context.Background(), processortest.NewNopSettings(ef.Type()), ef.CreateDefaultConfig(), sink)
	require.NoError(t, err)
	require.NoError(t, enrich.Start(context.Background(), componenttest.NewNopHost()))
	defer func() { require.NoError(t, enrich.Shutdown(context.Background())) }()
	mf := NewFactory()
	mapping, err := mf.CreateTraces(context.Background(), processortest.NewNopSettings(mf.Type()), &Config{Mode: ModeOTel, APMInputs: true}, enrich)
	require.NoError(t, err)

	td := ptrace.NewTraces()
	spans := td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans()
	server := spans.AppendEmpty()
	server.SetTraceID(pcommon.TraceID{1})
	server.SetSpanID(pcommon.SpanID{1})
	server.SetKind(ptrace.SpanKindServer)
	require.NoError(t, server.Attributes().FromRaw(map[string]any{"http.request.method": "GET", "http.response.status_code": "503"}))
	client := spans.AppendEmpty()
	client.SetTraceID(pcommon.TraceID{1})
	client.SetSpanID(pcommon.SpanID{2})
	client.SetParentSpanID(pcommon.SpanID{1})
	client.SetKind(ptrace.SpanKindClient)
	require.NoError(t, client.Attributes().FromRaw(map[string]any{"http.request.method": "GET", "server.address": "db", "server.port": "5432"}))
	require.NoError(t, mapping.ConsumeTraces(context.Background(), td))

	out := sink.AllTraces()[0].ResourceSpans().At(0).ScopeSpans().At(0).Spans()
	got := func(i int, k string) any { v, _ := out.At(i).Attributes().Get(k); return v.AsRaw() }
	assert.Equal(t, "HTTP 5xx", got(0, "transaction.result"))
	assert.Equal(t, "failure", got(0, "event.outcome"))
	assert.Equal(t, "db:5432", got(1, "service.target.name"))
	assert.Equal(t, "db:5432", got(1, "span.destination.service.resource"))
}
