package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"

	"github.com/tracegate/tracegate/internal/testbed/tracemodel"
)

// TestDashboardQueriesExist: every metric the Grafana dashboard queries is in tracegate's
// /metrics after a short load over OTLP (traces, logs, metrics) and the Datadog intake, so the dashboard cannot go stale
// when a metric is renamed.
func TestDashboardQueriesExist(t *testing.T) {
	var queried, tail, classic []string
	for _, m := range dashboardMetrics(t, "../../charts/tracegate/dashboards/tracegate.json") {
		switch {
		case strings.HasPrefix(m, "otelcol_processor_durable_tail_sampling_"):
			tail = append(tail, m)
		case strings.HasPrefix(m, "otelcol_connector_apmdocs_"), strings.HasPrefix(m, "otelcol_exporter_elasticsearch_documents_"):
			classic = append(classic, m)
		default:
			queried = append(queried, m)
		}
	}
	if len(queried) < 10 || len(tail) < 4 || len(classic) < 3 {
		t.Fatalf("the dashboard queries only %v, %v and %v", queried, tail, classic)
	}
	t.Run("tail sampling", func(t *testing.T) { checkTailSamplingPanels(t, tail) })
	t.Run("classic APM", func(t *testing.T) { checkClassicAPMPanel(t, classic) })
	g := startGateway(t, "default.yaml")
	load := newOTLPLoad(g.endpoints.OTLPHTTP)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	load.run(ctx, 2, 50, 100*time.Millisecond)
	cancel()
	// Logs and metrics too: the buffer's counters per signal appear once something went through.
	for _, sig := range []signal{logSignal, metricSignal} {
		if status := newSignalLoad(g.endpoints.OTLPHTTP, sig).send(context.Background(), 10); status != http.StatusOK {
			t.Fatalf("%s: status %d", sig.unit, status)
		}
	}
	// A tracer that reports the P0 spans it dropped before sending, as dd-trace libraries do, and
	// sends one invalid span (a zero span id), which the receiver drops and counts.
	body := tracemodel.EncodeDDTraceV04([][]tracemodel.DDSpan{{
		{Service: "dash", Name: "web.request", Resource: "GET /", TraceID: 1, SpanID: 1, Start: time.Now().UnixNano(), Duration: 1000},
		{Service: "dash", Name: "web.request", Resource: "GET /", TraceID: 1, SpanID: 0, Start: time.Now().UnixNano(), Duration: 1000},
	}})
	req, err := http.NewRequest(http.MethodPost, "http://"+g.endpoints.DDTrace+"/v0.4/traces", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/msgpack")
	req.Header.Set("Datadog-Client-Dropped-P0-Spans", "3")
	req.Header.Set("Datadog-Client-Dropped-P0-Traces", "1")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	checkAllAckedArrived(t, g, load, time.Minute)

	// Logs and metrics are delivered by the buffer's workers after the spans the check waited
	// for: read the endpoint until every queried series is there, or the deadline passes.
	var missing []string
	// Polling the process's metrics until they show what it did.
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		exported := exportedMetrics(t, g.metricsURL())
		missing = missing[:0]
		for _, name := range queried {
			if !exported[name] {
				missing = append(missing, name)
			}
		}
		if len(missing) == 0 || time.Now().After(deadline) {
			break
		}
	}
	for _, name := range missing {
		t.Errorf("the dashboard queries %s, which tracegate does not export", name)
	}
}

// checkTailSamplingPanels runs configs/sampling/tail.yaml with room for two traces: a third is
// refused, the two are decided, and a late span follows its trace's decision; then every tail
// sampling metric the dashboard queries is exported.
func checkTailSamplingPanels(t *testing.T, queried []string) {
	g := startGatewayWith(t, gatewayOptions{
		config: "default.yaml", overlays: []string{"sampling/tail.yaml"},
		extraConfig: "processors:\n  durable_tail_sampling:\n    decision_wait: 1s\n    num_traces: 2\n",
	})
	url := "http://" + g.endpoints.OTLPHTTP + "/v1/traces"
	for i, want := range []int{http.StatusOK, http.StatusOK, http.StatusTooManyRequests} {
		if got := postOTLPSpan(t, url, byte(i+1), 1, i == 0); got != want {
			t.Fatalf("trace %d: status %d, want %d", i+1, got, want)
		}
	}
	waitFor(t, 10*time.Second, func() bool {
		return metricSum(t, g, "otelcol_processor_durable_tail_sampling_traces_decided_total") == 2
	})
	if got := postOTLPSpan(t, url, 1, 2, false); got != http.StatusOK { // late span of the kept trace
		t.Fatalf("late span: status %d", got)
	}
	exported := exportedMetrics(t, g.metricsURL())
	for _, name := range queried {
		if !exported[name] {
			t.Errorf("the dashboard queries %s, which tracegate does not export", name)
		}
	}
}

