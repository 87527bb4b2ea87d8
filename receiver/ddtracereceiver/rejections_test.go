package ddtracereceiver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer/consumererror"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/sdk/metric/metricdata/metricdatatest"
	"go.uber.org/zap/zaptest/observer"

	"github.com/tracegate/tracegate/receiver/ddtracereceiver/internal/metadatatest"
	"github.com/tracegate/tracegate/receiver/ddtracereceiver/internal/translator"
)

// observedReceiver is a receiver whose telemetry and warnings the test reads.
func observedReceiver(t *testing.T, cfg *Config, next *consumertest.TracesSink) (*ddReceiver, *componenttest.Telemetry, *observer.ObservedLogs) {
	t.Helper()
	set, tel, logs := observedSettings(t)
	r, err := newReceiver(cfg, set, next)
	require.NoError(t, err)
	return r, tel, logs
}

func rejected(endpoint, reason string, n int64) metricdata.DataPoint[int64] {
	return metricdata.DataPoint[int64]{Value: n, Attributes: attribute.NewSet(
		attribute.String("endpoint", endpoint), attribute.String("reason", reason),
	)}
}

// TestBadRequestsWarnOncePerCause: N bad requests of one cause are N in requests.rejected and one
// warning, which names the metric; another cause gets its own warning.
func TestBadRequestsWarnOncePerCause(t *testing.T) {
	const n = 5
	r, tel, logs := observedReceiver(t, createDefaultConfig().(*Config), new(consumertest.TracesSink))
	for range n {
		require.Equal(t, 405, serve(t, r, "GET", "/v0.4/traces", nil, nil).Code)
	}
	for range n {
		require.Equal(t, 400, serve(t, r, "PUT", "/v0.4/traces", []byte{0xc1}, nil).Code)
	}
	metadatatest.AssertEqualReceiverDdtraceRequestsRejected(t, tel, []metricdata.DataPoint[int64]{
		rejected("v0.4", causeMethod, n), rejected("v0.4", causeUndecodable, n),
	}, metricdatatest.IgnoreTimestamp())

	warnings := logs.FilterMessage("bad trace request").All()
	require.Len(t, warnings, 2, "one per cause")
	reasons := map[string]bool{}
	for _, w := range warnings {
		reasons[w.ContextMap()["reason"].(string)] = true
		assert.Contains(t, w.ContextMap()["repeats"], rejectedMetric)
	}
	assert.Equal(t, map[string]bool{causeMethod: true, causeUndecodable: true}, reasons)
}

// TestRefusalsWarnOnce: payloads the pipeline refuses are counted in requests.rejected and their
// spans as refused; only the first refusal is logged.
func TestRefusalsWarnOnce(t *testing.T) {
	const n = 4
	cfg := createDefaultConfig().(*Config)
	cfg.RefusalWait = 0
	sink := new(consumertest.TracesSink)
	r, tel, logs := observedReceiver(t, cfg, sink)
	r.next = consumertest.NewErr(errors.New("buffer full"))
	for i := range n {
		rec := serve(t, r, "PUT", "/v0.4/traces", v04Body("r", uint64(i+1), 2), map[string]string{"Datadog-Send-Real-Http-Status": "1"})
		require.Equal(t, 429, rec.Code)
	}
	metadatatest.AssertEqualReceiverDdtraceRequestsRejected(t, tel, []metricdata.DataPoint[int64]{
		rejected("v0.4", causePipeline, n),
	}, metricdatatest.IgnoreTimestamp())
	refusals := logs.FilterMessage("trace payload refused").All()
	require.Len(t, refusals, 1)
	assert.Equal(t, int64(2), refusals[0].ContextMap()["spans"])
	assert.Equal(t, "buffer full", refusals[0].ContextMap()["error"])
}

// TestQueueTimeoutsWarnOnce: requests refused for want of a decoder slot (never decoded) are
// counted and logged once, with the tracer's own trace count.
func TestQueueTimeoutsWarnOnce(t *testing.T) {
	const n = 3
	cfg := createDefaultConfig().(*Config)
	cfg.MaxConcurrentRequests, cfg.QueueTimeout = 1, 0
	r, tel, logs := observedReceiver(t, cfg, new(consumertest.TracesSink))
	r.slots <- struct{}{} // the only slot is taken
	for range n {
		rec := serve(t, r, "PUT", "/v0.5/traces", []byte{0x92, 0x90, 0x90}, map[string]string{"X-Datadog-Trace-Count": "7"})
		require.Equal(t, 200, rec.Code, "refusal_status")
	}
	r.releaseSlot()
	metadatatest.AssertEqualReceiverDdtraceRequestsRejected(t, tel, []metricdata.DataPoint[int64]{
		rejected("v0.5", causeQueueTimeout, n),
	}, metricdatatest.IgnoreTimestamp())
	refusals := logs.FilterMessage("trace payload refused").All()
	require.Len(t, refusals, 1)
	assert.Contains(t, refusals[0].ContextMap()["error"], "X-Datadog-Trace-Count: 7")
}

// TestDroppedSpansWarnOncePerReason: spans dropped as invalid over N requests are all counted,
// and each reason is logged once.
func TestDroppedSpansWarnOncePerReason(t *testing.T) {
	const n = 4
	r, tel, logs := observedReceiver(t, createDefaultConfig().(*Config), new(consumertest.TracesSink))
	for range n {
		require.Equal(t, 200, serve(t, r, "PUT", "/v0.4/traces", v04Body("z", 0, 1), nil).Code)
	}
	metadatatest.AssertEqualReceiverDdtraceSpansDropped(t, tel, []metricdata.DataPoint[int64]{
		{Value: n, Attributes: attribute.NewSet(attribute.String("endpoint", "v0.4"), attribute.String("reason", "zero_trace_id"))},
	}, metricdatatest.IgnoreTimestamp())
	assert.Len(t, logs.FilterMessage("invalid spans dropped").All(), 1)
}

