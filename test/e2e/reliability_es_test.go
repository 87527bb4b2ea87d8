package e2e

// Elasticsearch faults through the built binary: 30% of items answered 429, a fraction of
// bulks answered 503, every bulk answered 503 for a while, 2 s per bulk, connections reset,
// Elasticsearch down at start. Quick versions run in `make test`; TRACEGATE_SOAK=1 (`make soak`)
// runs them for 60 s with both configs. Every run logs one line "RELIABILITY | ..." that
// docs/reliability.md records.

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/tracegate/tracegate/internal/testbed/esstandin"
)

// soak reports whether the long versions run (make soak).
func soak() bool { return os.Getenv("TRACEGATE_SOAK") != "" }

// faultDuration is how long each fault scenario sends load: 10 s quick, 60 s soak.
func faultDuration() time.Duration {
	if soak() {
		return 60 * time.Second
	}
	return 10 * time.Second
}

// deliveryReport is one row of docs/reliability.md.
type deliveryReport struct {
	sent, acked, arrived, missing, dups int
	statuses                            string
	peakRSS                             int64
	failedDocs                          float64 // exporter: documents Elasticsearch refused one by one
	// refusedCopies are copies Elasticsearch refused with 409 because it held the document (a
	// resent bulk whose first reply was lost): duplicates avoided, not losses.
	refusedCopies float64
	// conflictLogLines are the exporter's log lines about those 409s (sampled by the collector).
	conflictLogLines int
}

func (r deliveryReport) String() string {
	return fmt.Sprintf("clients: %s | sent %d | acknowledged %d | arrived %d | missing %d | duplicates %d | copies refused (409) %.0f, %d log lines | span documents refused %.0f | peak RSS %d MiB",
		r.statuses, r.sent, r.acked, r.arrived, r.missing, r.dups, r.refusedCopies, r.conflictLogLines, r.failedDocs, r.peakRSS>>20)
}

// measureDelivery waits until every acknowledged span arrived, or until nothing new arrived for 45 s (longer than the
// buffer's longest retry backoff, 30 s + 20 % jitter; then the rest is lost), and counts.
func measureDelivery(t *testing.T, g *gateway, l *otlpLoad, spansPerRequest int, mem *memSampler, timeout time.Duration) deliveryReport {
	t.Helper()
	l.mu.Lock()
	acked := len(l.acked)
	r := deliveryReport{acked: acked, statuses: statusCounts(l.statuses, l.transport)}
	for _, n := range l.statuses {
		r.sent += n * spansPerRequest
	}
	r.sent += l.transport * spansPerRequest
	l.mu.Unlock()
	seen := waitForAcked(t, g, l, timeout, 45*time.Second)
	l.mu.Lock()
	for id := range l.acked {
		if seen[id] == 0 {
			r.missing++
		} else {
			r.arrived++
		}
	}
	l.mu.Unlock()
	for _, n := range seen {
		r.dups += n - 1
	}
	r.peakRSS = max(mem.Peak(), readProcMem(t, g.proc.Pid()).HWM)
	r.failedDocs = float64(exporterDroppedDocs(t, g))
	r.refusedCopies = metricSum(t, g, spanDocuments, `outcome="duplicate"`)
	for line := range strings.SplitSeq(g.earlierLogs+g.proc.Log(), "\n") {
		if strings.Contains(line, "version_conflict_engine_exception") {
			r.conflictLogLines++
		}
	}
	return r
}

// spanDocuments counts the span exporter's documents by what Elasticsearch answered.
const spanDocuments = "otelcol_exporter_elasticsearch_documents_documents_total"

// exporterDroppedDocs is what the span exporter gave up on document by document: refused with a
// 4xx other than 409 (a 429 or 5xx goes back to the buffer, a 409 is a copy already stored).
func exporterDroppedDocs(t *testing.T, g *gateway) int {
	return int(metricSum(t, g, spanDocuments, `outcome="refused"`))
}

// faultScenario is one Elasticsearch fault under load.
type faultScenario struct {
	name string
	// esDownAtStart: the stand-in refuses connections before tracegate starts.
	esDownAtStart bool
	// fault is applied during the load (after start) and lifted at its end; during runs in the
	// background for scenarios that change the fault over time.
	fault  esstandin.Faults
	during func(ctx context.Context, g *gateway)
	// loadFor replaces faultDuration() as the length of the load.
	loadFor time.Duration
	// soakOnly scenarios run in `make soak` only.
	soakOnly bool
}

