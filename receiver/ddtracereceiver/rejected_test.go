package ddtracereceiver

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/sdk/metric/metricdata/metricdatatest"

	"github.com/tracegate/tracegate/receiver/ddtracereceiver/internal/chunkfilter"
	"github.com/tracegate/tracegate/receiver/ddtracereceiver/internal/metadatatest"
	"github.com/tracegate/tracegate/receiver/ddtracereceiver/internal/payload"
)

// noPriority leaves a chunk's priority out of priorityBody.
const noPriority = int64(-1000)

// num is a JSON number for appendMsgpack: an integer, or a float when it has a fraction part.
func num(s string) json.Number { return json.Number(s) }

// priorityBody is one request of version (v0.4, v0.5 or v0.7) with one chunk per priority, a
// root and its child, under trace ids 1, 2, ... in order. The priority is where each version's
// tracers put it: the root's _sampling_priority_v1 metric (a float) in v0.4 and v0.5, the chunk's
// own field in v0.7 (its spans carry none).
func priorityBody(t *testing.T, version string, priorities []int64) []byte {
	t.Helper()
	metrics := func(p int64, key string) map[string]any {
		if p == noPriority {
			return map[string]any{}
		}
		return map[string]any{key: num(strconv.FormatInt(p, 10) + ".0")}
	}
	span := func(trace, id, parent int, m map[string]any) map[string]any {
		return map[string]any{
			"service": "svc", "name": "op", "resource": "GET /", "trace_id": num(strconv.Itoa(trace)),
			"span_id": num(strconv.Itoa(id)), "parent_id": num(strconv.Itoa(parent)),
			"start": num("1700000000000000000"), "duration": num("1000"), "metrics": m,
		}
	}
	var v any
	intKeys := false
	switch version {
	case "v0.4":
		traces := []any{}
		for i, p := range priorities {
			traces = append(traces, []any{span(i+1, 1, 0, metrics(p, "_sampling_priority_v1")), span(i+1, 2, 1, map[string]any{})})
		}
		v = traces
	case "v0.5":
		// Dictionary: 0 "", 1 "svc", 2 "op", 3 "GET /", 4 "_sampling_priority_v1".
		traces := []any{}
		for i, p := range priorities {
			trace := num(strconv.Itoa(i + 1))
			v05 := func(id, parent int, m map[string]any) []any {
				meta := map[string]any{}
				return []any{
					num("1"), num("2"), num("3"), trace, num(strconv.Itoa(id)), num(strconv.Itoa(parent)),
					num("1700000000000000000"), num("1000"), num("0"), meta, m, num("0"),
				}
			}
			traces = append(traces, []any{v05(1, 0, metrics(p, "4")), v05(2, 1, map[string]any{})})
		}
		v, intKeys = []any{[]any{"", "svc", "op", "GET /", "_sampling_priority_v1"}, traces}, true
	case "v0.7":
		chunks := []any{}
		for i, p := range priorities {
			c := map[string]any{"spans": []any{span(i+1, 1, 0, map[string]any{}), span(i+1, 2, 1, map[string]any{})}}
			if p != noPriority {
				c["priority"] = num(strconv.FormatInt(p, 10))
			}
			chunks = append(chunks, c)
		}
		v = map[string]any{"chunks": chunks}
	default:
		t.Fatalf("no body for %s", version)
	}
	b, err := appendMsgpack(nil, v, intKeys)
	require.NoError(t, err)
	return b
}

// traceIDs are the low 64 bits of the trace ids of the spans that reached sink, with their spans.
func traceIDs(sink *consumertest.TracesSink) map[uint64]int {
	ids := map[uint64]int{}
	for _, td := range sink.AllTraces() {
		for _, rs := range td.ResourceSpans().All() {
			for _, ss := range rs.ScopeSpans().All() {
				for _, s := range ss.Spans().All() {
					id := s.TraceID()
					ids[binary.BigEndian.Uint64(id[8:])]++
				}
			}
		}
	}
	return ids
}

// TestDropRejectedChunks: with drop_rejected_chunks on, the chunks of priority below 0 never reach
// the pipeline, in every version's place for the priority; 0, 1, 2 and a chunk without a priority
// do, whole. Each dropped chunk is counted, and its spans as dropped. Off, everything passes.
func TestDropRejectedChunks(t *testing.T) {
	priorities := []int64{-2, -1, 0, 1, 2, noPriority} // trace ids 1 to 6
	for _, version := range []string{"v0.4", "v0.5", "v0.7"} {
		for _, on := range []bool{true, false} {
			t.Run(version+"/drop_rejected_chunks="+strconv.FormatBool(on), func(t *testing.T) {
				set, tel, _ := observedSettings(t)
				cfg := createDefaultConfig().(*Config)
				cfg.DropRejectedChunks = on
				sink := new(consumertest.TracesSink)
				r, err := newReceiver(cfg, set, sink)
				require.NoError(t, err)

				rec := serve(t, r, "PUT", "/"+version+"/traces", priorityBody(t, version, priorities), nil)
				require.Equal(t, 200, rec.Code, rec.Body.String())

				want := map[uint64]int{1: 2, 2: 2, 3: 2, 4: 2, 5: 2, 6: 2}
				if on {
					delete(want, 1) // priority -2
					delete(want, 2) // priority -1
				}
				assert.Equal(t, want, traceIDs(sink))

				if !on {
					_, err := tel.GetMetric("otelcol_receiver_ddtrace_chunks_filtered")
					assert.Error(t, err, "nothing filtered")
					return
				}
				reason := attribute.String("reason", "priority_user_reject")
				metadatatest.AssertEqualReceiverDdtraceChunksFiltered(t, tel, []metricdata.DataPoint[int64]{
					{Attributes: attribute.NewSet(reason), Value: 2},
				}, metricdatatest.IgnoreTimestamp())
				metadatatest.AssertEqualReceiverDdtraceSpansDropped(t, tel, []metricdata.DataPoint[int64]{
					{Attributes: attribute.NewSet(attribute.String("endpoint", version), reason), Value: 4},
				}, metricdatatest.IgnoreTimestamp())
				accepted, err := tel.GetMetric("otelcol_receiver_accepted_spans")
				require.NoError(t, err)
				assert.Equal(t, int64(8), sumInt(t, accepted), "what reached the pipeline")
			})
		}
	}
}

