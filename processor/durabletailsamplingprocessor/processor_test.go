package durabletailsamplingprocessor

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/sdk/metric/metricdata/metricdatatest"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/tracegate/tracegate/processor/durabletailsamplingprocessor/internal/metadatatest"
	"github.com/tracegate/tracegate/processor/durabletailsamplingprocessor/internal/policy"
)

func TestDecidesWholeTracesAfterTheirLastSpan(t *testing.T) {
	sink := &recordingSink{}
	p := newTestProcessor(t, testConfig(errorsOnly), sink)
	ctx := context.Background()
	// Trace 1 fails in its second request; trace 2 never fails; trace 3 fails at once.
	require.NoError(t, p.ConsumeTraces(ctx, request("api", spanSpec{1, 0, false}, spanSpec{2, 0, false}, spanSpec{3, 0, true})))
	p.step(t0.Add(8 * time.Second))
	require.NoError(t, p.ConsumeTraces(ctx, request("db", spanSpec{1, 1, true}, spanSpec{2, 1, false})))
	assert.Empty(t, sink.kept(), "nothing is decided before the wait")

	p.step(t0.Add(10 * time.Second)) // trace 3's wait is over; traces 1 and 2 got a span at 8 s
	assert.Equal(t, map[pcommon.TraceID]int{traceID(3): 1}, sink.kept())

	p.step(t0.Add(18 * time.Second))
	assert.Equal(t, map[pcommon.TraceID]int{traceID(1): 2, traceID(3): 1}, sink.kept(), "kept whole, the other dropped")
	assert.Zero(t, p.gaugeTraces.Load())
	assert.Zero(t, p.gaugeHeld.Load(), "nothing is held once decided and passed on")
}

func TestMaxTraceWaitDecidesAnEndlessTrace(t *testing.T) {
	sink := &recordingSink{}
	cfg := testConfig(errorsOnly)
	cfg.MaxTraceWait = 30 * time.Second
	p := newTestProcessor(t, cfg, sink)
	for i := range 8 { // a span every 5 s: its wait after the last span never ends
		at := t0.Add(time.Duration(i) * 5 * time.Second)
		p.now = func() time.Time { return at }
		require.NoError(t, p.ConsumeTraces(context.Background(), request("api", spanSpec{1, byte(i), i == 0})))
		p.step(at)
		if i == 6 {
			assert.Equal(t, map[pcommon.TraceID]int{traceID(1): 7}, sink.kept(), "decided at 30 s with the spans it had")
		}
	}
	assert.Equal(t, map[pcommon.TraceID]int{traceID(1): 8}, sink.kept(), "the span at 35 s follows as a late span")
}

func TestLateSpansFollowTheDecision(t *testing.T) {
	sink := &recordingSink{}
	p := newTestProcessor(t, testConfig(errorsOnly), sink)
	ctx := context.Background()
	require.NoError(t, p.ConsumeTraces(ctx, request("api", spanSpec{1, 0, true}, spanSpec{2, 0, false})))
	p.step(t0.Add(10 * time.Second))
	require.Equal(t, map[pcommon.TraceID]int{traceID(1): 1}, sink.kept())

	// Late spans: trace 1's go on at once, trace 2's are dropped, trace 3 is new and waits.
	require.NoError(t, p.ConsumeTraces(ctx, request("db", spanSpec{1, 1, false}, spanSpec{2, 1, true}, spanSpec{3, 0, true})))
	assert.Equal(t, map[pcommon.TraceID]int{traceID(1): 2}, sink.kept())
	assert.EqualValues(t, 1, p.gaugeTraces.Load())

	// The decision is remembered for decision_cache.ttl only.
	p.step(t0.Add(10*time.Second + p.cfg.DecisionCache.TTL))
	require.NoError(t, p.ConsumeTraces(ctx, request("db", spanSpec{2, 2, false})))
	assert.EqualValues(t, 1, p.gaugeTraces.Load(), "trace 2 is pending again")
}

func TestRefusesWithARetryableErrorWhenFull(t *testing.T) {
	tests := []struct {
		name   string
		adjust func(*Config)
		reason string
	}{
		{"too many traces", func(c *Config) { c.NumTraces = 2 }, reasonTooManyTraces},
		{"memory", func(c *Config) { c.MaxPendingMiB = 1 }, reasonMemoryFull},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := testConfig(errorsOnly)
			tt.adjust(cfg)
			p := newTestProcessor(t, cfg, &recordingSink{})
			ctx := context.Background()
			var err error
			for i := 0; i < 200 && err == nil; i++ {
				big := request("api", spanSpec{byte(i), 0, false})
				big.ResourceSpans().At(0).Resource().Attributes().PutStr("padding", string(make([]byte, 16<<10)))
				err = p.ConsumeTraces(ctx, big)
			}
			require.Error(t, err)
			st, _ := status.FromError(err)
			assert.Equal(t, codes.ResourceExhausted, st.Code())
			assert.Contains(t, st.Message(), tt.reason)
			require.Len(t, st.Details(), 1)
			assert.IsType(t, &errdetails.RetryInfo{}, st.Details()[0], "OTLP/gRPC clients retry RESOURCE_EXHAUSTED only with a RetryInfo")
		})
	}
}

