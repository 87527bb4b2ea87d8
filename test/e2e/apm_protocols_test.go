package e2e

// The Kibana APM overlay for every protocol but OTLP (TestAPMOverlay has that one), each with a
// real client: zipkin-go's HTTP middleware, a Jaeger Thrift batch of OpenTracing's conventions,
// dd-trace-js with express and dd-trace-go. One gateway takes every protocol's traces, each of
// its own service, then one wait covers the connector's 1-minute window for all of them.
//
// The fields checked are those Kibana's APM UI reads, named as Kibana names them:
//   - the trace waterfall's documents: WaterfallTransaction, WaterfallSpan and WaterfallError in
//     Kibana's x-pack/plugins/observability_solution/apm/common/waterfall/typings.ts;
//   - the transaction, service inventory and dependency queries: Kibana's
//     x-pack/plugins/apm/dev_docs/apm_queries.md (processor.event, metricset.*, transaction.*,
//     event.outcome, event.success_count, _doc_count, span.destination.service.*,
//     service_summary).
// apmFields says where an otel-mode document keeps each one (passthrough objects and aliases of
// Elasticsearch's otel-data mapping). One trace per protocol and the service's 1m metrics are
// kept in testdata/apm/<protocol>.yaml; `go test ./test/e2e -run TestAPMProtocols -update`
// rewrites them.

import (
	"bytes"
	"context"
	"crypto/rand"
	byteorder "encoding/binary"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jaegertracing/jaeger-idl/thrift-gen/jaeger"
	"github.com/openzipkin/zipkin-go"
	zipkinhttp "github.com/openzipkin/zipkin-go/middleware/http"
	zipkinreporter "github.com/openzipkin/zipkin-go/reporter/http"
	"go.yaml.in/yaml/v3"

	"github.com/tracegate/tracegate/internal/testbed/tracesend"
)

var updateAPMGolden = flag.Bool("update", false, "rewrite testdata/apm/*.yaml from this run's documents")

// apmFields are the fields the APM UI reads (Kibana's names) and their place in an otel-mode
// document: "attributes.", "resource.attributes." and "metrics." hold dotted keys.
var apmFields = []struct{ kibana, path string }{
	{"@timestamp", "@timestamp"},
	{"timestamp.us", "attributes.timestamp.us"},
	{"trace.id", "trace_id"},
	{"parent.id", "parent_span_id"},
	{"span.id", "span_id"},
	{"span.name", "name"},
	{"service.name", "resource.attributes.service.name"},
	{"service.environment", "resource.attributes.deployment.environment"},
	{"agent.name", "resource.attributes.agent.name"},
	{"processor.event", "attributes.processor.event"},
	{"event.outcome", "attributes.event.outcome"},
	{"transaction.id", "attributes.transaction.id"},
	{"transaction.name", "attributes.transaction.name"},
	{"transaction.type", "attributes.transaction.type"},
	{"transaction.result", "attributes.transaction.result"},
	{"transaction.duration.us", "attributes.transaction.duration.us"},
	{"span.type", "attributes.span.type"},
	{"span.subtype", "attributes.span.subtype"},
	{"span.action", "attributes.span.action"},
	{"span.duration.us", "attributes.span.duration.us"},
	{"service.target.type", "attributes.service.target.type"},
	{"service.target.name", "attributes.service.target.name"},
	{"span.destination.service.resource", "attributes.span.destination.service.resource"},
	{"error.id", "attributes.error.id"},
	{"error.grouping_key", "attributes.error.grouping_key"},
	{"error.exception.type", "attributes.exception.type"},
	{"error.exception.message", "attributes.exception.message"},
	{"error.exception.handled", "attributes.error.exception.handled"},
	{"metricset.name", "attributes.metricset.name"},
	{"metricset.interval", "attributes.metricset.interval"},
	{"_doc_count", "_doc_count"},
	{"transaction.duration.summary", "metrics.transaction.duration.summary"},
	{"transaction.duration.histogram", "metrics.transaction.duration.histogram"},
	{"event.success_count", "metrics.event.success_count"},
	{"span.destination.service.response_time.count", "metrics.span.destination.service.response_time.count"},
	{"span.destination.service.response_time.sum.us", "metrics.span.destination.service.response_time.sum.us"},
	{"service_summary", "metrics.service_summary"},
}

