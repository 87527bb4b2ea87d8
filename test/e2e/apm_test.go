package e2e

// The Kibana APM path (configs/elasticsearch/apm.yaml) through the binary: one OTLP trace (an HTTP
// server transaction, an outgoing HTTP call, a failing internal step with an exception) becomes
// the documents the APM UI reads: Elastic's enrichment on the span documents, an error document
// from the exception event, and, once the connector's 1-minute window has ended, the aggregated
// service_summary, service_transaction, transaction and service_destination metrics, each in its
// time-series data stream. The fields checked are among those Kibana's APM queries read (Kibana's
// x-pack/plugins/apm/dev_docs/apm_queries.md). Then a clean shutdown: the windows it exports early
// arrive after the restart.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
	"go.yaml.in/yaml/v3"

	"github.com/tracegate/tracegate/internal/testbed/esstandin"
)

// apmDoc is an otel-mode document as the APM checks read it: attributes and metrics keep their
// dotted names as keys.
type apmDoc struct {
	index        string
	raw          json.RawMessage
	TraceID      string         `json:"trace_id"`
	SpanID       string         `json:"span_id"`
	ParentSpanID string         `json:"parent_span_id"`
	Name         string         `json:"name"`
	Kind         string         `json:"kind"`
	EventName    string         `json:"event_name"`
	Attributes   map[string]any `json:"attributes"`
	Metrics      map[string]any `json:"metrics"`
	DocCount     *float64       `json:"_doc_count"`
	Resource     struct {
		Attributes map[string]any `json:"attributes"`
	} `json:"resource"`
}

func (d apmDoc) attr(k string) string {
	v, ok := d.Attributes[k]
	if !ok {
		return ""
	}
	return fmt.Sprint(v)
}

func (d apmDoc) number(k string) float64 {
	f, _ := d.Attributes[k].(float64)
	return f
}

// apmTrace is what sendAPMTrace sent.
type apmTrace struct {
	traceID, rootID, clientID, errorID string
}

const (
	apmTransactionName = "GET /users/{id}"
	apmDestination     = "inventory.internal:8081"
)

// sendAPMTrace sends one trace over OTLP/HTTP with the OpenTelemetry Go SDK: a SERVER root with
// the HTTP server conventions, a CLIENT child calling another service over HTTP, and an INTERNAL
// child that fails with a recorded exception.
func sendAPMTrace(ctx context.Context, t *testing.T, endpoint, service string) apmTrace {
	t.Helper()
	exp, err := otlptracehttp.New(ctx, otlptracehttp.WithEndpoint(endpoint), otlptracehttp.WithInsecure(),
		otlptracehttp.WithRetry(otlptracehttp.RetryConfig{Enabled: false}))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = exp.Shutdown(context.WithoutCancel(ctx)) }()
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(
		sdktrace.WithResource(resource.NewSchemaless(
			attribute.String("service.name", service),
			attribute.String("service.version", "1.2.3"),
			attribute.String("deployment.environment.name", "e2e"),
			attribute.String("telemetry.sdk.name", "opentelemetry"),
			attribute.String("telemetry.sdk.language", "go"),
			attribute.String("telemetry.sdk.version", "1.40.0"),
		)),
		sdktrace.WithSpanProcessor(rec),
	)
	tracer := tp.Tracer("github.com/tracegate/tracegate/test/e2e")

	rootCtx, root := tracer.Start(ctx, apmTransactionName, trace.WithSpanKind(trace.SpanKindServer), trace.WithAttributes(
		attribute.String("http.request.method", "GET"),
		attribute.String("http.route", "/users/{id}"),
		attribute.Int("http.response.status_code", 200),
		attribute.String("url.scheme", "http"),
		attribute.String("url.path", "/users/42"),
		attribute.String("url.query", "fields=name"),
	))
	// The client call lasts 2 ms by its timestamps: a duration the aggregation sees as non-zero.
	callStart := time.Now()
	_, client := tracer.Start(rootCtx, "GET", trace.WithSpanKind(trace.SpanKindClient), trace.WithTimestamp(callStart), trace.WithAttributes(
		attribute.String("http.request.method", "GET"),
		attribute.String("url.full", "http://"+apmDestination+"/items/42"),
		attribute.String("server.address", "inventory.internal"),
		attribute.Int("server.port", 8081),
		attribute.Int("http.response.status_code", 200),
	))
	client.End(trace.WithTimestamp(callStart.Add(2 * time.Millisecond)))
	_, failing := tracer.Start(rootCtx, "load profile", trace.WithSpanKind(trace.SpanKindInternal))
	failing.RecordError(errors.New("profile 42 not found"))
	failing.SetStatus(codes.Error, "profile 42 not found")
	failing.End()
	root.End()

	if err := exp.ExportSpans(ctx, rec.Ended()); err != nil {
		t.Fatalf("export: %v", err)
	}
	return apmTrace{
		traceID:  root.SpanContext().TraceID().String(),
		rootID:   root.SpanContext().SpanID().String(),
		clientID: client.SpanContext().SpanID().String(),
		errorID:  failing.SpanContext().SpanID().String(),
	}
}

