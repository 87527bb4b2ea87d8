package e2e

// The classic APM overlay (configs/default.yaml + configs/elasticsearch/apm-classic.yaml) on an
// 8.13 stand-in with the APM integration's data streams: one trace per protocol from a real
// client (OTel Go SDK, zipkin-go, a Jaeger Thrift batch, dd-trace-js with express, dd-trace-go,
// elastic-apm-node) becomes APM Server's documents, and the 1m metricsets name every service.
//
// The fields checked are those Kibana 8.13's APM UI reads (x-pack/plugins/apm/dev_docs/
// apm_queries.md and server/lib/helpers/create_es_client/document_type.ts: processor.event,
// trace.id, transaction.*, span.*, parent.id, service.*, agent.name, event.outcome, timestamp.us,
// error.*, metricset.*, _doc_count, transaction.duration.histogram). Three of them are not
// written by APM Server but by the APM integration's ingest pipelines on the cluster, which the
// stand-in does not run: processor.event, <event>.duration.us (from event.duration) and
// event.success_count. apmIngest does what those pipelines do to these fields, so the checks see
// the documents as Kibana does; on a real cluster, `_simulate` of the pipelines shows the same
// (docs/kibana-apm-8x.md). One trace per protocol and its service's 1m metricsets are kept in
// testdata/apm-classic/<protocol>.yaml; -update rewrites them.

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tracegate/tracegate/internal/testbed/esstandin"
)

// classicDoc is a document as the APM integration's pipelines leave it.
type classicDoc struct {
	index string
	body  map[string]any
}

// get reads a field by its dotted name, through nested objects and dotted keys alike.
func (d classicDoc) get(path string) (any, bool) { return lookup(d.body, path) }

func (d classicDoc) str(path string) string {
	v, ok := d.get(path)
	if !ok {
		return ""
	}
	return fmt.Sprint(v)
}

// apmIngest does to a document what the APM integration's ingest pipelines (8.x) do to the fields
// Kibana reads: processor.event from the data stream and transaction.type; <event>.duration.us
// from event.duration (nanoseconds), which is removed; event.success_count from event.outcome.
func apmIngest(index string, body map[string]any) {
	event := "metric"
	switch {
	case strings.HasPrefix(index, "traces-apm"):
		event = "span"
		if tx, ok := body["transaction"].(map[string]any); ok && tx["type"] != nil {
			event = "transaction"
		}
	case strings.HasPrefix(index, "logs-apm.error"):
		event = "error"
	case strings.HasPrefix(index, "logs-apm"):
		event = "log"
	}
	body["processor"] = map[string]any{"event": event}
	ev, _ := body["event"].(map[string]any)
	if ns, ok := ev["duration"].(float64); ok && (event == "transaction" || event == "span") {
		obj, _ := body[event].(map[string]any)
		if obj == nil {
			obj = map[string]any{}
			body[event] = obj
		}
		obj["duration"] = map[string]any{"us": float64(int64(ns) / 1000)}
		delete(ev, "duration")
	}
	if event == "transaction" {
		switch ev["outcome"] {
		case "success":
			ev["success_count"] = 1.0
		case "failure":
			ev["success_count"] = 0.0
		}
	}
}

func classicDocs(t *testing.T, es *esstandin.Server) []classicDoc {
	t.Helper()
	var out []classicDoc
	for _, d := range es.Documents() {
		var body map[string]any
		if err := json.Unmarshal(d.Source, &body); err != nil {
			t.Fatalf("document %s in %s: %v", d.ID, d.Index, err)
		}
		apmIngest(d.Index, body)
		out = append(out, classicDoc{index: d.Index, body: body})
	}
	return out
}

// putAPMTemplates installs data stream templates for APM Server's data streams, as the APM
// integration does on 8.x (the stand-in keeps only what makes a name a data stream).
func putAPMTemplates(t *testing.T, es *esstandin.Server) {
	t.Helper()
	for name, pattern := range map[string]string{
		"traces-apm": "traces-apm*", "logs-apm.error": "logs-apm.error-*", "logs-apm.app": "logs-apm.app*",
		"metrics-apm": "metrics-apm*",
	} {
		body := `{"index_patterns":["` + pattern + `"],"priority":210,"data_stream":{}}`
		req, err := http.NewRequest(http.MethodPut, es.URL()+"/_index_template/"+name, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_ = resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("PUT _index_template/%s: %s", name, resp.Status)
		}
	}
}