// checkClassicAPMPanel: a classic APM gateway given an Elastic APM agent's sampled and unsampled
// transactions exports every series the classic panel queries.
func checkClassicAPMPanel(t *testing.T, queried []string) {
	g := startGatewayWith(t, gatewayOptions{config: "default.yaml", overlays: []string{"elasticsearch/apm-classic.yaml"}, esVersion: "8.13.4"})
	now := time.Now().UnixMicro()
	var body strings.Builder
	body.WriteString(`{"metadata":{"service":{"name":"dash-classic","agent":{"name":"nodejs","version":"4.18.0"}}}}` + "\n")
	for i, sampled := range []bool{true, false} {
		fmt.Fprintf(&body, `{"transaction":{"id":"%016x","trace_id":"%032x","name":"GET /","type":"request","duration":1.5,"timestamp":%d,"sampled":%t,"span_count":{"started":0}}}`+"\n",
			i+1, i+1, now, sampled)
	}
	resp, err := http.Post("http://"+g.endpoints.ElasticAPM+"/intake/v2/events", "application/x-ndjson", strings.NewReader(body.String()))
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusAccepted {
		t.Fatalf("intake: status %d", resp.StatusCode)
	}
	var missing []string
	waitFor(t, 30*time.Second, func() bool {
		exported := exportedMetrics(t, g.metricsURL())
		missing = missing[:0]
		for _, name := range queried {
			if !exported[name] {
				missing = append(missing, name)
			}
		}
		return len(missing) == 0
	})
	for _, name := range missing {
		t.Errorf("the dashboard queries %s, which a classic APM gateway does not export", name)
	}
}

// postOTLPSpan sends one span of trace traceID over OTLP/HTTP protobuf and returns the status.
func postOTLPSpan(t *testing.T, url string, traceID, spanID byte, failed bool) int {
	t.Helper()
	td := ptrace.NewTraces()
	rs := td.ResourceSpans().AppendEmpty()
	rs.Resource().Attributes().PutStr("service.name", "dash-tail")
	sp := rs.ScopeSpans().AppendEmpty().Spans().AppendEmpty()
	sp.SetTraceID(pcommon.TraceID{0xda, traceID})
	sp.SetSpanID(pcommon.SpanID{traceID, spanID})
	sp.SetName("op")
	now := time.Now()
	sp.SetStartTimestamp(pcommon.NewTimestampFromTime(now))
	sp.SetEndTimestamp(pcommon.NewTimestampFromTime(now.Add(time.Millisecond)))
	if failed {
		sp.Status().SetCode(ptrace.StatusCodeError)
	}
	body, err := ptraceotlp.NewExportRequestFromTraces(td).MarshalProto()
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.Post(url, "application/x-protobuf", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	return resp.StatusCode
}

// exportedMetrics reads the names of the series the collector's Prometheus endpoint exports.
func exportedMetrics(t *testing.T, url string) map[string]bool {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	exported := map[string]bool{}
	for line := range strings.SplitSeq(string(b), "\n") {
		if name, _, ok := strings.Cut(line, "{"); ok && !strings.HasPrefix(line, "#") {
			exported[name] = true
		} else if f := strings.Fields(line); len(f) == 2 {
			exported[f[0]] = true
		}
	}
	return exported
}

// dashboardMetrics returns the otelcol_* metric names in the expressions of every panel target.
func dashboardMetrics(t *testing.T, path string) []string {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var dash struct {
		Panels []struct {
			Title   string `json:"title"`
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
	}
	if err := json.Unmarshal(raw, &dash); err != nil {
		t.Fatal(err)
	}
	re := regexp.MustCompile(`\botelcol_[a-z0-9_]+`)
	seen := map[string]bool{}
	for _, p := range dash.Panels {
		if len(p.Targets) == 0 {
			t.Errorf("panel %q queries nothing", p.Title)
		}
		for _, tg := range p.Targets {
			for _, m := range re.FindAllString(tg.Expr, -1) {
				seen[m] = true
			}
		}
	}
	out := make([]string, 0, len(seen))
	for m := range seen {
		out = append(out, m)
	}
	sort.Strings(out)
	return out
}
