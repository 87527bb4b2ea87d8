package e2e

// configs/sampling/tail.yaml through the binary: whole traces decided after their last span, the
// failing and slow ones kept, a tenth of the rest (exactly those whose trace id hashes below the
// threshold), pending spans surviving SIGKILL, and two replicas behind trace-id routing.

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"hash/fnv"
	"math"
	"math/big"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/openzipkin/zipkin-go"
	zipkinhttp "github.com/openzipkin/zipkin-go/reporter/http"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/tracegate/tracegate/internal/testbed/esstandin"
)

// tailTrace is one trace a test sent: its id as stored (32 lowercase hex digits), its spans, and
// "failing", "slow" or "plain".
type tailTrace struct {
	TraceID string   `json:"trace_id"`
	SpanIDs []string `json:"span_ids"`
	Kind    string   `json:"kind"`
	Service string   `json:"-"`
}

// tailKind is the kind of trace i: the first failing ones fail, the next slow ones last 1.2 s.
func tailKind(i, failing, slow int) string {
	switch {
	case i < failing:
		return "failing"
	case i < failing+slow:
		return "slow"
	}
	return "plain"
}

// tailDuration is how long a trace of that kind lasts (timestamps set, not slept).
func tailDuration(kind string) time.Duration {
	if kind == "slow" {
		return 1200 * time.Millisecond
	}
	return 20 * time.Millisecond
}

// tailQuick shortens the overlay's decision wait so that a test does not wait 10 s per run.
const tailQuick = "processors:\n  durable_tail_sampling:\n    decision_wait: 2s\n"

func TestTailSamplingKeepsWholeInterestingTraces(t *testing.T) {
	g := startGatewayWith(t, gatewayOptions{config: "default.yaml", overlays: []string{"sampling/tail.yaml"}, extraConfig: tailQuick})
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	var sent []tailTrace
	sent = append(sent, sendOTelTail(ctx, t, g.endpoints.OTLPHTTP, "tail-otel", 200, 10, 5)...)
	sent = append(sent, sendZipkinTail(t, "http://"+g.endpoints.Zipkin+"/api/v2/spans", "tail-zipkin", 200, 10, 5)...)
	sent = append(sent, sendDDTail(ctx, t, "http://"+g.endpoints.DDTrace, "tail-dd", 200, 10, 5)...)
	decided := 0.0
	waitFor(t, 10*time.Second, func() bool {
		decided = metricSum(t, g, "otelcol_processor_durable_tail_sampling_traces_decided_total")
		return decided >= float64(len(sent))
	})
	checkTailSampled(ctx, t, g.es, func() { g.stopAndFlush(t) }, sent)
	if decided != float64(len(sent)) {
		t.Errorf("traces decided: %v, want %d (each once)", decided, len(sent))
	}
}

// checkTailSampled waits for the traces that must be kept, stops tracegate, and checks that each
// kept trace is stored whole and once, and nothing else is stored.
func checkTailSampled(ctx context.Context, t *testing.T, es *esstandin.Server, stop func(), sent []tailTrace) {
	t.Helper()
	want := 0
	for _, tr := range sent {
		if keepsTail(t, tr) {
			want += len(tr.SpanIDs)
		}
	}
	wctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	if err := es.WaitForSpans(wctx, want); err != nil {
		t.Errorf("waiting for %d spans of kept traces: %v", want, err)
	}
	stop()
	stored := storedSpanIDs(t, es.Documents())
	perService := map[string][2]int{} // plain traces kept, plain traces sent
	for _, tr := range sent {
		keep := keepsTail(t, tr)
		n := 0
		for _, id := range tr.SpanIDs {
			n += stored[tr.TraceID+"/"+id]
			if stored[tr.TraceID+"/"+id] > 1 {
				t.Errorf("%s trace %s: span %s stored %d times", tr.Service, tr.TraceID, id, stored[tr.TraceID+"/"+id])
			}
		}
		switch {
		case keep && n != len(tr.SpanIDs):
			t.Errorf("%s %s trace %s: %d of its %d spans stored, want all", tr.Service, tr.Kind, tr.TraceID, n, len(tr.SpanIDs))
		case !keep && n != 0:
			t.Errorf("%s %s trace %s: %d spans stored, want none", tr.Service, tr.Kind, tr.TraceID, n)
		}
		if tr.Kind == "plain" {
			c := perService[tr.Service]
			c[1]++
			if keep {
				c[0]++
			}
			perService[tr.Service] = c
		}
	}
	kept, plain := 0, 0
	for svc, c := range perService {
		t.Logf("%s: %d of %d plain traces kept", svc, c[0], c[1])
		kept, plain = kept+c[0], plain+c[1]
	}
	// Each trace's decision was checked against the policy above; this checks that the policy
	// keeps about a tenth of the clients' random trace ids: within five standard deviations
	// (a false failure about once in a million runs; 8 of 185 happened at the old bound, n/20).
	mean, sd := float64(plain)/10, math.Sqrt(float64(plain)*0.1*0.9)
	if float64(kept) < max(1, mean-5*sd) || float64(kept) > mean+5*sd {
		t.Errorf("%d of %d plain traces kept, want about a tenth (%.0f ± %.0f)", kept, plain, mean, 5*sd)
	}
}

