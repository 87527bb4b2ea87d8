package ddtracereceiver

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	pb "github.com/DataDog/datadog-agent/pkg/proto/pbgo/trace"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tinylib/msgp/msgp"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/confmap/confmaptest"
	"go.opentelemetry.io/collector/confmap/xconfmap"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/receiver/receivertest"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/sdk/metric/metricdata/metricdatatest"

	"github.com/tracegate/tracegate/receiver/ddtracereceiver/internal/metadata"
	"github.com/tracegate/tracegate/receiver/ddtracereceiver/internal/metadatatest"
	"github.com/tracegate/tracegate/receiver/ddtracereceiver/internal/ratesampler"
)

// prioTraces is a v0.4 body of n one-span traces of service at priority prio, in the root's
// _sampling_priority_v1 metric as v0.4 tracers send it.
func prioTraces(service string, prio float64, n int) []byte {
	b := msgp.AppendArrayHeader(nil, uint32(n))
	for i := range n {
		b = msgp.AppendArrayHeader(b, 1)
		b = msgp.AppendMapHeader(b, 7)
		b = msgp.AppendString(b, "service")
		b = msgp.AppendString(b, service)
		b = msgp.AppendString(b, "name")
		b = msgp.AppendString(b, "op")
		b = msgp.AppendString(b, "trace_id")
		b = msgp.AppendUint64(b, uint64(i+1))
		b = msgp.AppendString(b, "span_id")
		b = msgp.AppendUint64(b, uint64(i+1))
		b = msgp.AppendString(b, "start")
		b = msgp.AppendInt64(b, 1_700_000_000_000_000_000)
		b = msgp.AppendString(b, "duration")
		b = msgp.AppendInt64(b, 1000)
		b = msgp.AppendString(b, "metrics")
		b = msgp.AppendMapHeader(b, 1)
		b = msgp.AppendString(b, "_sampling_priority_v1")
		b = msgp.AppendFloat64(b, prio)
	}
	return b
}

// Bodies without a chunk, one per route that replies with rates.
var emptyRateBodies = map[string][]byte{
	"/v0.4/traces": {0x90},             // []
	"/v0.5/traces": {0x92, 0x90, 0x90}, // [[], []]: no strings, no traces
	"/v0.7/traces": {0x80},             // {}
}

// fakeClock is rate_by_service's clock in tests: it moves only when told.
type fakeClock struct{ now time.Time }

func (c *fakeClock) time() time.Time { return c.now }

// rateReceiver is a receiver with rate_by_service on at target, on a fake clock at the start of
// a 5 s bucket.
func rateReceiver(t *testing.T, target float64) (*ddReceiver, *fakeClock) {
	t.Helper()
	cfg := createDefaultConfig().(*Config)
	cfg.RateByService.Enabled, cfg.RateByService.TargetTracesPerSecond = true, target
	return rateReceiverWith(t, cfg)
}

// rateReceiverWith is rateReceiver with the whole configuration given.
func rateReceiverWith(t *testing.T, cfg *Config) (*ddReceiver, *fakeClock) {
	t.Helper()
	r := newTestReceiver(t, cfg, new(consumertest.TracesSink))
	clock := &fakeClock{now: time.Unix(1_700_000_000, 0)}
	r.clock = clock.time
	return r, clock
}

// TestRateByServiceOff: with rate_by_service off every rates route answers the fixed body, and no
// version header even to a tracer that sends one.
func TestRateByServiceOff(t *testing.T) {
	fixed := `{"rate_by_service":{"service:,env:":1}}` + "\n" // byte for byte
	r := newTestReceiver(t, createDefaultConfig().(*Config), new(consumertest.TracesSink))
	for path, body := range emptyRateBodies {
		rec := serve(t, r, "PUT", path, body, map[string]string{ratesVersionHeader: "v1"})
		require.Equal(t, 200, rec.Code, path)
		assert.Equal(t, fixed, rec.Body.String(), path)
		assert.NotContains(t, rec.Header(), ratesVersionHeader, path)
	}
	rec := serve(t, r, "PUT", "/v0.4/traces", prioTraces("busy", 1, 500), nil)
	assert.Equal(t, fixed, rec.Body.String(), "nothing is counted")
}

