package esstandin

import (
	"bytes"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
)

// exporterBulk is a bulk body shaped like the contrib exporter's in otel mode: n span documents of
// about 900 bytes each.
func exporterBulk(n int) []byte { return exporterBulkWithIDs(n, -1) }

// exporterBulkWithIDs is exporterBulk with document ids as elasticmapping sets them (hex trace id
// + span id), unique per batch number batch, first in the action line as go-docappender writes
// them; batch < 0: no ids.
func exporterBulkWithIDs(n, batch int) []byte {
	var b bytes.Buffer
	for i := range n {
		if batch < 0 {
			b.WriteString(`{"create":{"_index":"traces-generic.otel-default"}}` + "\n")
		} else {
			fmt.Fprintf(&b, `{"create":{"_id":"%032x%016x","_index":"traces-generic.otel-default"}}`+"\n", batch, i+1)
		}
		fmt.Fprintf(&b, `{"@timestamp":"1764460800000.%06d","data_stream":{"type":"traces","dataset":"generic.otel","namespace":"default"},`+
			`"trace_id":"%032x","span_id":"%016x","parent_span_id":"00000000000000aa","name":"GET /api/cart/items","kind":"Server","duration":1250000,`+
			`"attributes":{"http.request.method":"GET","http.route":"/api/cart/items","http.response.status_code":200,"url.path":"/api/cart/items",`+
			`"server.address":"cart.internal","network.peer.address":"10.0.0.7","user_agent.original":"bench/1.0","db.system":"redis","peer.service":"redis","component":"net/http"},`+
			`"status":{"code":"Unset"},"resource":{"attributes":{"service.name":"bench-otlp","service.version":"1.2.3","deployment.environment":"prod","host.name":"node-1"}},`+
			`"scope":{"name":"bench","attributes":{"elastic.mapping.mode":"otel"}}}`+"\n", i, i, i+1)
	}
	return b.Bytes()
}

// BenchmarkBulk measures the stand-in's cost per document, counting only (what make bench runs)
// and keeping documents (what tests run): in make bench it shares one CPU with the load generator.
func BenchmarkBulk(b *testing.B) {
	body := exporterBulk(1000)
	for _, tc := range []struct {
		name string
		opts Options
		ids  bool
	}{
		{"count-only", Options{CountOnly: true}, false},
		{"count-only-with-ids", Options{CountOnly: true}, true},
		{"counting", Options{}, false},
		{"keeping-documents", Options{KeepDocuments: true}, false},
	} {
		b.Run(tc.name, func(b *testing.B) {
			s, err := New(tc.opts)
			if err != nil {
				b.Fatal(err)
			}
			h := s.Handler()
			b.SetBytes(int64(len(body)))
			b.ReportAllocs()
			batch := 0
			for b.Loop() {
				if tc.ids { // new ids every request, as the exporter's (a repeated id is a 409)
					b.StopTimer()
					body = exporterBulkWithIDs(1000, batch)
					batch++
					b.StartTimer()
				}
				req := httptest.NewRequest(http.MethodPost, "/_bulk?filter_path=items.*._index,items.*.status,items.*.error.type", bytes.NewReader(body))
				req.Header.Set("Content-Type", "application/json")
				w := httptest.NewRecorder()
				h.ServeHTTP(w, req)
				if w.Code != http.StatusOK {
					b.Fatalf("status %d: %s", w.Code, w.Body)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*1000), "ns/doc")
			if got := s.Stats().SpansByService["bench-otlp"]; got == 0 {
				b.Fatalf("no spans counted for bench-otlp: %+v", s.Stats())
			}
		})
	}
}
