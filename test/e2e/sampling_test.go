package e2e

import (
	"context"
	enc "encoding/binary"
	"encoding/json"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
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

// The tracesampling processor and the ddtrace receiver's drop_rejected_chunks through the binary
// with real clients: what the tracer kept is stored, what it rejected is not (unless told to store
// everything), and the Kibana APM aggregation still counts every trace.

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

// Where the chunks a tracer rejected are dropped: by the ddtrace receiver as soon as they are
// decoded (drop_rejected_chunks, configs/default.yaml), or by tracesampling (the APM overlay, whose
// aggregation counts them first).
const (
	droppedInReceiver      = true
	droppedInTracesampling = false
)

// checkKeptOnly waits until every kept trace is stored, stops tracegate (so nothing is in flight)
// and checks that no rejected trace was stored and that the drops were counted where they were made.
func checkKeptOnly(ctx context.Context, t *testing.T, g *gateway, kept, rejected map[string]bool, inReceiver bool) {
	t.Helper()
	waitCtx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	waitForTraces(waitCtx, t, g, kept)
	byReceiver := metricSum(t, g, "otelcol_receiver_ddtrace_chunks_filtered_total", `reason="priority_user_reject"`)
	byProcessor := metricSum(t, g, "otelcol_processor_tracesampling_traces_total", `decision="dropped"`, `reason="priority_user_reject"`)
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
	want := [2]int{0, len(rejected)}
	if inReceiver {
		want = [2]int{len(rejected), 0}
	}
	if got := [2]int{int(byReceiver), int(byProcessor)}; got != want {
		t.Errorf("priority_user_reject drops counted by the receiver (otelcol_receiver_ddtrace_chunks_filtered_total) and "+
			"by tracesampling (otelcol_processor_tracesampling_traces_total): %v, want %v", got, want)
	}
}

// TestDDTraceSampleRateHonoured: dd-trace-js at DD_TRACE_SAMPLE_RATE=0.1 marks nine traces in ten
// user-reject (-1), as it does behind a Datadog agent; tracegate stores only the others, and the
// receiver drops the rejected ones before translating them.
func TestDDTraceSampleRateHonoured(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	g := startGateway(t, "default.yaml")
	kept, rejected := runSampledDDTraceJS(ctx, t, g, "e2e-sample-rate")
	checkKeptOnly(ctx, t, g, kept, rejected, droppedInReceiver)
}

// TestDDTraceStoreEverything: TRACEGATE_HONOUR_PRIORITY=false, the one change configs/default.yaml
// documents, stores every trace the tracer sent, those it rejected too.
func TestDDTraceStoreEverything(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	g := startGatewayWith(t, gatewayOptions{config: "default.yaml", env: []string{"TRACEGATE_HONOUR_PRIORITY=false"}})
	kept, rejected := runSampledDDTraceJS(ctx, t, g, "e2e-store-everything")
	all := maps.Clone(kept)
	maps.Copy(all, rejected)
	waitCtx, waitCancel := context.WithTimeout(ctx, time.Minute)
	defer waitCancel()
	waitForTraces(waitCtx, t, g, all)
	g.stopAndFlush(t)
	if stored := storedSpans(t, g.es.Documents()); len(stored) != len(all) {
		t.Errorf("%d traces stored, want every one of the %d sent", len(stored), len(all))
	}
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
	checkKeptOnly(ctx, t, g, kept, rejected, droppedInTracesampling)
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

// TestDatakitSamplingRateAgrees: two tracegate processes with Datakit's sampling_rate 0.3 given
// the same OpenTelemetry traces store exactly the same traces: every failing one, and among the
// others those whose id's low 64 bits modulo 10000 are at most 3000 (Datakit's rule).
func TestDatakitSamplingRateAgrees(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	opts := gatewayOptions{config: "default.yaml", extraConfig: "processors:\n  tracesampling:\n    datakit:\n      sampling_rate: 0.3\n"}
	a, b := startGatewayWith(t, opts), startGatewayWith(t, opts)
	spans, failing := otelTraces(ctx, t, 400, 20)
	want := map[string]bool{}
	for _, s := range spans {
		id := s.SpanContext().TraceID()
		if failing[id.String()] || enc.BigEndian.Uint64(id[8:])%10000 <= 3000 {
			want[id.String()] = true
		}
	}
	var stored [2]map[string]int
	for i, g := range []*gateway{a, b} {
		exportOTLP(ctx, t, g.endpoints.OTLPHTTP, spans)
		waitForTraces(ctx, t, g, want)
		g.stopAndFlush(t)
		stored[i] = storedSpans(t, g.es.Documents())
	}
	if len(stored[0]) != len(want) || !maps.Equal(stored[0], stored[1]) {
		t.Fatalf("stored %d and %d traces, want the same %d in both", len(stored[0]), len(stored[1]), len(want))
	}
	for id := range failing {
		if stored[0][id] != 2 {
			t.Errorf("failing trace %s: %d spans stored, want 2", id, stored[0][id])
		}
	}
}

// otelTraces makes n traces of a server root and a child with the OpenTelemetry Go SDK; every
// failEvery-th child fails. It returns the ended spans and the ids of the failing traces.
func otelTraces(ctx context.Context, t *testing.T, n, failEvery int) ([]sdktrace.ReadOnlySpan, map[string]bool) {
	t.Helper()
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec),
		sdktrace.WithResource(resource.NewSchemaless(attribute.String("service.name", "e2e-datakit-rate"))))
	defer func() { _ = tp.Shutdown(ctx) }()
	tracer := tp.Tracer("github.com/tracegate/tracegate/test/e2e")
	failing := map[string]bool{}
	for i := range n {
		rootCtx, root := tracer.Start(ctx, "GET /items", trace.WithSpanKind(trace.SpanKindServer))
		_, child := tracer.Start(rootCtx, "load item")
		if i%failEvery == 0 {
			child.SetStatus(codes.Error, "item not found")
			failing[root.SpanContext().TraceID().String()] = true
		}
		child.End()
		root.End()
	}
	return rec.Ended(), failing
}

