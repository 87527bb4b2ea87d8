package ddtracereceiver

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/tinylib/msgp/msgp"
	"go.opentelemetry.io/collector/consumer/consumertest"
)

// benchSampledV04 is a v0.4 request of one trace of benchSpans spans, as a tracer sampling at a
// rate sends it: the root carries priority in _sampling_priority_v1, every span the other
// metrics and meta of benchV04.
func benchSampledV04(traceID uint64, priority float64) []byte {
	b := msgp.AppendArrayHeader(nil, 1)
	b = msgp.AppendArrayHeader(b, benchSpans)
	for i := range benchSpans {
		b = msgp.AppendMapHeader(b, 12)
		for _, kv := range [][2]string{{"service", "checkout"}, {"name", "http.request"}, {"resource", "GET /api/cart/:id"}, {"type", "web"}} {
			b = msgp.AppendString(msgp.AppendString(b, kv[0]), kv[1])
		}
		b = msgp.AppendUint64(msgp.AppendString(b, "trace_id"), traceID)
		b = msgp.AppendUint64(msgp.AppendString(b, "span_id"), uint64(i+1))
		b = msgp.AppendUint64(msgp.AppendString(b, "parent_id"), uint64(i))
		b = msgp.AppendInt64(msgp.AppendString(b, "start"), 1_700_000_000_000_000_000+int64(i))
		b = msgp.AppendInt64(msgp.AppendString(b, "duration"), 1_500_000)
		b = msgp.AppendInt32(msgp.AppendString(b, "error"), 0)
		b = msgp.AppendMapHeader(msgp.AppendString(b, "meta"), 10)
		for _, kv := range benchMeta(i) {
			b = msgp.AppendString(msgp.AppendString(b, kv[0]), kv[1])
		}
		metrics := benchMetrics[1:]
		if i == 0 {
			metrics = append([][2]any{{"_sampling_priority_v1", priority}}, metrics...)
		}
		b = msgp.AppendMapHeader(msgp.AppendString(b, "metrics"), uint32(len(metrics)))
		for _, kv := range metrics {
			b = msgp.AppendFloat64(msgp.AppendString(b, kv[0].(string)), kv[1].(float64))
		}
	}
	return b
}

// BenchmarkSampledRequests sends what make bench-sampling sends, serially through the handler
// into a consumer that drops the traces: ten one-trace v0.4 requests, one kept (priority 2), nine
// rejected (-1), with drop_rejected_chunks off (store all) and on. One op is the ten requests;
// the ratio of the two ns/op is what dropping spares the receiver.
func BenchmarkSampledRequests(b *testing.B) {
	bodies := make([][]byte, 10)
	for i := range bodies {
		priority := -1.0
		if i == 0 {
			priority = 2
		}
		bodies[i] = benchSampledV04(0x1122334455667788+uint64(i), priority)
	}
	for _, v := range []struct {
		name string
		drop bool
	}{{"store-all", false}, {"drop-rejected", true}} {
		b.Run(v.name, func(b *testing.B) {
			cfg := createDefaultConfig().(*Config)
			cfg.DropRejectedChunks = v.drop
			r, err := newReceiver(cfg, nopSettings(), consumertest.NewNop())
			if err != nil {
				b.Fatal(err)
			}
			h := r.handler()
			b.ReportAllocs()
			for b.Loop() {
				for _, body := range bodies {
					req := httptest.NewRequestWithContext(context.Background(), http.MethodPut, "/v0.4/traces", bytes.NewReader(body))
					req.Header.Set("Content-Type", "application/msgpack")
					rec := httptest.NewRecorder()
					h.ServeHTTP(rec, req)
					if rec.Code != http.StatusOK {
						b.Fatalf("status %d", rec.Code)
					}
				}
			}
		})
	}
}
