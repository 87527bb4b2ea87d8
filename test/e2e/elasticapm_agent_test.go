package e2e

// The real Elastic APM Node.js agent (elastic-apm-node 4.x, test/ddclients/apmnode) sends to the
// elasticapm receiver of bin/tracegate, with the Kibana APM overlay: its transactions, spans,
// errors and metricsets must land in the data streams the APM UI reads, with the ids, parents,
// service and durations the agent reported, and the agent must log no error (it calls GET / for
// the server's version, and logs an error for any status but 202 on the intake).

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

var apmNodeDir = filepath.Join(ddclientsDir, "apmnode")

// apmAgentRequest is one line app.js printed: a request it made and the agent's ids for it.
type apmAgentRequest struct {
	Route                string `json:"route"`
	TraceID              string `json:"trace_id"`
	TransactionID        string `json:"transaction_id"`
	HTTPSpanID           string `json:"http_span_id"`
	ComputeSpanID        string `json:"compute_span_id"`
	BackendTransactionID string `json:"backend_transaction_id"`
	Error                string `json:"error"`
	Sampled              *bool  `json:"sampled"`
}

// runAPMNodeAgent runs app.js against the receiver at endpoint with REQUESTS=requests and returns
// what it printed; the agent's log (stderr) must hold no error or fatal record (--strict).
func runAPMNodeAgent(ctx context.Context, t *testing.T, endpoint, service string, requests int, extraEnv ...string) []apmAgentRequest {
	t.Helper()
	node := npmCIIn(ctx, t, apmNodeDir)
	cmd := exec.CommandContext(ctx, node, "app.js", "--strict", "--service", service, "--requests", strconv.Itoa(requests))
	cmd.Dir = apmNodeDir
	cmd.Env = append(apmAgentEnv(), "APM_SERVER_URL=http://"+endpoint)
	cmd.Env = append(cmd.Env, extraEnv...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	t.Logf("agent log:\n%s", stderr.String())
	if err != nil {
		t.Fatalf("app.js: %v (exit 3: the agent logged an error)\n%s", err, stderr.String())
	}
	for line := range strings.SplitSeq(stderr.String(), "\n") {
		if strings.HasPrefix(line, "elastic-apm-node ERROR") || strings.HasPrefix(line, "elastic-apm-node FATAL") {
			t.Errorf("the agent logged: %s", line)
		}
	}
	return parseJSONLines[apmAgentRequest](t, out)
}

// apmAgentEnv is the environment without the agent's own ELASTIC_APM_* settings, which would
// override app.js's.
func apmAgentEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "ELASTIC_APM_") {
			env = append(env, kv)
		}
	}
	return env
}

