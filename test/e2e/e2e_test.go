package e2e

import (
	"context"
	"testing"
	"time"

	"github.com/tracegate/tracegate/internal/testbed/tracesend"
)

// TestDefaultConfigEveryProtocol sends traces over every stock protocol with real clients through
// configs/default.yaml and checks that each span reached Elasticsearch exactly once, intact.
func TestDefaultConfigEveryProtocol(t *testing.T) {
	g := startGateway(t, "default.yaml")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	const perProtocol = 30
	var sent []tracesend.Span
	for _, p := range tracesend.Protocols() {
		spans, err := p.Send(ctx, g.endpoints, "e2e-"+p.Name, perProtocol)
		if err != nil {
			t.Fatalf("%s: %v", p.Name, err)
		}
		if len(spans) != perProtocol {
			t.Fatalf("%s: sent %d spans, want %d", p.Name, len(spans), perProtocol)
		}
		sent = append(sent, spans...)
	}
	waitCtx, waitCancel := context.WithTimeout(ctx, 30*time.Second)
	defer waitCancel()
	if err := g.es.WaitForSpans(waitCtx, len(sent)); err != nil {
		t.Errorf("%v; stand-in stats: %+v", err, g.es.Stats())
	}
	// Every sender is done; once tracegate has flushed and exited, no late duplicate can come.
	g.stopAndFlush(t)
	checkArrivedOnce(t, g.es.Documents(), sent)
	st := g.es.Stats()
	if st.ByIndex["traces-generic.otel-default"] != len(sent) || st.DuplicateSpans != 0 || st.RejectedItems != 0 {
		t.Errorf("stand-in: %d span documents, %d duplicates, %d rejected; want %d, 0, 0 (%+v)",
			st.ByIndex["traces-generic.otel-default"], st.DuplicateSpans, st.RejectedItems, len(sent), st)
	}
	for _, p := range tracesend.Protocols() {
		if got := st.SpansByService["e2e-"+p.Name]; got != perProtocol {
			t.Errorf("%s: %d documents, want %d", p.Name, got, perProtocol)
		}
	}
}