// apmDocs decodes the stand-in's documents of the traces, logs and metrics data streams.
func apmDocs(t *testing.T, es *esstandin.Server) []apmDoc {
	t.Helper()
	var out []apmDoc
	for _, d := range es.Documents() {
		var ad apmDoc
		if err := json.Unmarshal(d.Source, &ad); err != nil {
			t.Fatalf("document %s in %s: %v", d.ID, d.Index, err)
		}
		ad.index, ad.raw = d.Index, d.Source
		out = append(out, ad)
	}
	return out
}

// apmMetricSets are the connector's data streams of the 1m interval the test waits for.
var apmMetricSets = []string{"service_summary", "service_transaction", "transaction", "service_destination"}

// waitForDocs polls the stand-in until have says the documents are complete, or ctx ends; it
// returns the last documents seen.
func waitForDocs(ctx context.Context, t *testing.T, es *esstandin.Server, have func([]apmDoc) bool) ([]apmDoc, bool) {
	t.Helper()
	for {
		docs := apmDocs(t, es)
		if have(docs) {
			return docs, true
		}
		select {
		case <-ctx.Done():
			return docs, false
		case <-time.After(250 * time.Millisecond):
		}
	}
}

func TestAPMOverlay(t *testing.T) {
	// Mostly waiting for a minute's edge: run beside the other APM tests.
	t.Parallel()
	started := time.Now()
	g := startGatewayWith(t, gatewayOptions{config: "default.yaml", overlays: []string{"elasticsearch/apm.yaml"}, esVersion: "9.2.0"})
	service := "apm-e2e-" + newTestID()[:8]
	ctx := t.Context()
	tr := sendAPMTrace(ctx, t, g.endpoints.OTLPHTTP, service)
	sentAt := time.Now()

	// The span documents and the error document: at once (the buffer's 200 ms batching).
	spanCtx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	byKey := func(docs []apmDoc) map[string]apmDoc {
		m := map[string]apmDoc{}
		for _, d := range docs {
			if d.TraceID != tr.traceID {
				continue
			}
			switch {
			case strings.HasPrefix(d.index, "traces-") && strings.Contains(d.index, ".otel-"):
				m["span/"+d.SpanID] = d
			case strings.HasPrefix(d.index, "logs-") && strings.Contains(d.index, ".otel-") && d.EventName == "exception":
				m["error/"+d.SpanID] = d
			}
		}
		return m
	}
	docs, ok := waitForDocs(spanCtx, t, g.es, func(docs []apmDoc) bool { return len(byKey(docs)) == 4 })
	found := byKey(docs)
	if !ok {
		t.Fatalf("after 30 s the stand-in holds %d of the trace's 4 documents (3 spans, 1 error): %v", len(found), keysOf(found))
	}

	check := func(what string, d apmDoc, field, got, want string) {
		t.Helper()
		if got != want {
			t.Errorf("%s: %s = %q, want %q\n%s", what, field, got, want, d.raw)
		}
	}
	positive := func(what string, d apmDoc, field string) {
		t.Helper()
		if d.number(field) <= 0 {
			t.Errorf("%s: %s = %v, want a positive number\n%s", what, field, d.Attributes[field], d.raw)
		}
	}

	// The transaction: the SERVER root.
	tx := found["span/"+tr.rootID]
	check("transaction", tx, "kind", tx.Kind, "Server")
	check("transaction", tx, "parent_span_id", tx.ParentSpanID, "")
	for field, want := range map[string]string{
		"processor.event":    "transaction",
		"transaction.id":     tr.rootID,
		"transaction.name":   apmTransactionName,
		"transaction.type":   "request",
		"transaction.result": "HTTP 2xx",
		"transaction.root":   "true",
		"event.outcome":      "success",
	} {
		check("transaction", tx, "attributes."+field, tx.attr(field), want)
	}
	positive("transaction", tx, "transaction.duration.us")
	positive("transaction", tx, "timestamp.us")
	check("transaction", tx, "resource.attributes.agent.name", fmt.Sprint(tx.Resource.Attributes["agent.name"]), "opentelemetry/go")

	// The exit span: an HTTP call to another service, a dependency of this one.
	exit := found["span/"+tr.clientID]
	check("exit span", exit, "parent_span_id", exit.ParentSpanID, tr.rootID)
	for field, want := range map[string]string{
		"processor.event":                   "span",
		"span.type":                         "external",
		"span.subtype":                      "http",
		"event.outcome":                     "success",
		"service.target.type":               "http",
		"service.target.name":               apmDestination,
		"span.destination.service.resource": apmDestination,
	} {
		check("exit span", exit, "attributes."+field, exit.attr(field), want)
	}
	positive("exit span", exit, "span.duration.us")
	positive("exit span", exit, "timestamp.us")

	// The failing internal span, and its exception as an error document.
	failing := found["span/"+tr.errorID]
	for field, want := range map[string]string{
		"processor.event": "span",
		"span.type":       "app",
		"span.subtype":    "internal",
		"event.outcome":   "failure",
	} {
		check("failing span", failing, "attributes."+field, failing.attr(field), want)
	}
	errDoc := found["error/"+tr.errorID]
	check("error", errDoc, "attributes.processor.event", errDoc.attr("processor.event"), "error")
	check("error", errDoc, "attributes.exception.message", errDoc.attr("exception.message"), "profile 42 not found")
	for _, field := range []string{"error.grouping_key", "error.id", "timestamp.us"} {
		if errDoc.attr(field) == "" {
			t.Errorf("error: attributes.%s missing\n%s", field, errDoc.raw)
		}
	}
	t.Logf("span and error documents in %v after sending", time.Since(sentAt).Round(time.Millisecond))

	// The aggregated metrics: the connector's 1m window ends at the next minute boundary after the
	// spans arrived; it then exports, and the buffer delivers within its batching wait.
	boundary := sentAt.Truncate(time.Minute).Add(time.Minute)
	metricsCtx, cancelMetrics := context.WithDeadline(ctx, boundary.Add(60*time.Second))
	defer cancelMetrics()
	ofService := func(docs []apmDoc) map[string][]apmDoc {
		m := map[string][]apmDoc{}
		for _, d := range docs {
			if strings.HasPrefix(d.index, "metrics-") && fmt.Sprint(d.Resource.Attributes["service.name"]) == service {
				m[d.index] = append(m[d.index], d)
			}
		}
		return m
	}
	dataStream := func(set string) string { return "metrics-" + set + ".1m.otel-default" }
	docs, ok = waitForDocs(metricsCtx, t, g.es, func(docs []apmDoc) bool {
		m := ofService(docs)
		for _, set := range apmMetricSets {
			if len(m[dataStream(set)]) == 0 {
				return false
			}
		}
		return true
	})
	metrics := ofService(docs)
	if !ok {
		t.Fatalf("60 s after the minute boundary, metric documents of %s by data stream: %v", service, countsOf(metrics))
	}
	t.Logf("aggregated metrics %v after sending (%v after the minute boundary)",
		time.Since(sentAt).Round(time.Millisecond), time.Since(boundary).Round(time.Millisecond))

	// withMetric returns the data stream's document holding metric name (documents are split by
	// unit, so each metric is looked for on its own).
	withMetric := func(set, name string) apmDoc {
		t.Helper()
		for _, d := range metrics[dataStream(set)] {
			if _, has := d.Metrics[name]; has {
				return d
			}
		}
		t.Errorf("%s: no document with metrics.%s among %d", dataStream(set), name, len(metrics[dataStream(set)]))
		return apmDoc{}
	}
	for _, set := range apmMetricSets {
		for _, d := range metrics[dataStream(set)] {
			check(dataStream(set), d, "attributes.metricset.name", d.attr("metricset.name"), set)
			check(dataStream(set), d, "attributes.metricset.interval", d.attr("metricset.interval"), "1m")
			check(dataStream(set), d, "attributes.processor.event", d.attr("processor.event"), "metric")
		}
	}
	// value returns a metric's field as a number: a summary's sum or value_count, or a plain value.
	value := func(d apmDoc, name, field string) float64 {
		switch v := d.Metrics[name].(type) {
		case float64:
			return v
		case map[string]any:
			f, _ := v[field].(float64)
			return f
		}
		return 0
	}
	// Three spans: the service summary counts each.
	if d := withMetric("service_summary", "service_summary"); d.raw != nil && value(d, "service_summary", "") != 3 {
		t.Errorf("service_summary = %v, want 3 (the trace's spans)\n%s", d.Metrics["service_summary"], d.raw)
	}
	// One transaction of type request, successful.
	if d := withMetric("service_transaction", "transaction.duration.summary"); d.raw != nil {
		check("service_transaction", d, "attributes.transaction.type", d.attr("transaction.type"), "request")
		if n := value(d, "transaction.duration.summary", "value_count"); n != 1 {
			t.Errorf("service_transaction: transaction.duration.summary.value_count = %v, want 1\n%s", n, d.raw)
		}
	}
	if d := withMetric("service_transaction", "event.success_count"); d.raw != nil {
		if s, n := value(d, "event.success_count", "sum"), value(d, "event.success_count", "value_count"); s != 1 || n != 1 {
			t.Errorf("service_transaction: event.success_count sum %v of %v, want 1 of 1\n%s", s, n, d.raw)
		}
	}
	withMetric("service_transaction", "transaction.duration.histogram")
	if d := withMetric("transaction", "transaction.duration.summary"); d.raw != nil {
		check("transaction", d, "attributes.transaction.name", d.attr("transaction.name"), apmTransactionName)
		check("transaction", d, "attributes.event.outcome", d.attr("event.outcome"), "success")
		check("transaction", d, "attributes.transaction.result", d.attr("transaction.result"), "HTTP 2xx")
	}
	// The exit span's dependency.
	if d := withMetric("service_destination", "span.destination.service.response_time.count"); d.raw != nil {
		check("service_destination", d, "attributes.span.destination.service.resource", d.attr("span.destination.service.resource"), apmDestination)
		if n := value(d, "span.destination.service.response_time.count", ""); n != 1 {
			t.Errorf("service_destination: response_time.count = %v, want 1\n%s", n, d.raw)
		}
	}

	// The data streams are time-series data streams, as Elasticsearch's templates make them: the
	// same document again (a replayed delivery) is refused with 409, not stored twice.
	for _, set := range apmMetricSets {
		d := metrics[dataStream(set)][0]
		if status := bulkCreate(t, g.es.URL(), dataStream(set), d.raw); status != http.StatusConflict {
			t.Errorf("%s: the same document again answered %d, want 409 (time-series data stream)", dataStream(set), status)
		}
	}

	// A clean shutdown exports the open windows early into the buffer, which (with storage) keeps
	// what it has not delivered on disk and delivers it after the next start: a trace of another
	// service, SIGTERM as soon as its spans are stored, then a restart.
	late := service + "-late"
	sendAPMTrace(ctx, t, g.endpoints.OTLPHTTP, late)
	lateDocs := func(docs []apmDoc) map[string][]apmDoc {
		m := map[string][]apmDoc{}
		for _, d := range docs {
			if fmt.Sprint(d.Resource.Attributes["service.name"]) == late {
				m[d.index] = append(m[d.index], d)
			}
		}
		return m
	}
	lateCtx, cancelLate := context.WithTimeout(ctx, 30*time.Second)
	defer cancelLate()
	if _, arrived := waitForDocs(lateCtx, t, g.es, func(docs []apmDoc) bool {
		return len(lateDocs(docs)["traces-generic.otel-default"]) == 3
	}); !arrived {
		t.Fatalf("the spans of %s did not arrive", late)
	}
	stopped := time.Now()
	g.stopAndFlush(t)
	g.start(t)
	docs, ok = waitForDocs(lateCtx, t, g.es, func(docs []apmDoc) bool {
		m := lateDocs(docs)
		return len(m[dataStream("service_summary")]) > 0 && len(m[dataStream("transaction")]) > 0
	})
	if !ok {
		t.Fatalf("after a clean shutdown and a restart, documents of %s by data stream: %v; want its open 1m window", late, countsOf(lateDocs(docs)))
	}
	if d := lateDocs(docs)[dataStream("service_summary")][0]; d.Metrics["service_summary"] != 3.0 {
		t.Errorf("%s after the restart: service_summary = %v, want 3\n%s", late, d.Metrics["service_summary"], d.raw)
	}
	t.Logf("the window exported at shutdown arrived %v after the stop (restart included)", time.Since(stopped).Round(time.Millisecond))
	t.Logf("wall time %v (gateway start to the last check)", time.Since(started).Round(time.Millisecond))
}