// TestDropRejectedAllAnswersOK: a request whose every chunk the tracer rejected is answered as
// taken, with the rates body: the tracer did its part.
func TestDropRejectedAllAnswersOK(t *testing.T) {
	cfg := createDefaultConfig().(*Config)
	cfg.DropRejectedChunks = true
	sink := new(consumertest.TracesSink)
	r := newTestReceiver(t, cfg, sink)
	rec := serve(t, r, "PUT", "/v0.4/traces", prioTraces("svc", -1, 5), nil)
	assert.Equal(t, 200, rec.Code, rec.Body.String())
	assert.JSONEq(t, string(rateBody), rec.Body.String())
	assert.Zero(t, sink.SpanCount())
}

// TestDropRejectedAfterRates: rate_by_service counts a request before the rejected chunks go, so
// the rates are the same with drop_rejected_chunks on or off (the share of the chunks a tracer
// says it dropped is spread over every chunk it sent, the rejected ones included).
func TestDropRejectedAfterRates(t *testing.T) {
	var priorities []int64
	for i := range 100 {
		priorities = append(priorities, map[bool]int64{true: 1, false: -1}[i%5 < 2]) // 40 kept, 60 rejected
	}
	body := priorityBody(t, "v0.4", priorities)
	replies := map[bool]string{}
	for _, on := range []bool{true, false} {
		cfg := createDefaultConfig().(*Config)
		cfg.RateByService.Enabled, cfg.RateByService.TargetTracesPerSecond = true, 1
		cfg.DropRejectedChunks = on
		r, clock := rateReceiverWith(t, cfg)
		for range 2 {
			headers := map[string]string{"Datadog-Client-Dropped-P0-Traces": "100"}
			require.Equal(t, 200, serve(t, r, "PUT", "/v0.4/traces", body, headers).Code)
			clock.now = clock.now.Add(5 * time.Second)
		}
		replies[on] = string(r.rates.Reply().Body)
	}
	assert.NotEqual(t, `{"rate_by_service":{}}`, replies[true], "rates were computed")
	assert.Equal(t, replies[false], replies[true])
}

func TestRejectedReasonName(t *testing.T) {
	assert.Equal(t, "priority_user_reject", chunkfilter.RejectedPriority.String(), "the tracesampling processor's name for the same decision")
}

// TestDecodeLeavesRejectedUndecoded: the rejected v0.4 chunks are left out by the decoder only
// when nothing reads them before the drop; with a filter or rate_by_service on they are decoded
// whole, for those to see, and dropped after.
func TestDecodeLeavesRejectedUndecoded(t *testing.T) {
	body := priorityBody(t, "v0.4", []int64{-2, -1, 0, 1, 2, noPriority})
	for _, tt := range []struct {
		name      string
		configure func(*Config)
		skipped   payload.Skipped
	}{
		{"drop only", func(*Config) {}, payload.Skipped{Chunks: 2, Spans: 4}},
		{"drop off", func(c *Config) { c.DropRejectedChunks = false }, payload.Skipped{}},
		{"with a filter", func(c *Config) { c.Filters.IgnoreResources = []string{"^none$"} }, payload.Skipped{}},
		{"with rate_by_service", func(c *Config) { c.RateByService.Enabled = true }, payload.Skipped{}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cfg := createDefaultConfig().(*Config)
			cfg.DropRejectedChunks = true
			tt.configure(cfg)
			r, err := newReceiver(cfg, nopSettings(), consumertest.NewNop())
			require.NoError(t, err)
			req := httptest.NewRequest(http.MethodPut, "/v0.4/traces", bytes.NewReader(body))
			req.Header.Set("Content-Type", "application/msgpack")
			ps, skipped, err := r.decode(traceEndpoints()["/v0.4/traces"], req, body)
			require.NoError(t, err)
			require.Len(t, ps, 1)
			assert.Equal(t, tt.skipped, skipped)
			assert.Len(t, ps[0].Chunks, 6-tt.skipped.Chunks)
			ps[0].Release()
		})
	}
}