func TestElasticAPMNodeAgent(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	g := startGatewayWith(t, gatewayOptions{config: "default.yaml", overlays: []string{"elasticsearch/apm.yaml"}, esVersion: "9.2.0"})
	service := "apm-node-" + newTestID()[:8]
	sent := runAPMNodeAgent(ctx, t, g.endpoints.ElasticAPM, service, 2)

	var users, fails []apmAgentRequest
	for _, r := range sent {
		if r.Route == "/fail" {
			fails = append(fails, r)
		} else {
			users = append(users, r)
		}
	}
	if len(users) != 2 || len(fails) != 2 {
		t.Fatalf("app.js printed %d /users and %d /fail requests, want 2 each: %+v", len(users), len(fails), sent)
	}
	// Per /users request: its transaction, the http exit span, the compute span and /backend's
	// transaction; per /fail: its transaction and the error; metricsets of the service.
	waitCtx, cancelWait := context.WithTimeout(ctx, 30*time.Second)
	defer cancelWait()
	docs, ok := waitForDocs(waitCtx, t, g.es, func(docs []apmDoc) bool {
		spans, errs, metrics := agentDocs(docs, service)
		return len(spans) >= 4*len(users)+len(fails) && len(errs) >= len(fails) && len(metrics) > 0
	})
	spans, errs, metrics := agentDocs(docs, service)
	if !ok {
		t.Fatalf("after 30 s: %d span, %d error and %d metric documents of %s", len(spans), len(errs), len(metrics), service)
	}
	for _, u := range users {
		checkAgentTransaction(t, spans, u.TraceID, u.TransactionID, "", "GET /users/:id", "HTTP 2xx", "success")
		checkAgentTransaction(t, spans, u.TraceID, u.BackendTransactionID, u.HTTPSpanID, "GET /backend", "HTTP 2xx", "success")
		exit := checkAgentSpan(t, spans, u.TraceID, u.HTTPSpanID, u.TransactionID, "external", "http", "Client")
		if got := exit.attr("span.destination.service.resource"); !strings.HasPrefix(got, "127.0.0.1:") {
			t.Errorf("exit span span.destination.service.resource %q, want 127.0.0.1:<port>", got)
		}
		if exit.attr("service.target.type") != "http" || !strings.HasPrefix(exit.attr("service.target.name"), "127.0.0.1:") {
			t.Errorf("exit span service.target %q/%q, want http/127.0.0.1:<port>", exit.attr("service.target.type"), exit.attr("service.target.name"))
		}
		checkAgentSpan(t, spans, u.TraceID, u.ComputeSpanID, u.TransactionID, "app", "internal", "Internal")
	}
	for _, f := range fails {
		checkAgentTransaction(t, spans, f.TraceID, f.TransactionID, "", "GET /fail", "HTTP 5xx", "failure")
		checkAgentError(t, errs, f)
	}
	for _, d := range metrics {
		if !strings.HasPrefix(d.index, "metrics-") || !strings.Contains(d.index, ".otel-") {
			t.Errorf("metricset document in %s, want metrics-*.otel-*", d.index)
		}
	}
	if t.Failed() {
		for _, d := range append(append(spans, errs...), metrics[:min(len(metrics), 3)]...) {
			t.Logf("%s: %.1500s", d.index, d.raw)
		}
	}
}

// agentDocs are the service's span documents (traces-*.otel-*), error documents (logs-*) and
// metric documents (metrics-*, the agent's metricsets: not the connector's aggregated ones).
func agentDocs(docs []apmDoc, service string) (spans, errs, metrics []apmDoc) {
	for _, d := range docs {
		if fmt.Sprint(d.Resource.Attributes["service.name"]) != service {
			continue
		}
		switch {
		case strings.HasPrefix(d.index, "traces-"):
			spans = append(spans, d)
		case strings.HasPrefix(d.index, "logs-") && d.attr("processor.event") == "error":
			errs = append(errs, d)
		case strings.HasPrefix(d.index, "metrics-") && d.attr("metricset.interval") == "":
			metrics = append(metrics, d)
		}
	}
	return spans, errs, metrics
}

func findSpan(docs []apmDoc, traceID, spanID string) (apmDoc, bool) {
	for _, d := range docs {
		if d.TraceID == traceID && d.SpanID == spanID {
			return d, true
		}
	}
	return apmDoc{}, false
}

func checkAgentTransaction(t *testing.T, docs []apmDoc, traceID, id, parent, name, result, outcome string) {
	t.Helper()
	d, ok := findSpan(docs, traceID, id)
	if !ok {
		t.Errorf("no document of transaction %s (%s) in trace %s", id, name, traceID)
		return
	}
	if !strings.Contains(d.index, ".otel-") {
		t.Errorf("transaction %s in %s, want traces-*.otel-*", name, d.index)
	}
	want := map[string]string{
		"processor.event": "transaction", "transaction.id": id, "transaction.name": name,
		"transaction.type": "request", "transaction.result": result, "event.outcome": outcome,
	}
	for k, v := range want {
		if got := d.attr(k); got != v {
			t.Errorf("transaction %s: %s = %q, want %q", name, k, got, v)
		}
	}
	if d.ParentSpanID != parent {
		t.Errorf("transaction %s: parent %q, want %q", name, d.ParentSpanID, parent)
	}
	if d.Name != name || d.Kind != "Server" {
		t.Errorf("transaction %s: name %q kind %q, want the transaction's name and Server", name, d.Name, d.Kind)
	}
	if d.number("transaction.duration.us") <= 0 || d.number("timestamp.us") <= 0 {
		t.Errorf("transaction %s: duration %v µs at %v µs, want both positive", name, d.Attributes["transaction.duration.us"], d.Attributes["timestamp.us"])
	}
	if d.Resource.Attributes["agent.name"] != "nodejs" || d.Resource.Attributes["deployment.environment"] != "test" {
		t.Errorf("transaction %s: agent.name %v, deployment.environment %v, want nodejs and test", name,
			d.Resource.Attributes["agent.name"], d.Resource.Attributes["deployment.environment"])
	}
}

