package datakitreceiver

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/receiver/receivertest"

	"github.com/tracegate/tracegate/receiver/datakitreceiver/internal/metadata"
)

// FuzzJaeger: any body is decoded or refused, without a panic; what decodes translates.
func FuzzJaeger(f *testing.F) {
	f.Add(jaegerBatch(&testing.T{}))
	f.Add([]byte{0x0c, 0x00, 0x01, 0x0b, 0x00, 0x01, 0x7f, 0xff, 0xff, 0xff}) // a string claiming 2 GiB
	f.Add([]byte{0x0f, 0x00, 0x02, 0x0c, 0x7f, 0xff, 0xff, 0xff})             // a list claiming 2^31 spans
	f.Fuzz(func(t *testing.T, body []byte) {
		td, err := decodeJaeger(body)
		if err == nil && td.SpanCount() < 0 {
			t.Fatal("negative span count")
		}
	})
}

// FuzzRoutes: any body on any decoding route gets an answer between 200 and 499, never a panic.
func FuzzRoutes(f *testing.F) {
	for _, seed := range []struct{ path, contentType, body string }{
		{"/apis/traces", "application/x-thrift", string(jaegerBatch(&testing.T{}))},
		{"/api/v2/spans", "application/json", zipkinV2JSON},
		{"/api/v1/spans", "application/json", zipkinV1JSON},
		{"/api/v1/spans", "application/x-thrift", "\x0c\x00"},
		{"/api/v2/spans", "application/x-protobuf", "\x0a\x02\x08\x01"},
		{"/otel/v1/traces", "application/json", `{"resourceSpans":[{}]}`},
		{"/otel/v1/metrics", "application/x-protobuf", "\x0a\x00"},
		{"/otel/v1/logs", "application/json", `{"resourceLogs":[]}`},
	} {
		f.Add(seed.path, seed.contentType, []byte(seed.body))
	}
	cfg := createDefaultConfig().(*Config)
	cfg.RefusalWait = 0
	r, err := newReceiver(cfg, receivertest.NewNopSettings(metadata.Type))
	if err != nil {
		f.Fatal(err)
	}
	r.next.Traces, r.next.Metrics, r.next.Logs = new(consumertest.TracesSink), new(consumertest.MetricsSink), new(consumertest.LogsSink)
	if err := r.startIntake(); err != nil {
		f.Fatal(err)
	}
	f.Cleanup(r.stopIntake)
	h := r.routes()
	f.Fuzz(func(t *testing.T, path, contentType string, body []byte) {
		if !strings.HasPrefix(path, "/apis/") && !strings.HasPrefix(path, "/api/v") && !strings.HasPrefix(path, "/otel/") {
			return // the Datadog routes are the ddtrace receiver's, fuzzed there
		}
		req := httptest.NewRequestWithContext(context.Background(), http.MethodPost, "http://x/", strings.NewReader(string(body)))
		req.URL.Path = path // any bytes, as a raw request line could carry them
		req.Header.Set("Content-Type", contentType)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code < 200 || rec.Code > 499 {
			t.Fatalf("%s %q: status %d: %s", path, contentType, rec.Code, rec.Body)
		}
	})
}