// apmVolatile are fields whose values differ on every run: the golden files say only that they
// are there (a non-empty string, a positive number).
var apmVolatile = map[string]bool{
	"@timestamp": true, "timestamp.us": true, "error.id": true,
	"transaction.duration.us": true, "span.duration.us": true,
	"span.destination.service.response_time.sum.us": true,
	"transaction.duration.summary.sum":              true,
	"transaction.duration.histogram.values":         true,
}

// apmSent is one protocol's trace as its client sent it, and what the APM UI needs of it.
type apmSent struct {
	protocol string // the golden file's name
	service  string
	traceID  string
	spans    map[string]string // role (transaction, exit, db, internal, downstream) -> span id
	errors   []string          // roles whose span carries an exception: an error document each
	// spanCount is how many spans the client sent in all: the service_summary metric counts them.
	spanCount int
	// want holds, per role, Kibana fields and the values the UI needs; "error/<role>" for the
	// error document.
	want map[string]map[string]string
	// replace maps the run's volatile strings (the service, addresses with a random port) to the
	// golden files' placeholders.
	replace map[string]string
}

func TestAPMProtocols(t *testing.T) {
	// Mostly waiting for a minute's edge: run beside the other APM tests.
	t.Parallel()
	started := time.Now()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Minute)
	defer cancel()
	node := npmCI(ctx, t)
	goApp := buildDDGoProgram(ctx, t, "ddgo-app")
	g := startGatewayWith(t, gatewayOptions{config: "default.yaml", overlays: []string{"elasticsearch/apm.yaml"}, esVersion: "9.2.0"})
	id := newTestID()[:8]

	sent := []apmSent{
		sendZipkinAPMTrace(ctx, t, g.endpoints.Zipkin, "apm-zipkin-"+id),
		sendJaegerAPMTrace(ctx, t, g.endpoints.JaegerHTTP, "apm-jaeger-"+id),
		runDDAppAPMTrace(ctx, t, g, "ddtrace-js", "apm-ddjs-"+id, ddNodeDir, node, "app.js", "--service", "apm-ddjs-"+id,
			"--requests", strconv.Itoa(appRequests), "--failures", strconv.Itoa(appFailures)),
		runDDAppAPMTrace(ctx, t, g, "ddtrace-go", "apm-ddgo-"+id, ddclientsDir, goApp, "-service", "apm-ddgo-"+id,
			"-requests", strconv.Itoa(appRequests), "-failures", strconv.Itoa(appFailures)),
	}
	sentAt := time.Now()

	// The span and error documents: at once (the buffer's 200 ms batching).
	spanCtx, cancelSpans := context.WithTimeout(ctx, 30*time.Second)
	defer cancelSpans()
	docs, ok := waitForDocs(spanCtx, t, g.es, func(docs []apmDoc) bool {
		for _, s := range sent {
			if len(apmTraceDocs(docs, s)) < len(s.spans)+len(s.errors) {
				return false
			}
		}
		return true
	})
	for _, s := range sent {
		found := apmTraceDocs(docs, s)
		if !ok {
			t.Errorf("%s: after 30 s, %d of the trace's %d documents: %v", s.protocol, len(found), len(s.spans)+len(s.errors), keysOf(found))
		}
		checkAPMTrace(t, s, found)
		if t.Failed() {
			logTrace(t, docs, s.traceID)
		}
	}
	if t.Failed() {
		t.FailNow()
	}
	t.Logf("span and error documents of %d protocols in %v after sending", len(sent), time.Since(sentAt).Round(time.Millisecond))

	// The aggregated metrics: the connector's 1m window ends at the next minute boundary after the
	// last trace; it then exports, and the buffer delivers within its batching wait.
	boundary := sentAt.Truncate(time.Minute).Add(time.Minute)
	metricsCtx, cancelMetrics := context.WithDeadline(ctx, boundary.Add(60*time.Second))
	defer cancelMetrics()
	docs, ok = waitForDocs(metricsCtx, t, g.es, func(docs []apmDoc) bool {
		for _, s := range sent {
			if !hasAPMMetrics(apmServiceMetrics(docs, s.service), s) {
				return false
			}
		}
		return true
	})
	t.Logf("aggregated metrics %v after sending (%v after the minute boundary)",
		time.Since(sentAt).Round(time.Millisecond), time.Since(boundary).Round(time.Millisecond))
	for _, s := range sent {
		metrics := apmServiceMetrics(docs, s.service)
		if !ok && !hasAPMMetrics(metrics, s) {
			t.Errorf("%s: 60 s after the minute boundary, the 1m metric documents of %s by data stream: %v", s.protocol, s.service, countsOf(metrics))
			continue
		}
		checkAPMMetrics(t, s, metrics)
		if n := sumMetric(metrics["metrics-service_summary.1m.otel-default"], "service_summary"); n != float64(s.spanCount) {
			t.Errorf("%s: service_summary %v, want %d (every span the client sent, once)", s.protocol, n, s.spanCount)
		}
		checkAPMGolden(t, s, apmTraceDocs(docs, s), metrics)
	}
	t.Logf("wall time %v (gateway start to the last check)", time.Since(started).Round(time.Millisecond))
}

