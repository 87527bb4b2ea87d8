package ddtracereceiver

import (
	"context"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/receiver/receivertest"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/tracegate/tracegate/receiver/ddtracereceiver/internal/metadata"
)

// FuzzHandler sends arbitrary bodies to every trace route with every kind of media type, through
// the whole handler (media-type dispatch, the JSON-then-msgpack fallback, /v0.1's wrapping,
// translation). The answer is one the receiver documents, never a crash; nothing reaches the
// pipeline unless the answer is 200; and every span the route's decoder finds is either delivered
// or counted as dropped.
func FuzzHandler(f *testing.F) {
	routes := slices.Sorted(func(yield func(string) bool) {
		for path := range traceEndpoints() {
			if !yield(path) {
				return
			}
		}
	})
	types := []string{"application/msgpack", "application/json", "", "text/plain", "application/msgpack; charset=x", "bogus/;;"}
	route := func(path string) uint8 { return uint8(slices.Index(routes, path)) }
	f.Add(route("/v0.4/traces"), uint8(0), v04Body("f", 1, 3))
	f.Add(route("/v0.4/traces"), uint8(3), v04Body("f", 1, 2)) // text/plain: JSON, then msgpack
	f.Add(route("/v0.1/spans"), uint8(1), []byte(`{"trace_id":1,"span_id":2},null,{"trace_id":0,"span_id":3}`))
	f.Add(route("/v0.3/traces"), uint8(1), []byte(`[[{"trace_id":1,"span_id":2,"meta":{"_dd.span_links":"[{}]"}},null]]`))
	f.Add(route("/v0.5/traces"), uint8(0), minimalV05(3))
	f.Add(route("/v0.4/traces")|0x80, uint8(0), v04Body("f", 1, 3))
	f.Fuzz(func(t *testing.T, route, mediaType uint8, body []byte) {
		path := routes[int(route)%len(routes)]
		contentType := types[int(mediaType)%len(types)]
		tel := componenttest.NewTelemetry()
		defer func() { require.NoError(t, tel.Shutdown(context.Background())) }()
		set := receivertest.NewNopSettings(metadata.Type)
		set.TelemetrySettings = tel.NewTelemetrySettings()
		sink := new(consumertest.TracesSink)
		cfg := createDefaultConfig().(*Config)
		cfg.TraceIDCacheSize = 16 // a receiver per input: keep it cheap
		// The high bit of route turns drop_rejected_chunks on: the msgpack decoders then leave the
		// rejected chunks undecoded, and their spans must still be counted.
		cfg.DropRejectedChunks = route&0x80 != 0
		r, err := newReceiver(cfg, set, sink)
		require.NoError(t, err)

		rec := serve(t, r, "PUT", path, body, map[string]string{"Content-Type": contentType})
		switch rec.Code {
		case 200, 400, 413, 415:
		default:
			t.Fatalf("%s (%q): status %d: %s", path, contentType, rec.Code, rec.Body)
		}
		if rec.Code != 200 {
			require.Zero(t, sink.SpanCount(), "spans delivered with a %d", rec.Code)
			return
		}
		// What the route's decoder finds, delivered or counted as dropped.
		var found int
		if ps, err := traceEndpoints()[path].decode(contentType, body); err == nil {
			for i := range ps {
				found += ps[i].SpanCount() + ps[i].NilSpans
				ps[i].Release()
			}
		}
		var dropped int64
		if m, err := tel.GetMetric("otelcol.receiver.ddtrace.spans.dropped"); err == nil {
			for _, dp := range m.Data.(metricdata.Sum[int64]).DataPoints {
				dropped += dp.Value
			}
		}
		require.Equal(t, int64(found), int64(sink.SpanCount())+dropped, "%s (%q): %d found, %d delivered, %d dropped", path, contentType, found, sink.SpanCount(), dropped)
	})
}