// TestRateByServiceReply: the replies carry the computed rates, and answer the version header as
// the agent: the current version back, and {} to a tracer that already holds it.
func TestRateByServiceReply(t *testing.T) {
	r, clock := rateReceiver(t, 10)
	empty, first := `{"rate_by_service":{}}`+"\n", `{"rate_by_service":{"service:,env:":0.1}}`+"\n"
	for path, body := range emptyRateBodies {
		rec := serve(t, r, "PUT", path, body, map[string]string{ratesVersionHeader: "v1"})
		require.Equal(t, 200, rec.Code, path)
		assert.Equal(t, empty, rec.Body.String(), "%s: nothing counted yet", path)
		assert.Equal(t, []string{""}, rec.Header().Values(ratesVersionHeader), "%s: no version yet", path)
		assert.Equal(t, "application/json", rec.Header().Get("Content-Type"))
	}

	// 500 traces in 5 s: 100/s against 10. The first count gives the default from the total, the
	// first complete bucket the service's own rate.
	rec := serve(t, r, "PUT", "/v0.4/traces", prioTraces("busy", 1, 500), nil)
	assert.Equal(t, first, rec.Body.String())
	assert.NotContains(t, rec.Header(), ratesVersionHeader, "a tracer that sends no version gets none")
	clock.now = clock.now.Add(5 * time.Second)
	rec = serve(t, r, "PUT", "/v0.4/traces", prioTraces("busy", 0, 500), nil)
	want := `{"rate_by_service":{"service:,env:":0.1,"service:busy,env:":0.1,"service:busy,env:none":0.1}}` + "\n"
	assert.Equal(t, want, rec.Body.String())

	for path, body := range emptyRateBodies {
		rec = serve(t, r, "PUT", path, body, map[string]string{ratesVersionHeader: "stale"})
		assert.Equal(t, want, rec.Body.String(), path)
		current := rec.Header().Get(ratesVersionHeader)
		require.NotEmpty(t, current, path)

		rec = serve(t, r, "PUT", path, body, map[string]string{ratesVersionHeader: current})
		assert.Equal(t, "{}", rec.Body.String(), "%s: the tracer holds the current rates", path)
		assert.Equal(t, current, rec.Header().Get(ratesVersionHeader), path)
	}
}

// TestRateByServiceCounting: what the rates count. The tracer's dropped P0 traces weigh on its
// chunks; chunks at a user priority and chunks another agent forwarded do not count.
func TestRateByServiceCounting(t *testing.T) {
	ap := &pb.AgentPayload{TracerPayloads: []*pb.TracerPayload{{Chunks: []*pb.TraceChunk{}}}}
	for range 500 {
		ap.TracerPayloads[0].Chunks = append(ap.TracerPayloads[0].Chunks, &pb.TraceChunk{
			Priority: 1, Spans: []*pb.Span{{
				Service: "fwd", Name: "op", TraceID: 1, SpanID: 1,
				Resource: strings.Repeat("r", 100), // bytes enough for the decoder's size budget
			}},
		})
	}
	forwarded, err := ap.MarshalVT()
	require.NoError(t, err)
	counted := func(def string) string { return `{"rate_by_service":{"service:,env:":` + def + `}}` + "\n" }
	nothing := `{"rate_by_service":{}}` + "\n"
	for _, tt := range []struct {
		name, path string
		body       []byte
		headers    map[string]string
		want       string // the table after this one request
	}{
		{"one trace: 0.2/s", "/v0.4/traces", prioTraces("s", 1, 1), nil, counted("1")},
		{"99 dropped P0s: 20/s", "/v0.4/traces", prioTraces("s", 1, 1), map[string]string{"Datadog-Client-Dropped-P0-Traces": "99"}, counted("0.5")},
		{"v0.3 counts", "/v0.3/traces", prioTraces("s", 0, 100), nil, counted("0.5")},
		{"user priority not counted", "/v0.4/traces", prioTraces("s", 2, 500), nil, nothing},
		{"forwarded not counted", "/api/v0.2/traces", forwarded, map[string]string{"Content-Type": "application/x-protobuf"}, nothing},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r, _ := rateReceiver(t, 10)
			rec := serve(t, r, "PUT", tt.path, tt.body, tt.headers)
			require.Equal(t, 200, rec.Code, rec.Body.String())
			assert.Equal(t, tt.want, string(r.rates.Reply().Body))
		})
	}
}