// apmTraceDocs are the span documents ("<role>") and error documents ("error/<role>") of the
// trace s names.
func apmTraceDocs(docs []apmDoc, s apmSent) map[string]apmDoc {
	roleOf := map[string]string{}
	for role, id := range s.spans {
		roleOf[id] = role
	}
	out := map[string]apmDoc{}
	for _, d := range docs {
		role, ok := roleOf[d.SpanID]
		if d.TraceID != s.traceID || !ok || !strings.Contains(d.index, ".otel-") {
			continue
		}
		switch {
		case strings.HasPrefix(d.index, "traces-"):
			out[role] = d
		case strings.HasPrefix(d.index, "logs-") && d.EventName == "exception":
			out["error/"+role] = d
		}
	}
	return out
}

// apmServiceMetrics are the service's documents of the connector's 1m data streams, by data stream.
func apmServiceMetrics(docs []apmDoc, service string) map[string][]apmDoc {
	out := map[string][]apmDoc{}
	for _, d := range docs {
		if strings.HasPrefix(d.index, "metrics-") && strings.Contains(d.index, ".1m.otel-") &&
			fmt.Sprint(d.Resource.Attributes["service.name"]) == service {
			out[d.index] = append(out[d.index], d)
		}
	}
	return out
}

func hasAPMMetrics(m map[string][]apmDoc, s apmSent) bool {
	for _, set := range apmMetricSets {
		if len(m["metrics-"+set+".1m.otel-default"]) == 0 {
			return false
		}
	}
	// Every span counted, in one window or in two if the traces straddled a minute boundary.
	if sumMetric(m["metrics-service_summary.1m.otel-default"], "service_summary") < float64(s.spanCount) {
		return false
	}
	// Every exit span's destination.
	for _, res := range apmDestinations(s) {
		if !slices.ContainsFunc(m["metrics-service_destination.1m.otel-default"], func(d apmDoc) bool {
			return d.attr("span.destination.service.resource") == res
		}) {
			return false
		}
	}
	return true
}

// sumMetric adds up a plain metric over documents.
func sumMetric(docs []apmDoc, name string) float64 {
	sum := 0.0
	for _, d := range docs {
		n, _ := d.Metrics[name].(float64)
		sum += n
	}
	return sum
}

// apmDestinations are the dependencies the trace's exit spans name.
func apmDestinations(s apmSent) []string {
	var out []string
	for role, w := range s.want {
		if res, ok := w["span.destination.service.resource"]; ok && !strings.HasPrefix(role, "error/") {
			out = append(out, res)
		}
	}
	sort.Strings(out)
	return slices.Compact(out)
}

// apmValue is a document's value of a field of apmFields, and whether it has one.
func apmValue(d apmDoc, path string) (any, bool) {
	var m map[string]any
	switch {
	case strings.HasPrefix(path, "resource.attributes."):
		m, path = d.Resource.Attributes, strings.TrimPrefix(path, "resource.attributes.")
	case strings.HasPrefix(path, "attributes."):
		m, path = d.Attributes, strings.TrimPrefix(path, "attributes.")
	case strings.HasPrefix(path, "metrics."):
		m, path = d.Metrics, strings.TrimPrefix(path, "metrics.")
	default:
		if err := json.Unmarshal(d.raw, &m); err != nil {
			return nil, false
		}
	}
	v, ok := m[path]
	if s, isStr := v.(string); isStr && s == "" {
		return nil, false // the otel mapping writes an empty parent_span_id for a root
	}
	return v, ok
}

