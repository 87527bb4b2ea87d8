package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	semconv "go.opentelemetry.io/otel/semconv/v1.40.0"
	"go.opentelemetry.io/otel/trace"
)

// maxDDSizeRatio is how much larger than the OpenTelemetry SDK's document for the same span a
// Datadog tracer's may be, in bytes of the document's _source.
const maxDDSizeRatio = 1.3

// TestDDTraceSpanSize sends the same request's trace twice: from the express app on dd-trace-js
// (a server span GET /users/:id and its HTTP client child), and from the OpenTelemetry Go SDK over
// OTLP/HTTP, with the attributes an OpenTelemetry-instrumented HTTP server and client record for
// it (the values copied from the Datadog run). It prints the documents' sizes per span kind and
// fails when a Datadog document is more than maxDDSizeRatio times the OTLP one: the semconv
// mapping must not carry the tracer's bookkeeping into Elasticsearch.
//
// Like with like: the app runs without DD_ENV, DD_VERSION and the reported host name (which the
// OTLP resource would otherwise lack), with the client IP on (the OTLP server span has
// client.address); the Datadog resource still carries what every tracer sends
// (process.runtime.version, process.pid, service.instance.id). Both services' names have the same
// length.
func TestDDTraceSpanSize(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	node := npmCI(ctx, t)
	g := startGateway(t, "default.yaml")

	const ddService, otelService = "e2e-size-ddjs", "e2e-size-otlp"
	cmd := exec.CommandContext(ctx, node, "app.js", "--service", ddService, "--requests", "1", "--failures", "0")
	cmd.Dir = ddNodeDir
	cmd.Env = ddClientEnv("DD_TRACE_AGENT_URL=http://"+g.endpoints.DDTrace, "DD_TRACE_CLIENT_IP_ENABLED=true")
	out := runDDProgram(t, cmd)
	reqs := parseJSONLines[ddAppRequest](t, out)
	if len(reqs) != 1 {
		t.Fatalf("the app printed %d requests, want 1:\n%s", len(reqs), out)
	}
	dd := reqs[0]

	otelServer, otelClient := sendOTLPRequestTrace(ctx, t, g, otelService, dd)

	// The Datadog trace: server, client and inventory server span; the OTLP one: server, client.
	waitCtx, wcancel := context.WithTimeout(ctx, 30*time.Second)
	defer wcancel()
	err := g.es.WaitForDocuments(waitCtx, 5)
	g.stopAndFlush(t)
	docs := decodeAppDocs(t, g.es.Documents())
	if err != nil {
		logAppDocs(t, docs, "")
		t.Fatalf("want 5 span documents: %v; stand-in stats: %+v", err, g.es.Stats())
	}
	byID := map[string]appDoc{}
	for _, d := range docs {
		if strings.HasPrefix(d.index, "traces-") {
			byID[d.SpanID] = d
		}
	}
	for _, c := range []struct {
		kind           string
		ddID, otelID   string
		ddName, otName string
	}{
		{"server", dd.ServerSpanID, otelServer, "GET " + dd.Route, "GET " + dd.Route},
		{"client", dd.ClientSpanID, otelClient, "GET", "GET"},
	} {
		ddDoc, ok1 := byID[c.ddID]
		otDoc, ok2 := byID[c.otelID]
		if !ok1 || !ok2 {
			logAppDocs(t, docs, "")
			t.Fatalf("%s span: no document for the Datadog span %s (%v) or the OTLP span %s (%v)", c.kind, c.ddID, ok1, c.otelID, ok2)
		}
		ddSize, otSize := len(ddDoc.source), len(otDoc.source)
		ratio := float64(ddSize) / float64(otSize)
		t.Logf("%s span document: dd-trace-js %d bytes, OpenTelemetry SDK %d bytes, ratio %.2f (at most %.1f)", c.kind, ddSize, otSize, ratio, maxDDSizeRatio)
		for _, part := range []string{"attributes", "resource", "scope"} {
			t.Logf("  %-10s dd-trace-js %4d bytes, OpenTelemetry SDK %4d bytes", part, partSize(t, ddDoc.source, part), partSize(t, otDoc.source, part))
		}
		t.Logf("  dd-trace-js:       %s", ddDoc.source)
		t.Logf("  OpenTelemetry SDK: %s", otDoc.source)
		if ddDoc.Name != c.ddName || otDoc.Name != c.otName {
			t.Errorf("%s span: names %q (dd) and %q (OTLP), want %q: not the same span", c.kind, ddDoc.Name, otDoc.Name, c.ddName)
		}
		if ratio > maxDDSizeRatio {
			t.Errorf("%s span: the dd-trace-js document is %d bytes, %.2f times the OpenTelemetry SDK's %d (at most %.1f)", c.kind, ddSize, ratio, otSize, maxDDSizeRatio)
		}
	}
}

