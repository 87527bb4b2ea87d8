package e2e

// What the aggregated counts become when the buffer refuses: the connector counts each batch and
// then hands it to the buffer, the count stands whatever the buffer answered, and the client's
// retry of a refused batch is counted again (and reported in
// otelcol_connector_apmmetrics_refused_items_total). The test
// measures it through the binary: Elasticsearch down, a buffer small enough to fill, requests
// sent until some are refused, then each refused one sent again once Elasticsearch is back.

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
)

const refusedSpansPerRequest = 50

// refusedTestRequest is one OTLP/HTTP request of refusedSpansPerRequest spans of service, numbered from first.
func refusedTestRequest(t *testing.T, service string, first int) []byte {
	t.Helper()
	td := ptrace.NewTraces()
	rs := td.ResourceSpans().AppendEmpty()
	rs.Resource().Attributes().PutStr("service.name", service)
	spans := rs.ScopeSpans().AppendEmpty().Spans()
	now := time.Now()
	for i := first; i < first+refusedSpansPerRequest; i++ {
		s := spans.AppendEmpty()
		s.SetTraceID(pcommon.TraceID{1, byte(i >> 16), byte(i >> 8), byte(i)})
		s.SetSpanID(pcommon.SpanID{2, byte(i >> 16), byte(i >> 8), byte(i)})
		s.SetName("GET /items/{id}")
		s.SetKind(ptrace.SpanKindServer)
		s.SetStartTimestamp(pcommon.NewTimestampFromTime(now))
		s.SetEndTimestamp(pcommon.NewTimestampFromTime(now.Add(time.Millisecond)))
		s.Attributes().PutStr("http.request.method", "GET")
		s.Attributes().PutStr("http.route", "/items/{id}")
		s.Attributes().PutInt("http.response.status_code", 200)
	}
	b, err := ptraceotlp.NewExportRequestFromTraces(td).MarshalProto()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func postSpans(ctx context.Context, t *testing.T, endpoint string, body []byte) int {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://"+endpoint+"/v1/traces", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-protobuf")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	return resp.StatusCode
}

func TestAPMRefusedBatchesAreCountedAgain(t *testing.T) {
	// Mostly waiting for a minute's edge: run beside the other APM tests.
	t.Parallel()
	g := startGatewayWith(t, gatewayOptions{
		config: "default.yaml", esVersion: "9.2.0",
		// A buffer that fills: two batches in memory, 1 MiB on disk.
		overlays: []string{"elasticsearch/apm.yaml", "../test/e2e/testdata/apm-small-buffer.yaml"},
	})
	ctx := t.Context()
	service := "apm-refused-" + newTestID()[:8]
	if err := g.es.SetRefusing(true); err != nil {
		t.Fatal(err)
	}
	var accepted, refused []int // first span number of each request
	for n := 0; len(refused) < 5 && n < 2000; n++ {
		first := n * refusedSpansPerRequest
		switch status := postSpans(ctx, t, g.endpoints.OTLPHTTP, refusedTestRequest(t, service, first)); status {
		case http.StatusOK:
			accepted = append(accepted, first)
		case http.StatusTooManyRequests, http.StatusServiceUnavailable:
			refused = append(refused, first)
		default:
			t.Fatalf("request %d answered %d, want 200, or 429/503 for a refusal", n, status)
		}
	}
	if len(refused) < 5 {
		t.Fatalf("after %d accepted requests the buffer refused %d; want a full buffer", len(accepted), len(refused))
	}
	attempts := len(refused)
	if err := g.es.SetRefusing(false); err != nil {
		t.Fatal(err)
	}
	// The clients retry each refused request until it is accepted.
	for _, first := range refused {
		body := refusedTestRequest(t, service, first)
		for status := postSpans(ctx, t, g.endpoints.OTLPHTTP, body); status != http.StatusOK; status = postSpans(ctx, t, g.endpoints.OTLPHTTP, body) {
			if status != http.StatusTooManyRequests && status != http.StatusServiceUnavailable {
				t.Fatalf("a retry answered %d", status)
			}
			attempts++
			time.Sleep(100 * time.Millisecond) // a client's backoff before it resends to the process
		}
	}
	sent := (len(accepted) + len(refused)) * refusedSpansPerRequest
	sentAt := time.Now()

	// Every span once in Elasticsearch, then the 1m window's service summary.
	waitCtx, cancel := context.WithDeadline(ctx, sentAt.Truncate(time.Minute).Add(2*time.Minute))
	defer cancel()
	spansIn := func(docs []apmDoc) int {
		n := 0
		for _, d := range docs {
			if strings.HasPrefix(d.index, "traces-") && fmt.Sprint(d.Resource.Attributes["service.name"]) == service {
				n++
			}
		}
		return n
	}
	summary := func(docs []apmDoc) float64 {
		total := 0.0
		for _, d := range docs {
			if d.index == "metrics-service_summary.1m.otel-default" && fmt.Sprint(d.Resource.Attributes["service.name"]) == service {
				v, _ := d.Metrics["service_summary"].(float64)
				total += v
			}
		}
		return total
	}
	// The windows end at minute boundaries: the summary is complete once it stops growing after
	// the boundary that follows the last retry.
	boundary := sentAt.Truncate(time.Minute).Add(time.Minute)
	docs, ok := waitForDocs(waitCtx, t, g.es, func(docs []apmDoc) bool {
		return spansIn(docs) == sent && time.Now().After(boundary.Add(5*time.Second)) && summary(docs) >= float64(sent)
	})
	if !ok {
		t.Fatalf("spans in Elasticsearch %d of %d, service_summary %v", spansIn(docs), sent, summary(docs))
	}
	counted := int(summary(docs))
	overCount := counted - sent
	t.Logf("%d spans sent and stored once; %d requests refused (%d attempts with the retries, %d spans); "+
		"service_summary %d: over-count %d spans (%.1f %%)", sent, len(refused), attempts, attempts*refusedSpansPerRequest,
		counted, overCount, 100*float64(overCount)/float64(sent))
	if overCount != attempts*refusedSpansPerRequest {
		t.Errorf("service_summary counted %d spans more than were stored, want %d (every refused attempt's spans once more)",
			overCount, attempts*refusedSpansPerRequest)
	}
	// The collector's own telemetry states the over-count.
	if reported := metricSum(t, g, "otelcol_connector_apmmetrics_refused_items_total"); int(reported) != overCount {
		t.Errorf("otelcol_connector_apmmetrics_refused_items_total = %v, want the over-count %d", reported, overCount)
	}
}