// checkAPMTrace asserts what the APM UI needs of each document: the protocol's wanted values,
// and, whatever the protocol, a transaction's id, duration and start, a span's duration, an error's
// id and grouping key.
func checkAPMTrace(t *testing.T, s apmSent, found map[string]apmDoc) {
	t.Helper()
	for role, want := range s.want {
		d, ok := found[role]
		if !ok {
			t.Errorf("%s: no document for %s", s.protocol, role)
			continue
		}
		fail := func(format string, args ...any) {
			t.Helper()
			t.Errorf("%s %s: %s\n%s", s.protocol, role, fmt.Sprintf(format, args...), d.raw)
		}
		for _, f := range apmFields {
			w, wanted := want[f.kibana]
			if !wanted {
				continue
			}
			if got, _ := apmValue(d, f.path); fmt.Sprint(got) != w {
				fail("%s (%s) = %v, want %q", f.kibana, f.path, got, w)
			}
		}
		if got := fmt.Sprint(d.Resource.Attributes["service.name"]); got != s.service {
			fail("service.name = %q, want %q", got, s.service)
		}
		positive := []string{"timestamp.us"}
		switch d.attr("processor.event") {
		case "transaction":
			if d.attr("transaction.id") != d.SpanID {
				fail("transaction.id %q is not the span id %q", d.attr("transaction.id"), d.SpanID)
			}
			positive = append(positive, "transaction.duration.us")
		case "span":
			positive = append(positive, "span.duration.us")
		case "error":
			for _, k := range []string{"error.id", "error.grouping_key"} {
				if d.attr(k) == "" {
					fail("attributes.%s missing", k)
				}
			}
		default:
			fail("processor.event = %q", d.attr("processor.event"))
		}
		for _, k := range positive {
			if d.number(k) <= 0 {
				fail("attributes.%s = %v, want a positive number", k, d.Attributes[k])
			}
		}
	}
}

// checkAPMMetrics asserts the service's aggregated documents: each set's metricset fields, the
// entry span's transaction group, and one service_destination document per dependency.
func checkAPMMetrics(t *testing.T, s apmSent, metrics map[string][]apmDoc) {
	t.Helper()
	for stream, docs := range metrics {
		set := strings.TrimSuffix(strings.TrimPrefix(stream, "metrics-"), ".1m.otel-default")
		for _, d := range docs {
			if d.attr("metricset.name") != set || d.attr("metricset.interval") != "1m" || d.attr("processor.event") != "metric" {
				t.Errorf("%s %s: metricset %q %q, processor.event %q; want %q 1m metric\n%s", s.protocol, stream,
					d.attr("metricset.name"), d.attr("metricset.interval"), d.attr("processor.event"), set, d.raw)
			}
		}
	}
	tx := s.want["transaction"]
	if !slices.ContainsFunc(metrics["metrics-transaction.1m.otel-default"], func(d apmDoc) bool {
		return d.attr("transaction.name") == tx["transaction.name"] && d.attr("transaction.type") == tx["transaction.type"] &&
			d.attr("event.outcome") == tx["event.outcome"]
	}) {
		t.Errorf("%s: no transaction metric of %q (%s, %s) among %d documents", s.protocol, tx["transaction.name"],
			tx["transaction.type"], tx["event.outcome"], len(metrics["metrics-transaction.1m.otel-default"]))
	}
	for _, res := range apmDestinations(s) {
		of := slices.DeleteFunc(slices.Clone(metrics["metrics-service_destination.1m.otel-default"]), func(d apmDoc) bool {
			return d.attr("span.destination.service.resource") != res
		})
		if n := sumMetric(of, "span.destination.service.response_time.count"); n < 1 {
			t.Errorf("%s: service_destination of %q: response_time.count %v, want at least 1", s.protocol, res, n)
		}
	}
}

// apmGolden is a golden file's content: the trace's documents by role, the service's 1m metric
// documents (counts summed over the windows the run's traces fell into).
type apmGolden struct {
	Documents map[string]map[string]any `yaml:"documents"`
	Metrics   []map[string]any          `yaml:"metrics"`
}

// checkAPMGolden compares the trace's documents and the service's metrics, reduced to apmFields
// with placeholders for the run's volatile values, with testdata/apm/<protocol>.yaml.
func checkAPMGolden(t *testing.T, s apmSent, found map[string]apmDoc, metrics map[string][]apmDoc) {
	t.Helper()
	got := goldenOf(s, found, metrics, apmGoldenFields)
	checkGolden(t, s.protocol, filepath.Join("testdata", "apm", s.protocol+".yaml"), apmGoldenHeader(s.protocol), got)
}