// sendOTLPRequestTrace sends, with the OpenTelemetry SDK over OTLP/HTTP, the server span and HTTP
// client span an OpenTelemetry-instrumented app records for the request dd made, and returns their
// span ids.
func sendOTLPRequestTrace(ctx context.Context, t *testing.T, g *gateway, service string, dd ddAppRequest) (serverID, clientID string) {
	t.Helper()
	exp, err := otlptracehttp.New(ctx, otlptracehttp.WithEndpoint(g.endpoints.OTLPHTTP), otlptracehttp.WithInsecure(),
		otlptracehttp.WithRetry(otlptracehttp.RetryConfig{Enabled: false}))
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := exp.Shutdown(context.WithoutCancel(ctx)); err != nil {
			t.Error(err)
		}
	}()
	res, err := resource.Merge(resource.Default(), resource.NewSchemaless(attribute.String("service.name", service)))
	if err != nil {
		t.Fatal(err)
	}
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithResource(res), sdktrace.WithSpanProcessor(rec))
	// As an OpenTelemetry HTTP instrumentation names itself (with its semantic conventions' schema).
	tracer := tp.Tracer("@opentelemetry/instrumentation-http", trace.WithInstrumentationVersion("0.57.0"), trace.WithSchemaURL(semconv.SchemaURL))
	web, down := parseURL(t, dd.URL), parseURL(t, dd.DownstreamURL)

	start := time.Now()
	sctx, server := tracer.Start(ctx, "GET "+dd.Route, trace.WithSpanKind(trace.SpanKindServer), trace.WithTimestamp(start),
		trace.WithAttributes(
			semconv.HTTPRequestMethodKey.String("GET"),
			semconv.HTTPRoute(dd.Route),
			semconv.URLPath(web.Path),
			semconv.URLQuery(web.RawQuery),
			semconv.URLScheme("http"),
			semconv.UserAgentOriginal(appUserAgent),
			semconv.ClientAddress("127.0.0.1"),
			semconv.ServerAddress(web.Hostname()),
		))
	_, client := tracer.Start(sctx, "GET", trace.WithSpanKind(trace.SpanKindClient), trace.WithTimestamp(start.Add(time.Millisecond)),
		trace.WithAttributes(
			semconv.HTTPRequestMethodKey.String("GET"),
			semconv.URLFull(dd.DownstreamURL),
			semconv.ServerAddress(down.Hostname()),
			semconv.ServerPort(port(t, down)),
		))
	client.SetAttributes(semconv.HTTPResponseStatusCode(200))
	client.End(trace.WithTimestamp(start.Add(3 * time.Millisecond)))
	server.SetAttributes(semconv.HTTPResponseStatusCode(dd.Status))
	server.End(trace.WithTimestamp(start.Add(5 * time.Millisecond)))

	if err := exp.ExportSpans(ctx, rec.Ended()); err != nil {
		t.Fatalf("OTLP export: %v", err)
	}
	return server.SpanContext().SpanID().String(), client.SpanContext().SpanID().String()
}

// partSize is the size of one top-level field of a document's JSON.
func partSize(t *testing.T, src json.RawMessage, field string) int {
	t.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal(src, &m); err != nil {
		t.Fatal(fmt.Errorf("document: %w", err))
	}
	return len(m[field])
}