// classicTraceDocs are the trace's documents by role: "<role>" for a transaction or span,
// "error/<role>" for the error of an exception on that span.
func classicTraceDocs(docs []classicDoc, s apmSent) map[string]classicDoc {
	found := map[string]classicDoc{}
	for _, d := range docs {
		if d.str("trace.id") != s.traceID {
			continue
		}
		for role, id := range s.spans {
			switch {
			case strings.HasPrefix(d.index, "traces-apm") && d.str("span.id") == id:
				found[role] = d
			case strings.HasPrefix(d.index, "logs-apm.error") && d.str("parent.id") == id:
				found["error/"+role] = d
			}
		}
	}
	return found
}

func complete(found map[string]classicDoc, s apmSent) bool {
	for role := range s.spans {
		if _, ok := found[role]; !ok {
			return false
		}
	}
	for _, role := range s.errors {
		if _, ok := found["error/"+role]; !ok {
			return false
		}
	}
	return true
}

// classicMetricsets are the service's 1m metricset documents by data stream.
func classicMetricsets(docs []classicDoc, service string) map[string][]classicDoc {
	out := map[string][]classicDoc{}
	for _, d := range docs {
		if strings.HasPrefix(d.index, "metrics-apm.") && strings.Contains(d.index, ".1m-") && d.str("service.name") == service {
			out[d.index] = append(out[d.index], d)
		}
	}
	return out
}

func TestAPMClassic(t *testing.T) {
	t.Parallel() // mostly waiting for a minute's edge
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Minute)
	defer cancel()
	node := npmCI(ctx, t)
	goApp := buildDDGoProgram(ctx, t, "ddgo-app")
	g := startGatewayWith(t, gatewayOptions{
		config: "default.yaml", overlays: []string{"elasticsearch/apm-classic.yaml"}, esVersion: "8.13.4",
		beforeRun: putAPMTemplates,
	})
	id := newTestID()[:8]
	sent := []apmSent{
		otelClassicTrace(ctx, t, g.endpoints.OTLPHTTP, "classic-otel-"+id),
		sendZipkinAPMTrace(ctx, t, g.endpoints.Zipkin, "classic-zipkin-"+id),
		sendJaegerAPMTrace(ctx, t, g.endpoints.JaegerHTTP, "classic-jaeger-"+id),
		runDDAppAPMTrace(ctx, t, g, "ddtrace-js", "classic-ddjs-"+id, ddNodeDir, node, "app.js", "--service", "classic-ddjs-"+id,
			"--requests", strconv.Itoa(appRequests), "--failures", strconv.Itoa(appFailures)),
		runDDAppAPMTrace(ctx, t, g, "ddtrace-go", "classic-ddgo-"+id, ddclientsDir, goApp, "-service", "classic-ddgo-"+id,
			"-requests", strconv.Itoa(appRequests), "-failures", strconv.Itoa(appFailures)),
	}
	sent = append(sent, agentClassicTraces(ctx, t, g.endpoints.ElasticAPM, "classic-node-"+id)...)
	for i := range sent {
		sent[i].protocol = "classic-" + sent[i].protocol
	}
	sentAt := time.Now()

	spanCtx, cancelSpans := context.WithTimeout(ctx, 30*time.Second)
	defer cancelSpans()
	docs := waitForClassic(spanCtx, t, g.es, func(docs []classicDoc) bool {
		for _, s := range sent {
			if !complete(classicTraceDocs(docs, s), s) {
				return false
			}
		}
		return true
	})
	for _, s := range sent {
		found := classicTraceDocs(docs, s)
		if !complete(found, s) {
			t.Errorf("%s: after 30 s, the trace's documents %v, want %v and errors on %v", s.protocol, keysOfClassic(found), s.spans, s.errors)
			continue
		}
		checkClassicTrace(t, s, found)
	}
	if t.Failed() {
		t.FailNow()
	}

	boundary := sentAt.Truncate(time.Minute).Add(time.Minute)
	metricsCtx, cancelMetrics := context.WithDeadline(ctx, boundary.Add(60*time.Second))
	defer cancelMetrics()
	docs = waitForClassic(metricsCtx, t, g.es, func(docs []classicDoc) bool {
		for _, s := range sent {
			if len(classicMetricsets(docs, s.service)["metrics-apm.transaction.1m-default"]) == 0 {
				return false
			}
		}
		return true
	})
	for _, s := range sent {
		ms := classicMetricsets(docs, s.service)
		checkClassicMetricsets(t, s, ms)
		checkClassicGolden(t, s, classicTraceDocs(docs, s), ms)
	}
}