// goldenOf is one trace's golden content: each role's document reduced by fields, and the metric
// documents merged by their fields, with the run's volatile strings (ids, the service, addresses)
// replaced by placeholders.
func goldenOf[D any](s apmSent, found map[string]D, metrics map[string][]D, fields func(D, *strings.Replacer) map[string]any) apmGolden {
	pairs := []string{s.traceID, "<trace>"}
	for role, id := range s.spans {
		pairs = append(pairs, id, "<span:"+role+">")
	}
	for from, to := range s.replace {
		pairs = append(pairs, from, to)
	}
	r := strings.NewReplacer(pairs...)
	got := apmGolden{Documents: map[string]map[string]any{}}
	for role, d := range found {
		got.Documents[role] = fields(d, r)
	}
	merged := map[string]map[string]any{}
	for stream, docs := range metrics {
		for _, d := range docs {
			m := fields(d, r)
			m["data_stream"] = stream
			mergeAPMMetric(merged, m)
		}
	}
	keys := make([]string, 0, len(merged))
	for k := range merged {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		got.Metrics = append(got.Metrics, merged[k])
	}
	return got
}

// checkGolden compares header and got's YAML with the file at path, or writes it with -update.
func checkGolden(t *testing.T, protocol, path, header string, got apmGolden) {
	t.Helper()
	body, err := yaml.Marshal(got)
	if err != nil {
		t.Fatal(err)
	}
	body = append([]byte(header), body...)
	if *updateAPMGolden {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, body, 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("wrote %s", path)
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to write it)", err)
	}
	if !bytes.Equal(want, body) {
		t.Errorf("%s: the documents differ from %s (- file, + this run; -update rewrites it):\n%s", protocol, path, lineDiff(string(want), string(body)))
	}
}

func apmGoldenHeader(protocol string) string {
	return "# " + protocol + ": the Kibana APM overlay's documents of one trace and the service's 1m metrics\n" +
		"# (TestAPMProtocols; `go test ./test/e2e -run TestAPMProtocols -update` rewrites this file).\n" +
		"# Fields by Kibana's names, those its APM UI reads: the waterfall's (Kibana's\n" +
		"# x-pack/plugins/observability_solution/apm/common/waterfall/typings.ts) and the transaction,\n" +
		"# service and dependency queries' (x-pack/plugins/apm/dev_docs/apm_queries.md). <present> and\n" +
		"# <positive> stand for values that differ on every run; metric counts are summed over windows.\n"
}

// apmGoldenFields reduces a document to apmFields: volatile values to <present>/<positive>,
// objects (summaries, histograms) to one dotted key per member, histogram counts to their sum.
func apmGoldenFields(d apmDoc, r *strings.Replacer) map[string]any {
	out := map[string]any{}
	put := func(k string, v any) {
		switch x := v.(type) {
		case string:
			v = r.Replace(x)
		case []any:
			if strings.HasSuffix(k, ".counts") {
				sum := 0.0
				for _, c := range x {
					f, _ := c.(float64)
					sum += f
				}
				v = sum
			}
		}
		if apmVolatile[k] {
			v = volatileValue(v)
		}
		out[k] = v
	}
	for _, f := range apmFields {
		v, ok := apmValue(d, f.path)
		if !ok {
			continue
		}
		if obj, isObj := v.(map[string]any); isObj {
			for member, mv := range obj {
				put(f.kibana+"."+member, mv)
			}
			continue
		}
		put(f.kibana, v)
	}
	return out
}

func volatileValue(v any) any {
	switch x := v.(type) {
	case float64:
		if x > 0 {
			return "<positive>"
		}
	case string:
		if x != "" {
			return "<present>"
		}
	case []any:
		if len(x) > 0 {
			return "<present>"
		}
	}
	return v
}

// mergeAPMMetric adds a metric document to the one of the same fields (another window's):
// numbers left after apmGoldenFields are counts, which add up.
func mergeAPMMetric(merged map[string]map[string]any, m map[string]any) {
	key := map[string]any{}
	for k, v := range m {
		if _, isNum := v.(float64); isNum {
			v = "<count>"
		}
		key[k] = v
	}
	b, _ := json.Marshal(key)
	prev, ok := merged[string(b)]
	if !ok {
		merged[string(b)] = m
		return
	}
	for k, v := range m {
		if f, isNum := v.(float64); isNum {
			p, _ := prev[k].(float64)
			prev[k] = p + f
		}
	}
}