// bulkCreate sends one create of source into index and returns the item's status.
func bulkCreate(t *testing.T, esURL, index string, source json.RawMessage) int {
	t.Helper()
	return bulkCreateID(t, esURL, index, "", source)
}

// bulkCreateID is bulkCreate with the document's _id, when id is not empty.
func bulkCreateID(t *testing.T, esURL, index, id string, source json.RawMessage) int {
	t.Helper()
	action := fmt.Sprintf("{\"create\":{\"_index\":%q}}", index)
	if id != "" {
		action = fmt.Sprintf("{\"create\":{\"_index\":%q,\"_id\":%q}}", index, id)
	}
	body := action + "\n" + string(source) + "\n"
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, esURL+"/_bulk", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-ndjson")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var r struct {
		Items []map[string]struct {
			Status int `json:"status"`
		} `json:"items"`
	}
	if err := json.Unmarshal(raw, &r); err != nil || len(r.Items) != 1 {
		t.Fatalf("bulk answer %d %s: %v", resp.StatusCode, raw, err)
	}
	return r.Items[0]["create"].Status
}

func keysOf(m map[string]apmDoc) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

func countsOf(m map[string][]apmDoc) map[string]int {
	out := map[string]int{}
	for k, v := range m {
		out[k] = len(v)
	}
	return out
}

// TestAPMOverlaysAlike: apm-durable.yaml is apm.yaml with the connector's aggregation state on
// disk, nothing else.
func TestAPMOverlaysAlike(t *testing.T) {
	load := func(name string) map[string]any {
		b, err := os.ReadFile(filepath.Join(repoRoot, "configs", "elasticsearch", name))
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		if err := yaml.Unmarshal(b, &m); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		return m
	}
	memory, disk := load("apm.yaml"), load("apm-durable.yaml")
	dir := disk["connectors"].(map[string]any)["apmmetrics"].(map[string]any)["aggregation"].(map[string]any)["directory"]
	if dir != "${env:TRACEGATE_BUFFER_DIR:-/var/lib/tracegate/buffer}/apm" {
		t.Errorf("apm-durable.yaml: aggregation.directory = %v, want under the buffer's directory", dir)
	}
	disk["connectors"].(map[string]any)["apmmetrics"] = map[string]any{}
	a, _ := json.Marshal(memory)
	b, _ := json.Marshal(disk)
	if !bytes.Equal(a, b) {
		t.Errorf("apm.yaml and apm-durable.yaml differ in more than the aggregation directory:\n%s\n%s", a, b)
	}
}