func waitForClassic(ctx context.Context, t *testing.T, es *esstandin.Server, have func([]classicDoc) bool) []classicDoc {
	t.Helper()
	for {
		docs := classicDocs(t, es)
		if have(docs) {
			return docs
		}
		select {
		case <-ctx.Done():
			return docs
		case <-time.After(250 * time.Millisecond):
		}
	}
}

func keysOfClassic(m map[string]classicDoc) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// checkClassicTrace asserts the fields every transaction, span and error document needs.
func checkClassicTrace(t *testing.T, s apmSent, found map[string]classicDoc) {
	t.Helper()
	for role, d := range found {
		need := []string{"@timestamp", "timestamp.us", "trace.id", "service.name", "agent.name", "processor.event"}
		switch d.str("processor.event") {
		case "transaction":
			need = append(need, "transaction.id", "transaction.name", "transaction.type", "transaction.duration.us",
				"transaction.sampled", "event.outcome", "span.id")
		case "span":
			// No transaction.id: APM Server's conversion of OTLP spans leaves it out (Kibana's waterfall
			// links spans by parent.id); the Elastic agents send it.
			need = append(need, "span.id", "span.type", "span.name", "span.duration.us", "parent.id", "event.outcome")
		case "error":
			need = append(need, "error.id", "error.grouping_key", "parent.id")
			if ex, ok := d.get("error.exception"); ok {
				if _, isList := ex.([]any); !isList {
					t.Errorf("%s %s: error.exception is %T, want a list", s.protocol, role, ex)
				}
			} else if _, ok := d.get("error.log.message"); !ok {
				t.Errorf("%s %s: neither error.exception nor error.log.message", s.protocol, role)
			}
		default:
			t.Errorf("%s %s: processor.event %q in %s", s.protocol, role, d.str("processor.event"), d.index)
		}
		for _, f := range need {
			if _, ok := d.get(f); !ok {
				t.Errorf("%s %s: no %s in %v", s.protocol, role, f, d.body)
			}
		}
		if d.str("service.name") != s.service && role != "downstream" {
			t.Errorf("%s %s: service.name %q, want %q", s.protocol, role, d.str("service.name"), s.service)
		}
	}
	if exit, ok := found["exit"]; ok && exit.str("span.destination.service.resource") == "" {
		t.Errorf("%s: the exit span has no span.destination.service.resource: %v", s.protocol, exit.body)
	}
	if tx, ok := found["transaction"]; ok {
		if _, hasParent := tx.get("parent.id"); hasParent {
			t.Errorf("%s: the root transaction has a parent.id", s.protocol)
		}
	}
}

// checkClassicMetricsets: each 1m metricset of the service, with the counts Kibana reads.
func checkClassicMetricsets(t *testing.T, s apmSent, ms map[string][]classicDoc) {
	t.Helper()
	for _, set := range []string{"transaction", "service_transaction", "service_summary"} {
		docs := ms["metrics-apm."+set+".1m-default"]
		if len(docs) == 0 {
			t.Errorf("%s: no %s metricset of %s (have %v)", s.protocol, set, s.service, keysOfMetricsets(ms))
			continue
		}
		for _, d := range docs {
			if d.str("metricset.name") != set || d.str("metricset.interval") != "1m" {
				t.Errorf("%s: %s document with metricset %q/%q", s.protocol, set, d.str("metricset.name"), d.str("metricset.interval"))
			}
			if set == "service_summary" {
				continue
			}
			if n, _ := d.get("_doc_count"); n == nil || n.(float64) < 1 {
				t.Errorf("%s: %s _doc_count %v", s.protocol, set, n)
			}
			if _, ok := d.get("transaction.duration.histogram.values"); !ok {
				t.Errorf("%s: %s without transaction.duration.histogram: %v", s.protocol, set, d.body)
			}
		}
	}
	if _, hasExit := s.spans["exit"]; hasExit && len(ms["metrics-apm.service_destination.1m-default"]) == 0 {
		t.Errorf("%s: no service_destination metricset for its exit span", s.protocol)
	}
}