func faultScenarios() []faultScenario {
	return []faultScenario{
		// A document answered 429 goes back to the buffer with its span: nothing may be lost.
		{name: "item-429-30pct", fault: esstandin.Faults{ItemTooManyRequestsFraction: 0.3}},
		{name: "request-503-30pct", fault: esstandin.Faults{RequestUnavailableFraction: 0.3}},
		{name: "request-503-all-then-recover", during: func(ctx context.Context, g *gateway) {
			duringMiddleHalf(ctx, faultDuration(),
				func() { _ = g.es.SetFaults(esstandin.Faults{RequestUnavailableFraction: 1}) },
				func() { _ = g.es.SetFaults(esstandin.Faults{}) })
		}},
		// Soak: 120 s of load with Elasticsearch refusing connections for the middle 60 s.
		// In `make test`, TestBufferRidesOutElasticsearchOutage covers a 30 s outage under load.
		{name: "es-down-mid-load", soakOnly: true, loadFor: 2 * faultDuration(), during: func(ctx context.Context, g *gateway) {
			duringMiddleHalf(ctx, 2*faultDuration(),
				func() { _ = g.es.SetRefusing(true) },
				func() { _ = g.es.SetRefusing(false) })
		}},
		{name: "latency-2s-per-bulk", fault: esstandin.Faults{Latency: esstandin.Duration(2 * time.Second)}},
		{name: "connections-reset", fault: esstandin.Faults{ResetConnections: true}},
		// Elasticsearch indexed the bulk but the reply never came: the buffer must send it again
		// (duplicates, counted), and the wait must not mistake duplicates for arrivals.
		{name: "replies-lost-20pct", fault: esstandin.Faults{ReplyLostFraction: 0.2}},
		{name: "es-down-at-start", esDownAtStart: true},
	}
}

// duringMiddleHalf calls start a quarter into a load of duration d and stop at three quarters (or
// when ctx ends).
func duringMiddleHalf(ctx context.Context, d time.Duration, start, stop func()) {
	select {
	case <-ctx.Done():
		return
	case <-time.After(d / 4):
	}
	start()
	defer stop()
	select {
	case <-ctx.Done():
	case <-time.After(d / 2):
	}
}

func runFaultScenario(t *testing.T, config string, sc faultScenario) {
	o := gatewayOptions{config: config}
	if sc.esDownAtStart {
		o.beforeRun = func(t *testing.T, es *esstandin.Server) {
			if err := es.SetRefusing(true); err != nil {
				t.Fatal(err)
			}
		}
	}
	g := startGatewayWith(t, o)
	started := time.Now()
	mem := sampleMem(t, g)
	if err := g.es.SetFaults(sc.fault); err != nil {
		t.Fatal(err)
	}
	const clients, spans, interval = 4, 100, 100 * time.Millisecond // ~4,000 spans/s offered
	load := newOTLPLoad(g.endpoints.OTLPHTTP)
	loadFor := faultDuration()
	if sc.loadFor > 0 {
		loadFor = sc.loadFor
	}
	ctx, cancel := context.WithTimeout(context.Background(), loadFor)
	if sc.during != nil {
		go sc.during(ctx, g)
	}
	load.run(ctx, clients, spans, interval)
	cancel()
	if err := g.es.SetFaults(esstandin.Faults{}); err != nil {
		t.Fatal(err)
	}
	if sc.esDownAtStart {
		if err := g.es.SetRefusing(false); err != nil {
			t.Fatal(err)
		}
	}
	r := measureDelivery(t, g, load, spans, mem, 3*time.Minute)
	t.Logf("RELIABILITY | es %s | %s | %d s, %d clients × %d spans every %s | %s", sc.name, config,
		int(loadFor.Seconds()), clients, spans, interval, r)
	for status := range load.statuses {
		if status/100 != 2 && status != 429 && status != 503 {
			t.Errorf("clients saw status %d: only 2xx, 429 and 503 are acceptable", status)
		}
	}
	if r.acked == 0 {
		t.Fatalf("nothing was acknowledged")
	}
	if r.dups > 0 {
		t.Errorf("%d duplicate span documents: every span has an _id, so Elasticsearch must refuse a copy", r.dups)
	}
	// The configs' log sampling: each message at most 10 times per 10 s, however many copies.
	if limit := 10 * (int(time.Since(started)/(10*time.Second)) + 1); r.conflictLogLines > limit {
		t.Errorf("%d log lines about refused copies in %s, want at most %d (log sampling)", r.conflictLogLines, time.Since(started), limit)
	}
	if r.missing > 0 {
		t.Errorf("%d of %d acknowledged spans never reached Elasticsearch (the span exporter refused %.0f documents); the buffer still holds %.0f spans in memory, %.0f on disk; delivered %.0f, dropped %.0f",
			r.missing, r.acked, r.failedDocs, metricSum(t, g, "otelcol_processor_buffer_memory_spans"), metricSum(t, g, "otelcol_processor_buffer_disk_spans"),
			metricSum(t, g, "otelcol_processor_buffer_delivered_spans_total"), metricSum(t, g, "otelcol_processor_buffer_dropped_spans_total"))
	}
	checkStillServing(t, g, "after-fault")
}

// TestElasticsearchFaults runs every fault with configs/durable.yaml (quick) and, in soak mode,
// with configs/default.yaml too; the 429 and all-503 scenarios run with default.yaml in quick mode.
func TestElasticsearchFaults(t *testing.T) {
	for _, sc := range faultScenarios() {
		if sc.soakOnly && !soak() {
			continue
		}
		configs := []string{"durable.yaml"}
		if soak() || sc.name == "item-429-30pct" || sc.name == "request-503-all-then-recover" {
			configs = append(configs, "default.yaml")
		}
		for _, config := range configs {
			t.Run(sc.name+"/"+strings.TrimSuffix(config, ".yaml"), func(t *testing.T) {
				t.Parallel()
				runFaultScenario(t, config, sc)
			})
		}
	}
}