// TestDroppedEventAttributesAreCounted: span event attributes past the limit are counted over
// every request and logged once.
func TestDroppedEventAttributesAreCounted(t *testing.T) {
	const n, extra = 3, 10
	attrs := map[string]string{}
	for i := range translator.MaxEventAttributes + extra {
		attrs[fmt.Sprintf("a%03d", i)] = "x"
	}
	events, err := json.Marshal([]map[string]any{{"name": "e", "time_unix_nano": 1, "attributes": attrs}})
	require.NoError(t, err)
	body, err := json.Marshal([][]map[string]any{{{
		"trace_id": 1, "span_id": 2, "service": "s", "name": "op",
		"meta": map[string]string{"events": string(events)},
	}}})
	require.NoError(t, err)

	sink := new(consumertest.TracesSink)
	r, tel, logs := observedReceiver(t, createDefaultConfig().(*Config), sink)
	for range n {
		require.Equal(t, 200, serve(t, r, "PUT", "/v0.4/traces", body, map[string]string{"Content-Type": "application/json"}).Code)
	}
	require.Equal(t, n, sink.SpanCount())
	metadatatest.AssertEqualReceiverDdtraceEventAttributesDropped(t, tel, []metricdata.DataPoint[int64]{
		{Value: n * extra, Attributes: attribute.NewSet(attribute.String("endpoint", "v0.4"))},
	}, metricdatatest.IgnoreTimestamp())
	assert.Len(t, logs.FilterMessage("span event attributes past the limit dropped").All(), 1)
}

// TestCauseOf: each error the receiver tells apart has its own reason, refusals included.
func TestCauseOf(t *testing.T) {
	for _, tt := range []struct {
		err  error
		want string
	}{
		{&readError{fmt.Errorf("read: %w", &http.MaxBytesError{Limit: 10})}, causeTooLarge},
		{&readError{os.ErrDeadlineExceeded}, causeReadTimeout},
		{&readError{io.ErrUnexpectedEOF}, causeUnexpectedEOF},
		{errEmptyBody, causeUnexpectedEOF},
		{&readError{errors.New("gzip: invalid checksum")}, causeUnreadable},
		{&decodeError{errors.New("msgp: bad type")}, causeUndecodable},
		{fmt.Errorf("%w: v0.2 accepts JSON only", errUnsupportedMT), causeUnsupportedMT},
		{errCrossSite, causeCrossSite},
		{errMethodNotAllow, causeMethod},
		{consumererror.NewPermanent(errors.New("bad data")), causePermanent},
		{fmt.Errorf("%w (X-Datadog-Trace-Count: 3)", errQueueTimeout), causeQueueTimeout},
		{errDecodeMemory, causeDecodeMemory},
		{context.Canceled, causeClientGone},
		{fmt.Errorf("export: %w", os.ErrDeadlineExceeded), causePipeline},
		{fmt.Errorf("Post http://es:9200/_bulk: %w", io.EOF), causePipeline},
	} {
		t.Run(tt.want+"/"+tt.err.Error(), func(t *testing.T) {
			assert.Equal(t, tt.want, causeOf(tt.err))
		})
	}
}

// TestRequestTelemetryByOutcome: an accepted request and a refused one are counted under their
// status, their spans in the standard receiver metrics only (nothing was dropped), and each body's
// size under its endpoint (the accepted path's attribute sets are made once per endpoint, the
// others per request).
func TestRequestTelemetryByOutcome(t *testing.T) {
	cfg := createDefaultConfig().(*Config)
	cfg.RefusalWait = 0
	next := &refusingConsumer{}
	set, tel, _ := observedSettings(t)
	r, err := newReceiver(cfg, set, next)
	require.NoError(t, err)
	accepted, refused := v04Body("a", 1, 2), v04Body("b", 2, 3)
	require.Equal(t, 200, serve(t, r, "PUT", "/v0.4/traces", accepted, nil).Code)
	next.err = errors.New("data refused due to high memory usage")
	require.Equal(t, 429, serve(t, r, "PUT", "/v0.4/traces", refused, map[string]string{"Datadog-Send-Real-Http-Status": "true"}).Code)

	ep := attribute.String("endpoint", "v0.4")
	metadatatest.AssertEqualReceiverDdtraceRequests(t, tel, []metricdata.DataPoint[int64]{
		{Value: 1, Attributes: attribute.NewSet(ep, attribute.Int("http.response.status_code", 200))},
		{Value: 1, Attributes: attribute.NewSet(ep, attribute.Int("http.response.status_code", 429))},
	}, metricdatatest.IgnoreTimestamp())
	for name, want := range map[string]int64{"otelcol_receiver_accepted_spans": 2, "otelcol_receiver_refused_spans": 3} {
		m, err := tel.GetMetric(name)
		require.NoError(t, err, name)
		assert.Equal(t, want, sumInt(t, m), name)
	}
	_, err = tel.GetMetric("otelcol.receiver.ddtrace.spans.dropped")
	require.Error(t, err, "no span was dropped")
	size, err := tel.GetMetric("otelcol.receiver.ddtrace.request.size")
	require.NoError(t, err)
	points := size.Data.(metricdata.Histogram[int64]).DataPoints
	require.Len(t, points, 1)
	assert.Equal(t, attribute.NewSet(ep), points[0].Attributes)
	assert.Equal(t, uint64(2), points[0].Count)
	assert.Equal(t, int64(len(accepted)+len(refused)), points[0].Sum)
}