// storedSpanIDs counts the stored span documents by "trace id/span id".
func storedSpanIDs(t *testing.T, docs []esstandin.Document) map[string]int {
	t.Helper()
	out := map[string]int{}
	for _, d := range docs {
		if !strings.HasPrefix(d.Index, "traces-") {
			continue
		}
		var od otelDoc
		if err := json.Unmarshal(d.Source, &od); err != nil {
			t.Fatalf("document %s: %v", d.ID, err)
		}
		out[od.TraceID+"/"+od.SpanID]++
	}
	return out
}

// keepsTail is the overlay's decision: failing and slow traces, and plain ones whose trace id
// hashes (FNV-1a of contrib's default salt and the id's 16 bytes) into the lowest tenth.
func keepsTail(t *testing.T, tr tailTrace) bool {
	return tr.Kind != "plain" || tenPercent(t, tr.TraceID)
}

func tenPercent(t *testing.T, traceID string) bool {
	t.Helper()
	id, err := hex.DecodeString(traceID)
	if err != nil || len(id) != 16 {
		t.Fatalf("trace id %q: %v", traceID, err)
	}
	h := fnv.New64a()
	_, _ = h.Write([]byte("default-hash-seed"))
	_, _ = h.Write(id)
	space := new(big.Float).SetUint64(math.MaxUint64)
	threshold, _ := space.Mul(space, big.NewFloat(0.1)).Uint64()
	return h.Sum64() <= threshold
}

// sendOTelTail sends n traces of three spans with the OpenTelemetry Go SDK over OTLP/HTTP.
func sendOTelTail(ctx context.Context, t *testing.T, endpoint, service string, n, failing, slow int) []tailTrace {
	t.Helper()
	exp, err := otlptracehttp.New(ctx, otlptracehttp.WithEndpoint(endpoint), otlptracehttp.WithInsecure())
	if err != nil {
		t.Fatal(err)
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp),
		sdktrace.WithResource(resource.NewSchemaless(attribute.String("service.name", service))))
	sent := sendOTelTraces(ctx, tp.Tracer("tail"), tp.Tracer("tail"), service, n, failing, slow)
	if err := tp.Shutdown(ctx); err != nil { // flushes; returns once every batch was answered
		t.Fatalf("OTel SDK: %v", err)
	}
	return sent
}