// exportOTLP sends spans over OTLP/HTTP in requests of 100.
func exportOTLP(ctx context.Context, t *testing.T, endpoint string, spans []sdktrace.ReadOnlySpan) {
	t.Helper()
	exp, err := otlptracehttp.New(ctx, otlptracehttp.WithEndpoint(endpoint), otlptracehttp.WithInsecure())
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = exp.Shutdown(context.WithoutCancel(ctx)) }()
	for i := 0; i < len(spans); i += 100 {
		if err := exp.ExportSpans(ctx, spans[i:min(i+100, len(spans))]); err != nil {
			t.Fatalf("export: %v", err)
		}
	}
}

// waitForTraces waits until every trace in want has its two spans stored.
func waitForTraces(ctx context.Context, t *testing.T, g *gateway, want map[string]bool) {
	t.Helper()
	for {
		stored := storedSpans(t, g.es.Documents())
		n := 0
		for id := range want {
			if stored[id] == 2 {
				n++
			}
		}
		if n == len(want) {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("%d of %d traces stored whole", n, len(want))
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// TestElasticAPMUnsampledTransactions: elastic-apm-node at transactionSampleRate 0.2, told the
// server is 7.17 so that it sends its unsampled transactions too (an 8.0+ server gets only the
// sampled ones). Through the Kibana APM overlay: the sampled transactions are stored, the
// unsampled ones are not, and the transaction metrics count what APM Server counts: each sampled
// transaction for 5 (1/sample_rate), each unsampled one for none.
func TestElasticAPMUnsampledTransactions(t *testing.T) {
	t.Parallel() // mostly waiting for a minute's edge
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	g := startGatewayWith(t, gatewayOptions{config: "default.yaml", overlays: []string{"elasticsearch/apm.yaml"}})
	const service = "e2e-apm-unsampled"
	reqs := runAPMNodeAgent(ctx, t, g.endpoints.ElasticAPM, service, 100,
		"APM_TRANSACTION_SAMPLE_RATE=0.2", "APM_SERVER_VERSION=7.17.0")
	sampled, unsampled := map[string]bool{}, map[string]bool{}
	for _, r := range reqs {
		ids := []string{r.TransactionID}
		if r.BackendTransactionID != "" {
			ids = append(ids, r.BackendTransactionID) // the same decision: it follows its caller
		}
		for _, id := range ids {
			if r.Sampled != nil && *r.Sampled {
				sampled[id] = true
			} else {
				unsampled[id] = true
			}
		}
	}
	if len(sampled) == 0 || len(unsampled) < len(sampled) {
		t.Fatalf("%d sampled and %d unsampled transactions: not a 20 %% sample", len(sampled), len(unsampled))
	}
	want := float64(5 * len(sampled))
	docs, ok := waitForDocs(ctx, t, g.es, func(docs []apmDoc) bool {
		return transactionCount(apmServiceMetrics(docs, service)) >= want
	})
	if got := transactionCount(apmServiceMetrics(docs, service)); !ok || got != want {
		counts := map[string]int{}
		for _, d := range docs {
			if d.attr("processor.event") == "transaction" {
				counts[d.attr("span.representative_count")+"/"+d.attr("transaction.sampled")]++
			}
		}
		t.Fatalf("aggregated transactions: %v, want 5 × %d sampled; stored transactions by representative count/sampled: %v", got, len(sampled), counts)
	}
	dropped := metricSum(t, g, "otelcol_processor_tracesampling_traces_total", `reason="unsampled_transaction"`)
	if int(dropped) != len(unsampled) {
		t.Errorf("counted %v unsampled transactions dropped, want %d", dropped, len(unsampled))
	}
	g.stopAndFlush(t)
	stored := map[string]bool{}
	for _, d := range apmDocs(t, g.es) {
		if strings.HasPrefix(d.index, "traces-") && d.attr("processor.event") == "transaction" {
			stored[d.SpanID] = true
		}
	}
	for id := range unsampled {
		if stored[id] {
			t.Errorf("unsampled transaction %s stored", id)
		}
	}
	for id := range sampled {
		if !stored[id] {
			t.Errorf("sampled transaction %s not stored", id)
		}
	}
}

// rejectedChunksConfig is the part of a config file TestRejectedChunksFollowOneSwitch reads.
type rejectedChunksConfig struct {
	Receivers struct {
		DDTrace struct {
			Drop any `yaml:"drop_rejected_chunks"`
		} `yaml:"ddtrace"`
		Datakit struct {
			DDTrace struct {
				Drop any `yaml:"drop_rejected_chunks"`
			} `yaml:"ddtrace"`
		} `yaml:"datakit"`
	} `yaml:"receivers"`
	Processors struct {
		TraceSampling struct {
			Datadog struct {
				HonourPriority any `yaml:"honour_priority"`
			} `yaml:"datadog"`
		} `yaml:"tracesampling"`
	} `yaml:"processors"`
}

// TestRejectedChunksFollowOneSwitch: in the base configs the receivers' early drop of the chunks
// tracers rejected and tracesampling's honour_priority are one variable, so that one change stores
// everything; the overlays that need every span in front of tracesampling (the APM aggregation,
// and the Kafka agent tier, whose gateways may run it) turn the early drop off on both receivers
// that serve Datadog tracers.
func TestRejectedChunksFollowOneSwitch(t *testing.T) {
	load := func(rel string) rejectedChunksConfig {
		b, err := os.ReadFile(filepath.Join(repoRoot, "configs", rel))
		if err != nil {
			t.Fatal(err)
		}
		var c rejectedChunksConfig
		if err := yaml.Unmarshal(b, &c); err != nil {
			t.Fatalf("%s: %v", rel, err)
		}
		return c
	}
	const oneSwitch = "${env:TRACEGATE_HONOUR_PRIORITY:-true}"
	for _, base := range []string{"default.yaml", "durable.yaml"} {
		c := load(base)
		got := []any{c.Receivers.DDTrace.Drop, c.Receivers.Datakit.DDTrace.Drop, c.Processors.TraceSampling.Datadog.HonourPriority}
		if !slices.Equal(got, []any{oneSwitch, oneSwitch, oneSwitch}) {
			t.Errorf("%s: ddtrace and datakit.ddtrace drop_rejected_chunks, tracesampling honour_priority = %v, want %s for each", base, got, oneSwitch)
		}
	}
	for _, overlay := range []string{"elasticsearch/apm.yaml", "elasticsearch/apm-durable.yaml", "kafka/agent.yaml"} {
		c := load(overlay)
		if got := []any{c.Receivers.DDTrace.Drop, c.Receivers.Datakit.DDTrace.Drop}; !slices.Equal(got, []any{false, false}) {
			t.Errorf("%s: ddtrace and datakit.ddtrace drop_rejected_chunks = %v, want false for both", overlay, got)
		}
	}
}