func checkAgentSpan(t *testing.T, docs []apmDoc, traceID, id, parent, spanType, subtype, kind string) apmDoc {
	t.Helper()
	d, ok := findSpan(docs, traceID, id)
	if !ok {
		t.Errorf("no document of span %s (%s) in trace %s", id, spanType, traceID)
		return d
	}
	want := map[string]string{"processor.event": "span", "span.type": spanType, "span.subtype": subtype, "transaction.id": parent}
	for k, v := range want {
		if got := d.attr(k); got != v {
			t.Errorf("span %s (%s): %s = %q, want %q", id, spanType, k, got, v)
		}
	}
	if d.ParentSpanID != parent || d.Kind != kind {
		t.Errorf("span %s (%s): parent %q kind %q, want %q %s", id, spanType, d.ParentSpanID, d.Kind, parent, kind)
	}
	if d.number("span.duration.us") <= 0 {
		t.Errorf("span %s (%s): span.duration.us %v, want positive", id, spanType, d.Attributes["span.duration.us"])
	}
	return d
}

func checkAgentError(t *testing.T, docs []apmDoc, f apmAgentRequest) {
	t.Helper()
	for _, d := range docs {
		if d.TraceID != f.TraceID {
			continue
		}
		if d.SpanID != f.TransactionID {
			t.Errorf("error of trace %s: span_id %q, want the transaction %s", f.TraceID, d.SpanID, f.TransactionID)
		}
		// APM Server's error.exception: a list of exceptions (causes after the first).
		exceptions, _ := d.Attributes["error.exception"].([]any)
		first, _ := append(exceptions, nil)[0].(map[string]any)
		for k, v := range map[string]any{"message": f.Error, "type": "Error", "handled": true} {
			if first[k] != v {
				t.Errorf("error of trace %s: error.exception[0].%s = %v, want %v (error.exception %.300v)", f.TraceID, k, first[k], v, exceptions)
			}
		}
		if d.attr("transaction.id") != f.TransactionID || d.attr("transaction.name") != "GET /fail" {
			t.Errorf("error of trace %s: transaction %q %q, want %s GET /fail", f.TraceID, d.attr("transaction.id"), d.attr("transaction.name"), f.TransactionID)
		}
		if d.attr("error.id") == "" || d.attr("error.grouping_key") == "" {
			t.Errorf("error of trace %s: error.id %q, error.grouping_key %q, want both", f.TraceID, d.attr("error.id"), d.attr("error.grouping_key"))
		}
		return
	}
	t.Errorf("no error document of trace %s", f.TraceID)
}