// sendOTelTraces makes traces whose root comes from rootTracer and whose children come from
// childTracer (two processes' SDKs, in the replicas test).
func sendOTelTraces(ctx context.Context, rootTracer, childTracer trace.Tracer, service string, n, failing, slow int) []tailTrace {
	out := make([]tailTrace, 0, n)
	for i := range n {
		kind := tailKind(i, failing, slow)
		start := time.Now().Add(-tailDuration(kind))
		rctx, root := rootTracer.Start(ctx, "GET /orders", trace.WithTimestamp(start), trace.WithSpanKind(trace.SpanKindServer))
		tr := tailTrace{
			TraceID: root.SpanContext().TraceID().String(), Kind: kind, Service: service,
			SpanIDs: []string{root.SpanContext().SpanID().String()},
		}
		for c := range 2 {
			_, child := childTracer.Start(rctx, "SELECT orders", trace.WithTimestamp(start.Add(time.Millisecond)))
			if kind == "failing" && c == 1 {
				child.SetStatus(codes.Error, "connection reset")
			}
			child.End(trace.WithTimestamp(start.Add(2 * time.Millisecond)))
			tr.SpanIDs = append(tr.SpanIDs, child.SpanContext().SpanID().String())
		}
		root.End(trace.WithTimestamp(start.Add(tailDuration(kind))))
		out = append(out, tr)
	}
	return out
}

// sendZipkinTail sends n traces of three spans with zipkin-go over Zipkin v2 JSON.
func sendZipkinTail(t *testing.T, url, service string, n, failing, slow int) []tailTrace {
	t.Helper()
	rep := zipkinhttp.NewReporter(url, zipkinhttp.BatchSize(50), zipkinhttp.Timeout(30*time.Second))
	ep, err := zipkin.NewEndpoint(service, "127.0.0.1:8080")
	if err != nil {
		t.Fatal(err)
	}
	tracer, err := zipkin.NewTracer(rep, zipkin.WithLocalEndpoint(ep), zipkin.WithTraceID128Bit(true),
		zipkin.WithSampler(zipkin.AlwaysSample))
	if err != nil {
		t.Fatal(err)
	}
	out := make([]tailTrace, 0, n)
	for i := range n {
		kind := tailKind(i, failing, slow)
		start := time.Now().Add(-tailDuration(kind))
		root := tracer.StartSpan("get /orders", zipkin.StartTime(start), zipkin.Kind("SERVER"))
		tr := tailTrace{
			TraceID: root.Context().TraceID.String(), Kind: kind, Service: service,
			SpanIDs: []string{root.Context().ID.String()},
		}
		for c := range 2 {
			child := tracer.StartSpan("select orders", zipkin.Parent(root.Context()), zipkin.StartTime(start.Add(time.Millisecond)))
			if kind == "failing" && c == 1 {
				child.Tag("error", "connection reset")
			}
			child.FinishedWithDuration(time.Millisecond)
			tr.SpanIDs = append(tr.SpanIDs, child.Context().ID.String())
		}
		root.FinishedWithDuration(tailDuration(kind))
		out = append(out, tr)
	}
	if err := rep.Close(); err != nil { // sends what is batched
		t.Fatalf("zipkin reporter: %v", err)
	}
	return out
}

// sendDDTail sends n traces with dd-trace-go (test/ddclients/cmd/ddgo-tail).
func sendDDTail(ctx context.Context, t *testing.T, agentURL, service string, n, failing, slow int) []tailTrace {
	t.Helper()
	bin := buildDDGoProgram(ctx, t, "ddgo-tail")
	cmd := exec.CommandContext(ctx, bin, "-service", service, "-traces", strconv.Itoa(n),
		"-failing", strconv.Itoa(failing), "-slow", strconv.Itoa(slow))
	cmd.Dir = ddclientsDir
	// DD_TRACE_SAMPLE_RATE=1 (ddClientEnv) also limits the tracer to 100 traces a second: the
	// tracer would reject the rest itself, before tail sampling sees them.
	cmd.Env = ddClientEnv("DD_TRACE_AGENT_URL="+agentURL, "DD_TRACE_RATE_LIMIT=100000")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("ddgo-tail: %v\n%s", err, exitStderr(err))
	}
	var sent []tailTrace
	dec := json.NewDecoder(strings.NewReader(string(out)))
	for dec.More() {
		var tr tailTrace
		if err := dec.Decode(&tr); err != nil {
			t.Fatalf("ddgo-tail output: %v", err)
		}
		tr.Service = service
		sent = append(sent, tr)
	}
	if len(sent) != n {
		t.Fatalf("ddgo-tail printed %d traces, want %d", len(sent), n)
	}
	return sent
}

