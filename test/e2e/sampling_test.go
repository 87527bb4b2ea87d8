package e2e

import (
	"context"
	"encoding/json"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tracegate/tracegate/internal/testbed/esstandin"
)

// The tracesampling processor through the binary with real clients: what the tracer kept is
// stored, what it rejected is not, and the Kibana APM aggregation still counts every trace.

const sampledTraces = 300

// storedSpans returns, per trace id, the span documents (not span events) in traces data streams.
func storedSpans(t *testing.T, docs []esstandin.Document) map[string]int {
	t.Helper()
	out := map[string]int{}
	for _, d := range docs {
		if !strings.HasPrefix(d.Index, "traces-") {
			continue
		}
		var doc struct {
			TraceID   string `json:"trace_id"`
			SpanID    string `json:"span_id"`
			EventName string `json:"event_name"`
		}
		if err := json.Unmarshal(d.Source, &doc); err != nil {
			t.Fatalf("document %s: %v", d.ID, err)
		}
		if doc.EventName == "" && doc.SpanID != "" {
			out[doc.TraceID]++
		}
	}
	return out
}

// runSampledDDTraceJS sends sampledTraces traces (a server span and a failing client child each)
// with dd-trace-js at DD_TRACE_SAMPLE_RATE=0.1 and returns the ids of the traces the tracer kept
// and of those it rejected.
func runSampledDDTraceJS(ctx context.Context, t *testing.T, g *gateway, service string) (kept, rejected map[string]bool) {
	t.Helper()
	node := npmCI(ctx, t)
	cmd := exec.CommandContext(ctx, node, "send.js", "--service", service, "--traces", strconv.Itoa(sampledTraces))
	cmd.Dir = ddNodeDir
	cmd.Env = ddClientEnv("DD_TRACE_AGENT_URL=http://"+g.endpoints.DDTrace, "DD_TRACE_SAMPLE_RATE=0.1")
	sent := parseJSONLines[ddSentSpan](t, runDDProgram(t, cmd))
	kept, rejected = map[string]bool{}, map[string]bool{}
	for _, s := range sent {
		if s.ParentID != "" {
			continue
		}
		switch {
		case s.SamplingPriority == nil:
			t.Fatalf("trace %s: send.js printed no sampling priority", s.TraceID)
		case *s.SamplingPriority > 0:
			kept[s.TraceID] = true
		default:
			rejected[s.TraceID] = true
		}
	}
	if len(kept)+len(rejected) != sampledTraces || len(kept) == 0 || len(rejected) < sampledTraces/2 {
		t.Fatalf("the tracer kept %d and rejected %d of %d traces: not a 10 %% sample", len(kept), len(rejected), sampledTraces)
	}
	return kept, rejected
}

// checkKeptOnly waits until every kept trace is stored, stops tracegate (so nothing is in flight)
// and checks that no rejected trace was stored and that the drops were counted.
func checkKeptOnly(ctx context.Context, t *testing.T, g *gateway, kept, rejected map[string]bool) {
	t.Helper()
	waitCtx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	for {
		stored := storedSpans(t, g.es.Documents())
		n := 0
		for id := range kept {
			if stored[id] == 2 {
				n++
			}
		}
		if n == len(kept) {
			break
		}
		select {
		case <-waitCtx.Done():
			t.Fatalf("%d of the %d traces the tracer kept are stored whole", n, len(kept))
		case <-time.After(250 * time.Millisecond):
		}
	}
	dropped := metricSum(t, g, "otelcol_processor_tracesampling_traces_total", `decision="dropped"`, `reason="priority_user_reject"`)
	g.stopAndFlush(t)
	stored := storedSpans(t, g.es.Documents())
	for id := range rejected {
		if stored[id] > 0 {
			t.Errorf("trace %s: rejected by the tracer (priority -1), stored anyway", id)
		}
	}
	if len(stored) != len(kept) {
		t.Errorf("%d traces stored, want the %d the tracer kept", len(stored), len(kept))
	}
	if int(dropped) != len(rejected) {
		t.Errorf("otelcol_processor_tracesampling_traces_total{decision=dropped,reason=priority_user_reject} = %v, want %d", dropped, len(rejected))
	}
}

// TestDDTraceSampleRateHonoured: dd-trace-js at DD_TRACE_SAMPLE_RATE=0.1 marks nine traces in ten
// user-reject (-1), as it does behind a Datadog agent; tracegate stores only the others.
func TestDDTraceSampleRateHonoured(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	g := startGateway(t, "default.yaml")
	kept, rejected := runSampledDDTraceJS(ctx, t, g, "e2e-sample-rate")
	checkKeptOnly(ctx, t, g, kept, rejected)
}

// TestDDTraceSampleRateAPMCountsAll: with the Kibana APM overlay, the same traces; the rejected
// ones are not stored, but the aggregated transaction metrics count every trace sent.
func TestDDTraceSampleRateAPMCountsAll(t *testing.T) {
	// Mostly waiting for a minute's edge: run beside the other tests.
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	g := startGatewayWith(t, gatewayOptions{config: "default.yaml", overlays: []string{"elasticsearch/apm.yaml"}})
	const service = "e2e-sample-rate-apm"
	kept, rejected := runSampledDDTraceJS(ctx, t, g, service)

	// The 1m transaction metrics are exported at the minute's end.
	docs, ok := waitForDocs(ctx, t, g.es, func(docs []apmDoc) bool {
		return transactionCount(apmServiceMetrics(docs, service)) >= sampledTraces
	})
	if got := transactionCount(apmServiceMetrics(docs, service)); !ok || got != sampledTraces {
		t.Fatalf("aggregated transactions of %s: %v, want every trace sent (%d)", service, got, sampledTraces)
	}
	checkKeptOnly(ctx, t, g, kept, rejected)
}

// transactionCount adds up the transaction metrics' counts (transaction.duration.summary's
// value_count) over the 1m documents.
func transactionCount(metrics map[string][]apmDoc) float64 {
	sum := 0.0
	for _, d := range metrics["metrics-transaction.1m.otel-default"] {
		if s, ok := d.Metrics["transaction.duration.summary"].(map[string]any); ok {
			n, _ := s["value_count"].(float64)
			sum += n
		}
	}
	return sum
}