// TestElasticAPMAgentOutage: Elasticsearch is down for 30 s while the agent sends a round of
// requests every second; the agent gets 202 for every intake request (it logs an error for any
// other answer, which fails the run), and every event of every round reaches Elasticsearch once
// it is back, exactly once.
func TestElasticAPMAgentOutage(t *testing.T) {
	t.Parallel()
	const rounds, interval, downAfter, downFor = 40, time.Second, 5 * time.Second, 30 * time.Second
	ctx, cancel := context.WithTimeout(t.Context(), 4*time.Minute)
	defer cancel()
	g := startGateway(t, "default.yaml")
	service := "apm-node-outage-" + newTestID()[:8]

	outage := make(chan error, 1)
	go func() {
		time.Sleep(downAfter) // the agent process sends for downAfter of real time before the outage
		if err := g.es.SetRefusing(true); err != nil {
			outage <- err
			return
		}
		time.Sleep(downFor) // the outage the agent and tracegate processes live through
		outage <- g.es.SetRefusing(false)
	}()
	sent := runAPMNodeAgent(ctx, t, g.endpoints.ElasticAPM, service, rounds, "REQUEST_INTERVAL_MS="+strconv.Itoa(int(interval.Milliseconds())))
	if err := <-outage; err != nil {
		t.Fatal(err)
	}
	if len(sent) != 2*rounds {
		t.Fatalf("app.js printed %d requests, want %d", len(sent), 2*rounds)
	}
	// Per /users round: its transaction, the exit span, the compute span and /backend's
	// transaction; per /fail: its transaction (and an error document).
	want := map[string]bool{}
	for _, r := range sent {
		if r.Route == "/fail" {
			want[r.TransactionID] = true
			continue
		}
		for _, id := range []string{r.TransactionID, r.HTTPSpanID, r.ComputeSpanID, r.BackendTransactionID} {
			want[id] = true
		}
	}
	waitCtx, cancelWait := context.WithTimeout(ctx, 90*time.Second)
	defer cancelWait()
	docs, ok := waitForDocs(waitCtx, t, g.es, func(docs []apmDoc) bool {
		spans, errs, _ := agentDocs(docs, service)
		return len(spans) >= len(want) && len(errs) >= rounds
	})
	spans, errs, _ := agentDocs(docs, service)
	seen := map[string]int{}
	for _, d := range spans {
		seen[d.SpanID]++
	}
	missing, twice := 0, 0
	for id := range want {
		switch seen[id] {
		case 0:
			missing++
		case 1:
		default:
			twice++
		}
	}
	if !ok || missing > 0 || twice > 0 || len(spans) != len(want) || len(errs) != rounds {
		t.Fatalf("after the outage: %d of %d spans missing, %d stored more than once, %d span documents, %d of %d errors",
			missing, len(want), twice, len(spans), len(errs), rounds)
	}
	t.Logf("%d spans and %d errors of %d rounds, each once, after Elasticsearch was down for %v", len(spans), len(errs), rounds, downFor)
}

// TestElasticAPMAgentSecretToken: with the receiver's auth set to bearertokenauth, the agent's
// secretToken (Authorization: Bearer) is checked on GET / and the intake: the right token gets its
// events stored and no error logged; a wrong one gets 401 (the agent logs it) and nothing stored.
func TestElasticAPMAgentSecretToken(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	const token = "apm-secret-token-for-tests"
	overlay := overlayFile(t, map[string]any{
		"extensions": map[string]any{"bearertokenauth/apm": map[string]any{"token": token}},
		"receivers":  map[string]any{"elasticapm": map[string]any{"auth": map[string]any{"authenticator": "bearertokenauth/apm"}}},
		"service":    map[string]any{"extensions": []string{"health_check", "pprof", "zpages", "readylog", "bearertokenauth/apm"}},
	})
	g := startGatewayWith(t, gatewayOptions{config: "default.yaml", overlays: []string{overlay}})
	good := "apm-node-token-" + newTestID()[:8]
	sent := runAPMNodeAgent(ctx, t, g.endpoints.ElasticAPM, good, 1, "APM_SECRET_TOKEN="+token)

	// A wrong token: the agent logs the 401 (so not --strict here) and nothing of it is stored.
	node := npmCIIn(ctx, t, apmNodeDir)
	bad := "apm-node-badtoken-" + newTestID()[:8]
	cmd := exec.CommandContext(ctx, node, "app.js", "--service", bad)
	cmd.Dir = apmNodeDir
	cmd.Env = append(apmAgentEnv(), "APM_SERVER_URL=http://"+g.endpoints.ElasticAPM, "APM_SECRET_TOKEN=wrong")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("app.js with a wrong token: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "401") {
		t.Errorf("the agent did not log a 401 for a wrong token:\n%s", out)
	}

	waitCtx, cancelWait := context.WithTimeout(ctx, 30*time.Second)
	defer cancelWait()
	docs, ok := waitForDocs(waitCtx, t, g.es, func(docs []apmDoc) bool {
		spans, _, _ := agentDocs(docs, good)
		return len(spans) >= 5
	})
	if !ok {
		spans, _, _ := agentDocs(docs, good)
		t.Fatalf("with the secret token: %d span documents of %s, want 5 (%d requests sent)", len(spans), good, len(sent))
	}
	if spans, errs, metrics := agentDocs(docs, bad); len(spans)+len(errs)+len(metrics) > 0 {
		t.Errorf("with a wrong token: %d span, %d error and %d metric documents stored", len(spans), len(errs), len(metrics))
	}
}
