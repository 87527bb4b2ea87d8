package e2e

import (
	"context"
	"strings"
	"testing"
	"time"
)

// TestOutageLog: what an operator reads in the log during a 20 s Elasticsearch outage under
// load (configs/default.yaml), and in its first 15 s: one line when deliveries start failing, saying the data is kept,
// one when they succeed again, no stack traces, the exporter's own error lines capped by the
// log sampling; and the buffer's gauges add up to what was acknowledged but not yet stored.
func TestOutageLog(t *testing.T) {
	g := startGateway(t, "default.yaml")
	load := newOTLPLoad(g.endpoints.OTLPHTTP)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	go func() {
		time.Sleep(time.Second) // the process delivers for a second before the outage
		if err := g.es.SetRefusing(true); err != nil {
			t.Error(err)
		}
	}()
	outageStart := time.Now().Add(time.Second)
	load.run(ctx, 2, 100, 100*time.Millisecond)
	time.Sleep(2 * time.Second) // the process's last deliveries fail too: its retries take real time

	// While Elasticsearch is down nothing arrives: what the buffer holds is what was acknowledged
	// and is not in Elasticsearch.
	held := metricSum(t, g, "otelcol_processor_buffer_memory_spans") + metricSum(t, g, "otelcol_processor_buffer_disk_spans") +
		metricSum(t, g, "otelcol_processor_buffer_in_flight_spans")
	load.mu.Lock()
	acked, unanswered := len(load.acked), load.transport*100 // a request whose reply the client missed may be held too
	load.mu.Unlock()
	stored := g.es.Stats().Documents
	if int(held) < acked-stored || int(held) > acked+unanswered-stored {
		t.Errorf("memory + disk + in flight = %.0f spans, want %d acknowledged − %d stored = %d (+ up to %d of requests whose reply was lost)",
			held, acked, stored, acked-stored, unanswered)
	}
	if age := metricSum(t, g, "otelcol_processor_buffer_oldest_age_seconds"); age < 1 {
		t.Errorf("oldest held span %.1f s old, want at least the outage's length so far", age)
	}
	if wait := time.Until(outageStart.Add(15 * time.Second)); wait > 0 {
		time.Sleep(wait) // what the process logs in the outage's first 15 s of real time is the subject
	}
	outageLog := g.proc.Log() // the first 15 s
	if wait := time.Until(outageStart.Add(20 * time.Second)); wait > 0 {
		time.Sleep(wait) // the process must log no repeated line in 20 s of real time
	}
	if n := strings.Count(g.proc.Log(), "Deliveries to Elasticsearch still fail"); n != 0 {
		t.Errorf("%d repeated failing lines within 20 s, want 0 (at most one a minute)", n)
	}
	if err := g.es.SetRefusing(false); err != nil {
		t.Fatal(err)
	}
	checkAllAckedArrived(t, g, load, time.Minute)

	count := strings.Count
	if n := count(outageLog, "Deliveries to Elasticsearch are failing: the buffer keeps everything it acknowledged"); n != 1 {
		t.Errorf("%d lines saying deliveries fail, want 1", n)
	}
	if n := count(outageLog, "Deliveries to Elasticsearch still fail"); n != 0 {
		t.Errorf("%d repeated failing lines within 15 s, want 0 (at most one a minute)", n)
	}
	if n := count(g.proc.Log(), "Deliveries to Elasticsearch succeed again"); n != 1 {
		t.Errorf("%d recovery lines, want 1", n)
	}
	if n := count(outageLog, "Exporting failed. Rejecting data."); n > 20 {
		t.Errorf("%d exporter failure lines in 15 s, want at most 20 (sampling: 10 per 10 s)", n)
	}
	for line := range strings.SplitSeq(outageLog, "\n") {
		if strings.HasPrefix(line, "\t") && strings.Contains(line, ".go:") {
			t.Errorf("a stack trace in the log: %q", line)
			break
		}
	}
	t.Logf("first 15 s of the outage: %d log lines, %d from the exporter (\"Exporting failed\"), held %.0f spans",
		count(outageLog, "\n"), count(outageLog, "Exporting failed"), held)
}