func TestRefusedDeliveryIsHeldAndRetried(t *testing.T) {
	sink := &recordingSink{refuse: errRefused}
	p := newTestProcessor(t, testConfig(errorsOnly), sink)
	require.NoError(t, p.ConsumeTraces(context.Background(), request("api", spanSpec{1, 0, true}, spanSpec{1, 1, false})))
	p.step(t0.Add(10 * time.Second))
	assert.Equal(t, 1, sink.refused)
	assert.Positive(t, p.gaugeHeld.Load(), "a refused trace stays held")

	p.step(t0.Add(10*time.Second + retryDelay/2))
	assert.Equal(t, 1, sink.refused, "not tried again before the pause")

	sink.setRefuse(nil)
	p.step(t0.Add(10*time.Second + retryDelay))
	assert.Equal(t, map[pcommon.TraceID]int{traceID(1): 2}, sink.kept())
	assert.Zero(t, p.gaugeHeld.Load())
}

func TestShutdownWithoutStorageDecidesEverything(t *testing.T) {
	sink := &recordingSink{}
	p := newTestProcessor(t, testConfig(errorsOnly), sink)
	require.NoError(t, p.ConsumeTraces(context.Background(), request("api", spanSpec{1, 0, true}, spanSpec{2, 0, false})))
	require.NoError(t, p.Shutdown(context.Background()))
	assert.Equal(t, map[pcommon.TraceID]int{traceID(1): 1}, sink.kept())
	err := p.ConsumeTraces(context.Background(), request("api", spanSpec{3, 0, true}))
	st, _ := status.FromError(err)
	assert.Equal(t, codes.Unavailable, st.Code(), "after shutdown: retryable, elsewhere")
}

func TestConcurrentRequestsWhileDeciding(t *testing.T) {
	sink := &recordingSink{}
	cfg := testConfig([]policy.Config{{SubConfig: policy.SubConfig{Name: "all", Type: policy.TypeAlwaysSample}}})
	cfg.DecisionWait = 20 * time.Millisecond
	cfg.MaxTraceWait = 20 * time.Millisecond
	p, err := newTailProcessor(processortestSettings(), cfg, sink)
	require.NoError(t, err)
	require.NoError(t, p.Start(context.Background(), nil))
	done := make(chan struct{})
	for g := range 4 {
		go func() {
			defer func() { done <- struct{}{} }()
			for i := range 50 {
				_ = p.ConsumeTraces(context.Background(), request("api", spanSpec{byte(g*50 + i), 0, false}, spanSpec{byte(g*50 + i), 1, false}))
			}
		}()
	}
	for range 4 {
		<-done
	}
	require.NoError(t, p.Shutdown(context.Background()))
	kept := sink.kept()
	assert.Len(t, kept, 200)
	for id, n := range kept {
		assert.Equal(t, 2, n, "trace %v whole", id)
	}
}

// Without storage, kept traces the next consumer still refuses at shutdown are counted as lost.
func TestShutdownCountsWhatCouldNotBePassedOn(t *testing.T) {
	sink := &recordingSink{refuse: errRefused}
	tel := componenttest.NewTelemetry()
	defer func() { require.NoError(t, tel.Shutdown(context.Background())) }()
	p, err := newTailProcessor(metadatatest.NewSettings(tel), testConfig(errorsOnly), sink)
	require.NoError(t, err)
	p.now = func() time.Time { return t0 }
	require.NoError(t, p.ConsumeTraces(context.Background(), request("api", spanSpec{1, 0, true}, spanSpec{1, 1, false}, spanSpec{2, 0, true})))
	require.NoError(t, p.Shutdown(context.Background()))
	assert.Equal(t, 1, sink.refused, "one delivery of both traces, refused")
	assert.Empty(t, sink.kept())
	metadatatest.AssertEqualProcessorDurableTailSamplingLostSpans(t, tel, []metricdata.DataPoint[int64]{
		{Value: 3, Attributes: attribute.NewSet(attribute.String("reason", "shutdown"))},
	}, metricdatatest.IgnoreTimestamp())
	metadatatest.AssertEqualProcessorDurableTailSamplingSpansDecided(t, tel, []metricdata.DataPoint[int64]{
		{Value: 3, Attributes: attribute.NewSet(attribute.String("decision", "kept"), attribute.String("policy", "errors"))},
	}, metricdatatest.IgnoreTimestamp())
}