// waitFor polls cond every 100 ms until it holds or within has passed.
func waitFor(t *testing.T, within time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(within)
	for !cond() && time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
	}
}

func exitStderr(err error) string {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return string(ee.Stderr)
	}
	return ""
}

// With configs/durable.yaml, traces acknowledged and waiting for their decision survive SIGKILL:
// the next process decides them, and every kept trace is stored whole, once.
func TestTailSamplingPendingTracesSurviveSIGKILL(t *testing.T) {
	g := startGatewayWith(t, gatewayOptions{
		config: "durable.yaml", overlays: []string{"sampling/tail.yaml"},
		env: []string{"TRACEGATE_TAIL_SAMPLING_FSYNC=always"},
	})
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	sent := sendOTelTail(ctx, t, g.endpoints.OTLPHTTP, "tail-kill", 200, 10, 5)
	time.Sleep(2 * time.Second) // acknowledged, and 8 s before the 10 s decision
	if err := g.proc.Kill(); err != nil {
		t.Fatal(err)
	}
	if n := g.es.Stats().SpansByService["tail-kill"]; n != 0 {
		t.Fatalf("%d spans stored before the decision", n)
	}
	g.start(t)
	checkTailSampled(ctx, t, g.es, func() { g.stopAndFlush(t) }, sent)
}

// Two gateway replicas behind two agents that route by trace id (contrib's loadbalancing
// exporter, static resolver): each trace's root goes through one agent and its children through
// the other, yet every trace meets on one gateway, is decided once, and is stored whole.
func TestTailSamplingReplicasBehindTraceIDRouting(t *testing.T) {
	es := startStandin(t, "")
	gateways := []*gateway{
		startGatewayWith(t, gatewayOptions{config: "default.yaml", overlays: []string{"sampling/tail.yaml"}, extraConfig: tailQuick, es: es}),
		startGatewayWith(t, gatewayOptions{config: "default.yaml", overlays: []string{"sampling/tail.yaml"}, extraConfig: tailQuick, es: es}),
	}
	route := []string{"GATEWAY_A=" + gateways[0].listeners.OTLPGRPC, "GATEWAY_B=" + gateways[1].listeners.OTLPGRPC}
	agents := []*gateway{
		startGatewayWith(t, gatewayOptions{config: "default.yaml", overlays: []string{"../test/e2e/testdata/agent-traceid.yaml"}, env: route}),
		startGatewayWith(t, gatewayOptions{config: "default.yaml", overlays: []string{"../test/e2e/testdata/agent-traceid.yaml"}, env: route}),
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	var tps []*sdktrace.TracerProvider
	for _, a := range agents {
		exp, err := otlptracehttp.New(ctx, otlptracehttp.WithEndpoint(a.endpoints.OTLPHTTP), otlptracehttp.WithInsecure())
		if err != nil {
			t.Fatal(err)
		}
		tps = append(tps, sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp),
			sdktrace.WithResource(resource.NewSchemaless(attribute.String("service.name", "tail-replicas")))))
	}
	sent := sendOTelTraces(ctx, tps[0].Tracer("tail"), tps[1].Tracer("tail"), "tail-replicas", 200, 10, 5)
	for _, tp := range tps {
		if err := tp.Shutdown(ctx); err != nil {
			t.Fatal(err)
		}
	}
	// Each trace is decided where its spans met.
	decided := 0.0
	waitFor(t, 30*time.Second, func() bool {
		decided = 0
		for _, gw := range gateways {
			decided += metricSum(t, gw, "otelcol_processor_durable_tail_sampling_traces_decided_total")
		}
		return decided >= float64(len(sent))
	})
	if decided != float64(len(sent)) {
		t.Errorf("traces decided on the two gateways: %v, want %d (each trace once, on one gateway)", decided, len(sent))
	}
	for i, gw := range gateways {
		t.Logf("gateway %d decided %v traces", i, metricSum(t, gw, "otelcol_processor_durable_tail_sampling_traces_decided_total"))
	}
	checkTailSampled(ctx, t, es, func() {
		for _, gw := range append(agents, gateways...) {
			gw.stopAndFlush(t)
		}
	}, sent)
}