// TestRateByServiceTelemetry: the pairs tracked at each computation, the table's changes, and
// the chunks of pairs past max_services.
func TestRateByServiceTelemetry(t *testing.T) {
	tel := componenttest.NewTelemetry()
	t.Cleanup(func() { require.NoError(t, tel.Shutdown(context.Background())) })
	set := receivertest.NewNopSettings(metadata.Type)
	set.TelemetrySettings = tel.NewTelemetrySettings()
	cfg := createDefaultConfig().(*Config)
	cfg.RateByService = ratesampler.Config{Enabled: true, TargetTracesPerSecond: 10, MaxServices: 1}
	r, err := newReceiver(cfg, set, new(consumertest.TracesSink))
	require.NoError(t, err)
	clock := &fakeClock{now: time.Unix(1_700_000_000, 0)}
	r.clock = clock.time

	for range 3 {
		serve(t, r, "PUT", "/v0.4/traces", prioTraces("first", 1, 5), nil)
		serve(t, r, "PUT", "/v0.4/traces", prioTraces("second", 1, 5), nil)
		clock.now = clock.now.Add(5 * time.Second)
	}
	// Bucket 0: the default; bucket 1: first's rate; bucket 2: unchanged.
	metadatatest.AssertEqualReceiverDdtraceRateByServiceUpdates(t, tel, []metricdata.DataPoint[int64]{{Value: 2}}, metricdatatest.IgnoreTimestamp())
	metadatatest.AssertEqualReceiverDdtraceRateByServiceServices(t, tel, []metricdata.DataPoint[int64]{{Value: 1}}, metricdatatest.IgnoreTimestamp())
	metadatatest.AssertEqualReceiverDdtraceRateByServiceUntracked(t, tel, []metricdata.DataPoint[int64]{{Value: 15}}, metricdatatest.IgnoreTimestamp())
}

// TestRateByServiceInfo: /info reports the target, as the agent's target_tps, only when on.
func TestRateByServiceInfo(t *testing.T) {
	for _, tt := range []struct {
		enabled bool
		want    string
	}{{false, `"target_tps": 0,`}, {true, `"target_tps": 2.5,`}} {
		cfg := createDefaultConfig().(*Config)
		cfg.RateByService.Enabled, cfg.RateByService.TargetTracesPerSecond = tt.enabled, 2.5
		body, _, err := buildInfo(cfg)
		require.NoError(t, err)
		assert.Contains(t, string(body), tt.want)
	}
}

// TestRateByServiceConfig loads the section and checks Validate's errors as the collector reports
// them (the section's key first).
func TestRateByServiceConfig(t *testing.T) {
	cm, err := confmaptest.LoadConf(filepath.Join("testdata", "rate_by_service.yaml"))
	require.NoError(t, err)
	load := func(name string) *Config {
		cfg := createDefaultConfig().(*Config)
		sub, err := cm.Sub(component.NewIDWithName(metadata.Type, name).String())
		require.NoError(t, err)
		require.NoError(t, sub.Unmarshal(cfg))
		return cfg
	}
	on := load("rates")
	require.NoError(t, xconfmap.Validate(on))
	assert.Equal(t, ratesampler.Config{Enabled: true, TargetTracesPerSecond: 5, MaxServices: 100}, on.RateByService)
	off := load("rates_off")
	require.NoError(t, xconfmap.Validate(off))
	assert.Equal(t, ratesampler.Config{TargetTracesPerSecond: 20, MaxServices: 5000}, off.RateByService)

	bad := createDefaultConfig().(*Config)
	bad.RateByService.TargetTracesPerSecond = 0
	assert.EqualError(t, xconfmap.Validate(bad), "rate_by_service: target_traces_per_second must be greater than 0 and at most 1000000, got 0")
}
