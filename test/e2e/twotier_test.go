package e2e

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/tracegate/tracegate/internal/testbed/tracemodel"
)

// TestAgentForwardsLargePayloadsInParts: the chart's two-tier setup, through two tracegate
// processes. A Datadog tracer may send an agent up to 25 MiB in one request, but the gateway's
// OTLP/HTTP receiver takes at most 8 MiB (configs/default.yaml) and answers a larger request with a
// 413, which the agent's otlp_http exporter treats as permanent. The agent's buffer must forward
// such a request in parts, so every span it acknowledged reaches Elasticsearch.
func TestAgentForwardsLargePayloadsInParts(t *testing.T) {
	gw := startGateway(t, "default.yaml")
	agent := startGatewayWith(t, gatewayOptions{
		config:   "default.yaml",
		overlays: []string{"../test/e2e/testdata/agent.yaml"},
		env:      []string{"GATEWAY_OTLP_HTTP=http://" + gw.endpoints.OTLPHTTP},
	})

	// 2,400 spans of ~5 KB: a 12 MB body, about 13 MB as OTLP.
	const n = 2400
	spans := make([]tracemodel.DDSpan, n)
	now := time.Now().UnixNano()
	for i := range spans {
		spans[i] = tracemodel.DDSpan{
			Service: "two-tier", Name: "op", Resource: "op", TraceID: 77, SpanID: uint64(i + 1),
			Start: now, Duration: 1000, Meta: map[string]string{"db.statement": strings.Repeat("s", 5000)},
		}
	}
	body := tracemodel.EncodeDDTraceV04([][]tracemodel.DDSpan{spans})
	if len(body) < 10<<20 {
		t.Fatalf("payload of %d bytes: want more than the gateway's 8 MiB", len(body))
	}
	req, err := http.NewRequest(http.MethodPut, "http://"+agent.endpoints.DDTrace+"/v0.4/traces", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/msgpack")
	req.Header.Set("Datadog-Send-Real-Http-Status", "true")
	resp, err := (&http.Client{Timeout: time.Minute}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	msg, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("agent answered %d: %s", resp.StatusCode, msg)
	}

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := gw.es.WaitForSpans(ctx, n); err != nil {
		t.Fatalf("%v; gateway's stand-in: %+v; agent log:\n%s", err, gw.es.Stats().SpansByService, agent.proc.Log())
	}
	agent.stopAndFlush(t)
	gw.stopAndFlush(t)
	if got := gw.es.Stats().SpansByService["two-tier"]; got != n {
		t.Errorf("%d spans in Elasticsearch, want %d", got, n)
	}
	ids := map[string]bool{}
	for _, d := range gw.es.Documents() {
		if d.SpanID != "" {
			ids[d.SpanID] = true
		}
	}
	if st := gw.es.Stats(); len(ids) != n || st.DuplicateSpans != 0 {
		t.Errorf("%d distinct span ids and %d duplicates in Elasticsearch, want %d and 0", len(ids), st.DuplicateSpans, n)
	}
	if log := agent.proc.Log(); strings.Contains(log, "Dropping spans") {
		t.Errorf("the agent dropped spans:\n%s", log)
	}
	if st := agent.es.Stats(); st.BulkRequests != 0 {
		t.Errorf("the agent wrote %d bulks to its own Elasticsearch: the overlay did not apply", st.BulkRequests)
	}
}
