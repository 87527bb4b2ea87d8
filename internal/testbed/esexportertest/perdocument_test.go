package esexportertest

import (
	"context"
	"encoding/binary"
	"fmt"
	"strconv"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/tracegate/tracegate/internal/testbed/esstandin"
)

// TestPerDocumentDropsAreLogged backs docs/reliability.md's one known loss: with 30 % of items
// answered 429, the v0.148.0 exporter (our settings: 5 retries) drops the documents still refused
// after its per-document retries and returns no error — but it logs every one of them, so the
// loss is never silent. Every span id missing from the stand-in must match one such log line.
func TestPerDocumentDropsAreLogged(t *testing.T) {
	es := StartStandin(t, esstandin.Options{})
	require.NoError(t, es.SetFaults(esstandin.Faults{ItemTooManyRequestsFraction: 0.3}))
	core, logs := observer.New(zap.ErrorLevel)
	exp := NewExporterWithLogger(t, es.URL(), map[string]any{
		"compression": "gzip", "compression_params": map[string]any{"level": 1},
		"retry":         map[string]any{"enabled": true, "max_retries": 5, "initial_interval": "1ms", "max_interval": "5ms", "retry_on_status": []int{429, 502, 503, 504}},
		"sending_queue": map[string]any{"enabled": false},
	}, zap.New(core))

	const batches, per = 40, 500 // 20,000 spans: about 0.3^6 x 20,000 = 15 dropped
	var wg sync.WaitGroup
	var mu sync.Mutex
	errs := 0
	for w := range 4 {
		wg.Go(func() {
			for b := w; b < batches; b += 4 {
				td := ptrace.NewTraces()
				ss := td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty()
				for i := range per {
					id := b*per + i + 1
					s := ss.Spans().AppendEmpty()
					s.SetName(strconv.Itoa(id))
					var sid [8]byte
					binary.BigEndian.PutUint64(sid[:], uint64(id))
					s.SetSpanID(sid)
					s.SetTraceID([16]byte{1, sid[0], sid[1], sid[2], sid[3], sid[4], sid[5], sid[6], sid[7]})
				}
				if err := exp.ConsumeTraces(context.Background(), td); err != nil {
					mu.Lock()
					errs++
					mu.Unlock()
				}
			}
		})
	}
	wg.Wait()
	seen := map[string]int{}
	for _, d := range es.Documents() {
		seen[d.SpanID]++
	}
	missing := 0
	for id := 1; id <= batches*per; id++ {
		if seen[fmt.Sprintf("%016x", id)] == 0 {
			missing++
		}
	}
	failedLogs := logs.FilterMessage("failed to index document").Len()
	dups := 0
	for _, n := range seen {
		dups += n - 1
	}
	t.Logf("sent %d spans: ConsumeTraces errors %d, missing %d, \"failed to index document\" logs %d, duplicates %d, other error logs %d",
		batches*per, errs, missing, failedLogs, dups, logs.Len()-failedLogs)
	if errs != 0 {
		t.Errorf("%d ConsumeTraces calls failed; per-document refusals should not fail the call", errs)
	}
	if missing == 0 {
		t.Error("nothing was dropped: the fault did not reach the exporter's per-document path")
	}
	if missing != failedLogs {
		t.Errorf("%d spans missing but %d drops logged: some documents disappeared silently", missing, failedLogs)
	}
}