// lineDiff lists the lines only one of a and b has.
func lineDiff(a, b string) string {
	al, bl := strings.Split(a, "\n"), strings.Split(b, "\n")
	var out []string
	for _, l := range al {
		if !slices.Contains(bl, l) {
			out = append(out, "- "+l)
		}
	}
	for _, l := range bl {
		if !slices.Contains(al, l) {
			out = append(out, "+ "+l)
		}
	}
	return strings.Join(out, "\n")
}

func logTrace(t *testing.T, docs []apmDoc, traceID string) {
	t.Helper()
	for _, d := range docs {
		if d.TraceID == traceID {
			t.Logf("document in %s: %s", d.index, d.raw)
		}
	}
}

// sendZipkinAPMTrace serves one request through zipkin-go's HTTP middleware: the server span
// (named by its route, as Brave does), an instrumented HTTP client call to the inventory service
// (its remote endpoint given to the client), and a local span that fails with an error tag.
// Zipkin has no exceptions: no error document.
func sendZipkinAPMTrace(ctx context.Context, t *testing.T, endpoint, service string) apmSent {
	t.Helper()
	var reporterLog bytes.Buffer
	rep := zipkinreporter.NewReporter("http://"+endpoint+"/api/v2/spans", zipkinreporter.Logger(log.New(&reporterLog, "", 0)))
	local, err := zipkin.NewEndpoint(service, "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	tracer, err := zipkin.NewTracer(rep, zipkin.WithLocalEndpoint(local), zipkin.WithTraceID128Bit(true))
	if err != nil {
		t.Fatal(err)
	}
	s := apmSent{protocol: "zipkin", service: service, spans: map[string]string{}}
	var mu sync.Mutex // the handlers note the span ids
	inventory := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		s.spans["exit"] = r.Header.Get("X-B3-SpanId")
		mu.Unlock()
		_, _ = io.WriteString(w, `{"sku":"42","stock":3}`)
	}))
	defer inventory.Close()
	inventoryAddr := inventory.Listener.Addr().String()
	remote, err := zipkin.NewEndpoint("inventory", inventoryAddr)
	if err != nil {
		t.Fatal(err)
	}
	client, err := zipkinhttp.NewClient(tracer, zipkinhttp.WithRemoteEndpoint(remote))
	if err != nil {
		t.Fatal(err)
	}
	handle := func(w http.ResponseWriter, r *http.Request) {
		sp := zipkin.SpanFromContext(r.Context())
		sp.SetName("GET /users/{id}")
		zipkin.TagHTTPRoute.Set(sp, "/users/{id}")
		mu.Lock()
		s.traceID, s.spans["transaction"] = sp.Context().TraceID.String(), sp.Context().ID.String()
		mu.Unlock()
		req, err := http.NewRequestWithContext(r.Context(), http.MethodGet, inventory.URL+"/items/42", http.NoBody)
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		resp, err := client.Do(req)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		_ = resp.Body.Close()
		failing, _ := tracer.StartSpanFromContext(r.Context(), "load profile")
		zipkin.TagError.Set(failing, "profile 42 not found")
		failing.FinishedWithDuration(time.Millisecond)
		mu.Lock()
		s.spans["internal"] = failing.Context().ID.String()
		mu.Unlock()
		_, _ = io.WriteString(w, `{"id":"42"}`)
	}
	web := httptest.NewServer(zipkinhttp.NewServerMiddleware(tracer)(http.HandlerFunc(handle)))
	defer web.Close()
	getOK(ctx, t, web.URL+"/users/42")
	mu.Lock()
	defer mu.Unlock()
	if err := rep.Close(); err != nil { // flushes the batch
		t.Fatal(err)
	}
	if reporterLog.Len() > 0 {
		t.Fatalf("zipkin reporter: %s", bytes.TrimSpace(reporterLog.Bytes()))
	}
	s.want = map[string]map[string]string{
		// zipkin-go tags no status code for a 2xx answer: the result comes from the span status.
		"transaction": {
			"processor.event": "transaction", "transaction.name": "get /users/{id}", "transaction.type": "request",
			"transaction.result": "Success", "event.outcome": "success",
		},
		// The remote endpoint's service is the dependency; its address the target.
		"exit": {
			"processor.event": "span", "span.type": "external", "span.subtype": "http", "event.outcome": "success",
			"service.target.type": "http", "service.target.name": inventoryAddr, "span.destination.service.resource": "inventory",
		},
		"internal": {"processor.event": "span", "span.type": "app", "span.subtype": "internal", "event.outcome": "failure"},
	}
	s.replace = map[string]string{service: "<service>", inventoryAddr: "<inventory>"}
	s.spanCount = len(s.spans)
	return s
}