func keysOfMetricsets(m map[string][]classicDoc) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// classicFields are the fields of the golden files: Kibana's names, which are the documents'.
var classicFields = []string{
	"processor.event", "timestamp.us", "trace.id", "parent.id", "span.id", "span.name", "span.type", "span.subtype",
	"span.action", "span.duration.us", "span.destination.service.resource", "service.name", "service.environment",
	"service.target.type", "service.target.name", "agent.name", "event.outcome", "event.success_count",
	"transaction.id", "transaction.name", "transaction.type", "transaction.result", "transaction.duration.us",
	"transaction.sampled", "transaction.root", "error.id", "error.grouping_key", "error.exception", "error.culprit",
	"metricset.name", "metricset.interval", "_doc_count", "transaction.duration.histogram",
	"transaction.duration.summary", "span.destination.service.response_time",
}

// localPort is a test server's address, on a port that changes on every run.
var localPort = regexp.MustCompile(`127\.0\.0\.1:\d+`)

var classicVolatile = map[string]bool{
	"timestamp.us": true, "error.id": true, "error.grouping_key": true, "transaction.duration.us": true,
	"span.duration.us": true, "transaction.duration.histogram": true, "transaction.duration.summary": true,
	"span.destination.service.response_time": true, "error.exception": true, "error.culprit": true,
}

func classicGoldenFields(d classicDoc, r *strings.Replacer) map[string]any {
	out := map[string]any{}
	for _, f := range classicFields {
		v, ok := d.get(f)
		if !ok {
			continue
		}
		if s, isStr := v.(string); isStr {
			v = localPort.ReplaceAllString(r.Replace(s), "127.0.0.1:<port>")
		}
		if classicVolatile[f] {
			v = volatileValue(v)
			if m, isMap := v.(map[string]any); isMap && len(m) > 0 {
				v = "<present>"
			}
		}
		out[f] = v
	}
	return out
}

func checkClassicGolden(t *testing.T, s apmSent, found map[string]classicDoc, ms map[string][]classicDoc) {
	t.Helper()
	header := "# " + s.protocol + ": the classic APM overlay's documents of one trace and the service's 1m\n" +
		"# metricsets (TestAPMClassic; `go test ./test/e2e -run TestAPMClassic -update` rewrites this file),\n" +
		"# as the APM integration's pipelines leave them. Fields by Kibana 8.13's names (apm_queries.md,\n" +
		"# document_type.ts); <present> and <positive> stand for values that differ on every run.\n"
	path := filepath.Join("testdata", "apm-classic", strings.TrimPrefix(s.protocol, "classic-")+".yaml")
	checkGolden(t, s.protocol, path, header, goldenOf(s, found, ms, classicGoldenFields))
}

// otelClassicTrace sends TestAPMOverlay's OTel SDK trace: a server root, an HTTP client call and
// an internal span with a recorded exception.
func otelClassicTrace(ctx context.Context, t *testing.T, endpoint, service string) apmSent {
	t.Helper()
	tr := sendAPMTrace(ctx, t, endpoint, service)
	return apmSent{
		protocol: "otel-go", service: service, traceID: tr.traceID,
		spans:   map[string]string{"transaction": tr.rootID, "exit": tr.clientID, "internal": tr.errorID},
		errors:  []string{"internal"},
		replace: map[string]string{service: "<service>"},
	}
}

// agentClassicTraces runs elastic-apm-node's test application for one /users request and one
// /fail request: the first's transaction, HTTP exit span, custom span and the /backend
// transaction under the exit span; the second's transaction and captured error.
func agentClassicTraces(ctx context.Context, t *testing.T, endpoint, service string) []apmSent {
	t.Helper()
	var out []apmSent
	for _, r := range runAPMNodeAgent(ctx, t, endpoint, service, 1) {
		s := apmSent{protocol: "elastic-apm-node", service: service, traceID: r.TraceID, replace: map[string]string{service: "<service>"}}
		switch {
		case r.Route == "/fail":
			s.protocol += "-error"
			s.spans = map[string]string{"transaction": r.TransactionID}
			s.errors = []string{"transaction"}
		case r.HTTPSpanID != "":
			s.spans = map[string]string{
				"transaction": r.TransactionID, "exit": r.HTTPSpanID, "internal": r.ComputeSpanID,
				"downstream": r.BackendTransactionID,
			}
		default:
			continue
		}
		out = append(out, s)
	}
	if len(out) != 2 {
		t.Fatalf("elastic-apm-node: want a sampled /users and a /fail request, got %+v", out)
	}
	return out
}
