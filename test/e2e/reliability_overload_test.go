package e2e

// Overload and process signals through the built binary.

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tracegate/tracegate/internal/testbed/esstandin"
)

// overloadRSSBound: the buffer's memory queue is bounded to 100 batches and 256 MiB serialized
// (fixed), in-flight requests to 8 MiB each, and the disk holds the rest; 1 GiB is that with room
// for pdata's in-memory expansion and GC lag (measured peak: docs/reliability.md).
const overloadRSSBound = 1 << 30

// TestOverload offers far more than tracegate can deliver: Elasticsearch takes 3 s per bulk (at
// most 8 bulks in flight, ~5,500 spans/s), clients offer as fast as they can, and the disk part of
// the buffer is cut to 16 MiB so it fills within seconds. RSS must stay under overloadRSSBound and
// the process must serve normally afterwards.
//
// Both configs put the buffer first (default.yaml had a batch processor in front of it, which
// acknowledged clients before the buffer saw the data and dropped what a full buffer refused:
// 1.3 million acknowledged spans in 10 s): clients get 429/503 and every acknowledged span arrives.
func TestOverload(t *testing.T) {
	for _, config := range []string{"durable.yaml", "default.yaml"} {
		t.Run(strings.TrimSuffix(config, ".yaml"), func(t *testing.T) {
			runOverload(t, config) // not in parallel: each needs both cores to overload itself
		})
	}
}

func runOverload(t *testing.T, config string) {
	d := 10 * time.Second
	if soak() {
		d = 60 * time.Second
	}
	g := startGatewayWith(t, gatewayOptions{config: config, overlays: []string{overlayFile(t, map[string]any{
		"processors": map[string]any{"buffer": map[string]any{"storage": map[string]any{"capacity_mib": 16}}},
	})}})
	mem := sampleMem(t, g)
	if err := g.es.SetFaults(esstandin.Faults{Latency: esstandin.Duration(3 * time.Second)}); err != nil {
		t.Fatal(err)
	}
	const clients, spans = 16, 200
	load := newOTLPLoad(g.endpoints.OTLPHTTP)
	ctx, cancel := context.WithTimeout(context.Background(), d)
	load.run(ctx, clients, spans, time.Millisecond)
	cancel()
	if g.proc.Exited() {
		t.Fatalf("tracegate exited under overload; log:\n%s", g.proc.Log())
	}
	peakUnderLoad := mem.Peak()
	if err := g.es.SetFaults(esstandin.Faults{}); err != nil {
		t.Fatal(err)
	}
	refused := metricSum(t, g, "otelcol_processor_buffer_refused_spans_total")
	r := measureDelivery(t, g, load, spans, mem, 5*time.Minute)
	t.Logf("RELIABILITY | overload | %s + capacity_mib 16, Elasticsearch 3 s per bulk | %d s, %d clients × %d spans back to back | %s | buffer refused %.0f spans",
		config, int(d.Seconds()), clients, spans, r, refused)
	for status := range load.statuses {
		if status/100 != 2 && status != 429 && status != 503 {
			t.Errorf("clients saw status %d: only 2xx, 429 and 503 are acceptable", status)
		}
	}
	if refused == 0 {
		t.Errorf("the buffer refused nothing: the overload did not reach its limits")
	}
	if load.statuses[429]+load.statuses[503] == 0 {
		t.Errorf("no client was refused (%s)", r.statuses)
	}
	if r.missing > 0 {
		t.Errorf("%d of %d acknowledged spans never reached Elasticsearch", r.missing, r.acked)
	}
	if peakUnderLoad > overloadRSSBound || r.peakRSS > overloadRSSBound {
		t.Errorf("peak RSS %d MiB, above the %d MiB bound", max(peakUnderLoad, r.peakRSS)>>20, overloadRSSBound>>20)
	}
	checkStillServing(t, g, "after-overload")
}

// TestSIGTERMPersistsQueue: spans acknowledged while Elasticsearch is down are in the buffer; a
// SIGTERM stops tracegate cleanly within the deadline, the queue is on disk, and after a restart
// with Elasticsearch back every acknowledged span arrives. Both configs: write_ahead has it on disk
// already, overflow writes its memory part at shutdown.
func TestSIGTERMPersistsQueue(t *testing.T) {
	for _, config := range []string{"durable.yaml", "default.yaml"} {
		t.Run(strings.TrimSuffix(config, ".yaml"), func(t *testing.T) {
			t.Parallel()
			g := startGateway(t, config)
			if err := g.es.SetRefusing(true); err != nil {
				t.Fatal(err)
			}
			load := newOTLPLoad(g.endpoints.OTLPHTTP)
			for i := range 50 {
				if status := load.send(context.Background(), 100); status != 200 {
					t.Fatalf("request %d: status %d", i, status)
				}
			}
			const deadline = 30 * time.Second
			start := time.Now()
			if err := g.proc.Stop(deadline); err != nil {
				t.Fatalf("SIGTERM: %v", err)
			}
			took := time.Since(start)
			var segBytes int64
			_ = filepath.Walk(g.bufferDir, func(p string, fi os.FileInfo, err error) error {
				if err == nil && strings.HasSuffix(p, ".seg") {
					segBytes += fi.Size()
				}
				return nil
			})
			t.Logf("clean shutdown in %s (deadline %s); %d bytes of segments on disk", took.Round(time.Millisecond), deadline, segBytes)
			if segBytes == 0 {
				t.Errorf("nothing on disk after SIGTERM with 5,000 spans undelivered")
			}
			if !strings.Contains(g.proc.Log(), "The buffer stopped: what it could not deliver is kept on disk") {
				t.Errorf("no line at shutdown saying the buffer kept its spans on disk:\n%s", g.proc.Log())
			}
			g.start(t)
			if err := g.es.SetRefusing(false); err != nil {
				t.Fatal(err)
			}
			dups := checkAllAckedArrived(t, g, load, 2*time.Minute)
			if !strings.Contains(g.proc.Log(), "Replaying what the disk buffer kept from the last run") {
				t.Errorf("no replay line after the restart:\n%s", g.proc.Log())
			}
			t.Logf("RELIABILITY | SIGTERM with Elasticsearch down, restart | %s | 50 requests × 100 spans | shutdown %s, %d duplicates",
				config, took.Round(time.Millisecond), dups)
		})
	}
}
