package main

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/tracegate/tracegate/internal/testbed/loadgen"
)

// tracesWith returns traces whose resources hold scopes of the given span counts.
func tracesWith(resources ...[]int) ptrace.Traces {
	td := ptrace.NewTraces()
	for _, scopes := range resources {
		rs := td.ResourceSpans().AppendEmpty()
		rs.Resource().Attributes().PutStr("service.name", "checkout")
		for _, n := range scopes {
			ss := rs.ScopeSpans().AppendEmpty()
			ss.Scope().SetName("tracegen")
			for range n {
				sp := ss.Spans().AppendEmpty()
				sp.SetName("GET /cart")
				sp.Attributes().PutStr("http.route", "/cart")
			}
		}
	}
	return td
}

func marshalTraces(t *testing.T, td ptrace.Traces) []byte {
	t.Helper()
	b, err := (&ptrace.ProtoMarshaler{}).MarshalTraces(td)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestOTLPSpans: the wire walk counts what pdata counts, through resources and scopes, and
// refuses bytes that are no protobuf.
func TestOTLPSpans(t *testing.T) {
	for _, td := range []ptrace.Traces{tracesWith(), tracesWith([]int{10}), tracesWith([]int{3, 0, 2}, []int{}, []int{1})} {
		got, err := otlpSpans(marshalTraces(t, td))
		if err != nil || got != td.SpanCount() {
			t.Errorf("otlpSpans = %d, %v; want %d", got, err, td.SpanCount())
		}
	}
	b := marshalTraces(t, tracesWith([]int{4}))
	if _, err := otlpSpans(b[:len(b)-3]); err == nil {
		t.Error("a truncated message was counted")
	}
	if _, err := otlpSpans([]byte("not protobuf at all")); err == nil {
		t.Error("text was counted")
	}
}

// TestSpanCounter: the counter reads the topic from its start, counts the spans of each OTLP
// record, not those of a record that is none, and counts again from zero after Reset.
func TestSpanCounter(t *testing.T) {
	k, err := startKafka()
	if err != nil {
		t.Fatal(err)
	}
	defer k.Close()
	producer, err := kgo.NewClient(kgo.SeedBrokers(k.ListenAddrs()...), kgo.DefaultProduceTopic(spansTopic))
	if err != nil {
		t.Fatal(err)
	}
	defer producer.Close()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	produce := func(values ...[]byte) {
		t.Helper()
		for _, v := range values {
			if err := producer.ProduceSync(ctx, &kgo.Record{Value: v}).FirstErr(); err != nil {
				t.Fatal(err)
			}
		}
	}
	// Written before the counter starts: read too.
	produce(marshalTraces(t, tracesWith([]int{2})), marshalTraces(t, tracesWith([]int{3}, []int{5})), []byte{0xff, 0xff})
	c, err := newSpanCounter(ctx, k.ListenAddrs(), spansTopic)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.WaitForSpans(ctx, 10); err != nil {
		t.Fatal(err)
	}
	c.Reset()
	produce(marshalTraces(t, tracesWith([]int{4})))
	if err := c.WaitForSpans(ctx, 4); err != nil {
		t.Fatal(err)
	}
	time.Sleep(200 * time.Millisecond) // nothing more may come
	c.mu.Lock()
	total, bad := c.total, c.undecodable
	c.mu.Unlock()
	if got := c.spans(); got != 4 || total != 14 || bad != 1 {
		t.Errorf("%d spans since the reset, %d in all, %d undecodable records; want 4, 14, 1", got, total, bad)
	}
}

// TestKafkaSweep: the Kafka sweep measures direct, agent and gateway alternated, each tier
// compared with direct, and the delivery through both tiers beside direct's at the same rate.
func TestKafkaSweep(t *testing.T) {
	vs, err := loadSweep(filepath.Join("..", "configs", "kafka.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var roles []string
	for _, v := range vs {
		if v.Collector != "tracegate" || v.Mode != "overflow" {
			t.Errorf("variant %q: %s/%s; want tracegate on configs/default.yaml", v.Name, v.Collector, v.Mode)
		}
		role := v.Kafka
		if role == "" {
			role = "direct"
		}
		roles = append(roles, role)
		switch {
		case v.Kafka == kafkaAgent || v.Kafka == kafkaGateway:
			if !strings.HasPrefix(v.Against, "direct") || v.RateOf != "" {
				t.Errorf("variant %q: against %q, rate_of %q; want a direct run at saturation", v.Name, v.Against, v.RateOf)
			}
		case v.DeliveryLatency:
			if v.RateOf != "direct" || v.RateFraction != 0.5 {
				t.Errorf("variant %q: %g of %q's rate; want half of direct's", v.Name, v.RateFraction, v.RateOf)
			}
		}
	}
	if got, want := strings.Join(roles, " "), "direct agent gateway gateway agent direct direct tiers"; got != want {
		t.Errorf("roles %q, want %q", got, want)
	}
}

// TestVariantRate: a variant's rate is its fraction of the mean acknowledged spans/s of the named
// variant's runs and their pairs' in the same run, same protocol, in requests; failed,
// rate-limited and missing runs count for nothing.
func TestVariantRate(t *testing.T) {
	rep := &report{Runs: []run{
		{Protocol: "otlp-http", Variant: "direct", AcceptedSpansPerSec: 36000},
		{Protocol: "otlp-http", Variant: "agent", AcceptedSpansPerSec: 90000},
		{Protocol: "otlp-http", Variant: "direct, again", AcceptedSpansPerSec: 44000},
		{Protocol: "otlp-http", Variant: "direct, third", AcceptedSpansPerSec: 1000, Error: "stop: timeout"},
		{Protocol: "ddtrace-v0.4", Variant: "direct", AcceptedSpansPerSec: 30000, Error: "stop: timeout"},
		{Protocol: "zipkin-json", Variant: "direct", AcceptedSpansPerSec: 9000, Rate: 500},
	}}
	half := variant{Name: "half", RateOf: "direct", RateFraction: 0.5}
	for _, tt := range []struct {
		protocol string
		v        variant
		want     float64
		wantErr  bool
	}{
		{"otlp-http", half, 2000, false}, // 0.5 x (36,000 + 44,000) / 2 spans/s / 10 spans per request
		{"otlp-http", variant{Name: "saturation"}, 0, false},
		{"ddtrace-v0.4", half, 0, true},
		{"zipkin-json", half, 0, true},
		{"otlp-grpc", half, 0, true},
	} {
		got, err := variantRate(rep, job{protocol: tt.protocol, variant: tt.v}, 10)
		if got != tt.want || (err != nil) != tt.wantErr {
			t.Errorf("%s %s: %v, %v; want %v (error %v)", tt.protocol, tt.v.Name, got, err, tt.want, tt.wantErr)
		}
	}
}

// TestArrivalsMatch: each span document is timed from its trace's acknowledgement, one that
// arrived before the answer reached the client as 0; documents of no acknowledged trace are
// counted apart.
func TestArrivalsMatch(t *testing.T) {
	var a arrivals
	id := loadgen.TraceID{Hi: 0x8000000000000001, Lo: 0x8000000000000002}
	acks := map[loadgen.TraceID]int64{id: 1_000_000_000}
	a.seen = []arrival{
		{id: id, at: 1_004_000_000, ok: true},
		{id: id, at: 1_010_000_000, ok: true},
		{id: id, at: 999_000_000, ok: true},
		{id: loadgen.TraceID{Hi: 1, Lo: 1}, at: 1_000_000_000, ok: true},
		{ok: false},
	}
	d := a.match(acks)
	if d.Latency.Count != 3 || d.Latency.Max != 10 || d.Latency.Min != 0 || d.Latency.P50 != 4 || d.Unmatched != 2 {
		t.Errorf("delivery %+v; want 3 spans timed (0, 4, 10 ms) and 2 untimed", d)
	}
	a = arrivals{}
	a.record("80000000000000018000000000000002")
	a.record("")
	if len(a.seen) != 2 || !a.seen[0].ok || a.seen[0].id != id || a.seen[1].ok {
		t.Errorf("recorded %+v", a.seen)
	}
}

// TestKafkaRowsInReport: a gateway's row has no client columns (an agent filled Kafka before it
// started), an agent's row is compared with direct like any variant, and the delivery table sets
// the client's latency beside the time to the stand-in.
func TestKafkaRowsInReport(t *testing.T) {
	v := func(name, kafka, against string, perCore float64) run {
		r := run{Collector: "tracegate", Mode: "overflow", Protocol: "otlp-http", Variant: name, Kafka: kafka, Against: against, SpansPerCoreSec: perCore, AcceptedSpansPerCoreSec: perCore, CPUPercent: 99, PeakRSSMB: 150}
		r.Gen.Requests, r.Gen.Status.OK, r.Gen.Latency.Mean, r.Gen.Latency.P99 = 1000, 1000, 12, 40
		return r
	}
	half := v("agent + gateway, half rate", kafkaTiers, "", 50000)
	half.Rate = 1500
	half.Gen.Latency.P50 = 1.5
	half.Delivery = &delivery{Latency: loadgen.LatencyStats{Count: 450000, P50: 210, P90: 400, P99: 812.5, Max: 1200}, Unmatched: 3}
	r := &report{Section: "## x", Table: tableDatakit, Runs: []run{
		v("direct", "", "", 40000), v("agent", kafkaAgent, "direct", 80000), v("gateway", kafkaGateway, "direct", 36000), half,
	}}
	md := r.markdown()
	for _, want := range []string{
		"| otlp-http | agent | 99 | 150 | 1.00 | 0.0 | 0.00 | 12.00 | 40.00 | 80000 | 2.00 |",
		"| otlp-http | gateway | 99 | 150 | – | – | – | – | – | 36000 | 0.90 |",
		"| otlp-http | agent + gateway, half rate | 1500 | 1.50 | 40.00 | 210.00 | 400.00 | 812.50 | 1200.00 | 450000 (+3 untimed) |",
		"Kafka runs: agent: its spans into Kafka;",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("report lacks %q:\n%s", want, md)
		}
	}
	_, table, _ := strings.Cut(md, deliveryHeader)
	for row := range strings.SplitSeq(table, "\n") {
		if !strings.HasPrefix(row, "|") {
			break
		}
		if n, want := strings.Count(row, "|"), strings.Count(deliveryHeader, "|"); n != want {
			t.Errorf("row has %d bars, header %d: %s", n, want, row)
		}
	}
	if (&report{Runs: r.Runs[:3]}).deliveryTable() != "" {
		t.Error("a delivery table without timed runs")
	}
}