// getOK makes a GET request and fails the test unless it answers 200.
func getOK(ctx context.Context, t *testing.T, u string) {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, http.NoBody)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s %s", u, resp.Status, body)
	}
}

// sendJaegerAPMTrace posts one Thrift batch to the Jaeger receiver's /api/traces, as Jaeger's
// clients do, with OpenTracing's tags: a server span, an HTTP client call (peer.*), a database
// query (db.type, db.instance, db.statement) and a local span that fails with an error log
// (event=error, error.kind, message, stack).
func sendJaegerAPMTrace(ctx context.Context, t *testing.T, endpoint, service string) apmSent {
	t.Helper()
	var ids [48]byte
	if _, err := rand.Read(ids[:]); err != nil {
		t.Fatal(err)
	}
	high, low := int64(byteorder.BigEndian.Uint64(ids[0:8])), int64(byteorder.BigEndian.Uint64(ids[8:16]))
	spanID := func(i int) int64 { return int64(byteorder.BigEndian.Uint64(ids[16+8*i:24+8*i])>>1 | 1) }
	str := func(k, v string) *jaeger.Tag { return &jaeger.Tag{Key: k, VType: jaeger.TagType_STRING, VStr: &v} }
	long := func(k string, v int64) *jaeger.Tag { return &jaeger.Tag{Key: k, VType: jaeger.TagType_LONG, VLong: &v} }
	yes := true
	start := time.Now().Add(-50 * time.Millisecond).UnixMicro()
	root, client, db, failing := spanID(0), spanID(1), spanID(2), spanID(3)
	span := func(id, parent int64, name string, offset, duration int64, tags ...*jaeger.Tag) *jaeger.Span {
		return &jaeger.Span{
			TraceIdHigh: high, TraceIdLow: low, SpanId: id, ParentSpanId: parent, OperationName: name,
			StartTime: start + offset, Duration: duration, Tags: tags,
		}
	}
	failingSpan := span(failing, root, "load profile", 9000, 500, &jaeger.Tag{Key: "error", VType: jaeger.TagType_BOOL, VBool: &yes})
	failingSpan.Logs = []*jaeger.Log{{Timestamp: start + 9400, Fields: []*jaeger.Tag{
		str("event", "error"), str("error.kind", "NotFoundError"), str("message", "profile 42 not found"),
		str("stack", "main.loadProfile\n\t/app/profile.go:42\nmain.handle\n\t/app/main.go:17"),
	}}}
	batch := &jaeger.Batch{
		Process: &jaeger.Process{ServiceName: service, Tags: []*jaeger.Tag{
			str("jaeger.version", "Go-2.30.0"), str("hostname", "shop-1"), str("ip", "10.0.0.5"),
		}},
		Spans: []*jaeger.Span{
			span(root, 0, "GET /users/{id}", 0, 12000,
				str("span.kind", "server"), str("component", "net/http"), str("http.method", "GET"),
				str("http.url", "/users/42?fields=name"), long("http.status_code", 200)),
			span(client, root, "HTTP GET", 1000, 3000,
				str("span.kind", "client"), str("component", "net/http"), str("http.method", "GET"),
				str("http.url", "http://inventory.internal:8081/items/42"), long("http.status_code", 200),
				str("peer.service", "inventory"), str("peer.hostname", "inventory.internal"), long("peer.port", 8081)),
			span(db, root, "SELECT users", 5000, 2000,
				str("span.kind", "client"), str("db.type", "sql"), str("db.instance", "shop"), str("db.user", "shop"),
				str("db.statement", "SELECT name FROM users WHERE id = ?"), str("peer.hostname", "db.internal"), long("peer.port", 5432)),
			failingSpan,
		},
	}
	body, err := tracesend.EncodeJaegerBinary(ctx, batch)
	if err != nil {
		t.Fatal(err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://"+endpoint+"/api/traces", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-thrift")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	msg, _ := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		t.Fatalf("jaeger thrift http: %s %s", resp.Status, msg)
	}
	hex := func(v int64) string { return fmt.Sprintf("%016x", uint64(v)) }
	return apmSent{
		protocol: "jaeger", service: service, traceID: hex(high) + hex(low), spanCount: len(batch.Spans),
		spans:  map[string]string{"transaction": hex(root), "exit": hex(client), "db": hex(db), "internal": hex(failing)},
		errors: []string{"internal"},
		want: map[string]map[string]string{
			"transaction": {
				"processor.event": "transaction", "transaction.name": "GET /users/{id}", "transaction.type": "request",
				"transaction.result": "HTTP 2xx", "event.outcome": "success",
			},
			"exit": {
				"processor.event": "span", "span.type": "external", "span.subtype": "http", "event.outcome": "success",
				"service.target.type": "http", "service.target.name": "inventory.internal:8081", "span.destination.service.resource": "inventory",
			},
			// db.type "sql" names no system: other_sql; db.instance is the target.
			"db": {
				"processor.event": "span", "span.type": "db", "span.subtype": "other_sql", "event.outcome": "success",
				"service.target.type": "other_sql", "service.target.name": "shop", "span.destination.service.resource": "other_sql",
			},
			"internal":       {"processor.event": "span", "span.type": "app", "span.subtype": "internal", "event.outcome": "failure"},
			"error/internal": {"processor.event": "error", "error.exception.type": "NotFoundError", "error.exception.message": "profile 42 not found"},
		},
		replace: map[string]string{service: "<service>"},
	}
}

// runDDAppAPMTrace runs one of the Datadog apps (test/ddclients: node app.js, ddgo-app) against
// the gateway's ddtrace receiver, as TestDDTraceJSApp and TestDDTraceGoApp do, and names the trace
// of its failing request: the server span with the handled error, its HTTP client call (and
// ddgo-app's database query), the inventory server's span under the client span.
func runDDAppAPMTrace(ctx context.Context, t *testing.T, g *gateway, protocol, service, dir, bin string, args ...string) apmSent {
	t.Helper()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir = dir
	cmd.Env = ddAppEnv("http://" + g.endpoints.DDTrace)
	reqs, _ := runDDApp(t, cmd)
	i := slices.IndexFunc(reqs, func(r ddAppRequest) bool { return r.Error != "" })
	if i < 0 {
		t.Fatalf("%s: no failing request among %+v", protocol, reqs)
	}
	r := reqs[i]
	down, err := url.Parse(r.DownstreamURL)
	if err != nil {
		t.Fatal(err)
	}
	s := apmSent{
		protocol: protocol, service: service, traceID: r.TraceID,
		spans:   map[string]string{"transaction": r.ServerSpanID, "exit": r.ClientSpanID, "downstream": r.DownstreamSpanID},
		errors:  []string{"transaction"},
		replace: map[string]string{service: "<service>", down.Host: "<inventory>"},
	}
	// The handled error makes the request a failure whatever its status (ddgo-app answers 200).
	result, outcome := "HTTP "+strconv.Itoa(r.Status)[:1]+"xx", "failure"
	s.want = map[string]map[string]string{
		"transaction": {
			"processor.event": "transaction", "transaction.name": "GET " + r.Route, "transaction.type": "request",
			"transaction.result": result, "event.outcome": outcome,
		},
		"exit": {
			"processor.event": "span", "span.type": "external", "span.subtype": "http", "event.outcome": "success",
			"service.target.type": "http", "service.target.name": down.Host, "span.destination.service.resource": down.Host,
		},
		// The inventory server's request: an entry span through the propagation headers.
		"downstream":        {"processor.event": "transaction", "transaction.type": "request", "transaction.result": "HTTP 2xx", "event.outcome": "success"},
		"error/transaction": {"processor.event": "error", "error.exception.message": r.Error},
	}
	if r.DBSpanID != "" {
		s.spans["db"] = r.DBSpanID
		s.want["db"] = map[string]string{
			"processor.event": "span", "span.type": "db", "span.subtype": "other_sql", "event.outcome": "success",
			"service.target.type": "other_sql", "span.destination.service.resource": r.DBService,
		}
	}
	s.spanCount = len(reqs) * len(s.spans) // every request's trace has the same spans
	return s
}
