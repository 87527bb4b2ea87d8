package apmmetricsconnector

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/client"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/connector"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/sdk/metric/metricdata/metricdatatest"
	"go.uber.org/goleak"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/tracegate/tracegate/connector/apmmetricsconnector/internal/metadata"
	"github.com/tracegate/tracegate/connector/apmmetricsconnector/internal/metadatatest"
)

// recordingStore stands for the aggregation store: it keeps every flush and its client metadata.
type recordingStore struct {
	component.StartFunc
	component.ShutdownFunc
	mu      sync.Mutex
	refuse  error // when set, every flush is refused with it
	flushes []pmetric.Metrics
	tenants []string
}

func (s *recordingStore) Capabilities() consumer.Capabilities { return consumer.Capabilities{} }

func (s *recordingStore) ConsumeMetrics(ctx context.Context, md pmetric.Metrics) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.refuse != nil {
		return s.refuse
	}
	s.flushes = append(s.flushes, md)
	s.tenants = append(s.tenants, firstOf(client.FromContext(ctx).Metadata.Get("x-tenant")))
	return nil
}

func (s *recordingStore) all() []pmetric.Metrics {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]pmetric.Metrics(nil), s.flushes...)
}

func firstOf(vs []string) string {
	if len(vs) == 0 {
		return ""
	}
	return vs[0]
}

// clock is a settable time for the connector's window and flush decisions.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }

func (c *clock) set(t time.Time) { c.mu.Lock(); c.t = t; c.mu.Unlock() }

func newTestConnector(t *testing.T, cfg *Config) (*apmMetrics, *recordingStore, *clock) {
	t.Helper()
	store := &recordingStore{}
	set := connector.Settings{ID: component.NewID(metadata.Type), TelemetrySettings: componenttest.NewNopTelemetrySettings(), BuildInfo: component.NewDefaultBuildInfo()}
	c, err := newWithStore(set, cfg, store)
	require.NoError(t, err)
	c.sink.set(consumertest.NewNop()) // as the metrics to metrics side does (the store stands for what follows)
	clk := &clock{t: time.Date(2026, 12, 2, 10, 0, 10, 0, time.UTC)}
	c.now = clk.now
	return c, store, clk
}

// span is a span with the attributes Elastic's enrichment gives an entry or exit span.
func span(t *testing.T, td ptrace.Traces, service string, attrs map[string]any, mutate func(ptrace.Span)) {
	rs := td.ResourceSpans().AppendEmpty()
	rs.Resource().Attributes().PutStr("service.name", service)
	rs.Resource().Attributes().PutStr("agent.name", "opentelemetry/go")
	s := rs.ScopeSpans().AppendEmpty().Spans().AppendEmpty()
	s.SetName("GET /users/{id}")
	s.SetSpanID(pcommon.SpanID{1})
	start := time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)
	s.SetStartTimestamp(pcommon.NewTimestampFromTime(start))
	s.SetEndTimestamp(pcommon.NewTimestampFromTime(start.Add(1500 * time.Microsecond)))
	require.NoError(t, s.Attributes().FromRaw(attrs))
	if mutate != nil {
		mutate(s)
	}
}

var (
	transactionAttrs = map[string]any{
		"transaction.type": "request", "transaction.name": "GET /users/{id}", "transaction.result": "HTTP 2xx", "event.outcome": "success",
	}
	exitAttrs = map[string]any{
		"event.outcome": "success", "service.target.type": "http", "service.target.name": "inventory:8081",
		"span.destination.service.resource": "inventory:8081",
	}
)

func without(m map[string]any, key string) map[string]any {
	out := map[string]any{}
	for k, v := range m {
		if k != key {
			out[k] = v
		}
	}
	return out
}

// metricsOf names the metrics (by name and metricset.name) in md with their data point count.
func metricsOf(md pmetric.Metrics) map[string]int {
	out := map[string]int{}
	for _, rm := range md.ResourceMetrics().All() {
		for _, sm := range rm.ScopeMetrics().All() {
			for _, m := range sm.Metrics().All() {
				forEachDataPointAttrs(m, func(attrs pcommon.Map) {
					set, _ := attrs.Get("metricset.name")
					out[set.Str()+"/"+m.Name()]++
				})
			}
		}
	}
	return out
}

func TestMetricsPerSpan(t *testing.T) {
	defer goleak.VerifyNone(t)
	summary := map[string]int{"service_summary/service_summary": 1}
	transaction := map[string]int{
		"service_summary/service_summary":                    1,
		"service_transaction/transaction.duration.histogram": 1,
		"service_transaction/transaction.duration.summary":   1,
		"service_transaction/event.success_count":            1,
		"transaction/transaction.duration.histogram":         1,
		"transaction/transaction.duration.summary":           1,
	}
	for _, tt := range []struct {
		name  string
		attrs map[string]any
		want  map[string]int
	}{
		{"a span that is neither a transaction nor an exit: the service summary only", map[string]any{"span.type": "app"}, summary},
		{"a transaction", transactionAttrs, transaction},
		{"a transaction without a result: the same metrics (the result is optional)", without(transactionAttrs, "transaction.result"), transaction},
		{"a transaction without an outcome: no transaction group, no success count", without(transactionAttrs, "event.outcome"), map[string]int{
			"service_summary/service_summary":                    1,
			"service_transaction/transaction.duration.histogram": 1,
			"service_transaction/transaction.duration.summary":   1,
		}},
		{"no transaction.type: no transaction metrics", without(transactionAttrs, "transaction.type"), summary},
		{"an exit span: the destination metrics", exitAttrs, map[string]int{
			"service_summary/service_summary":                                   1,
			"service_destination/span.destination.service.response_time.sum.us": 1,
			"service_destination/span.destination.service.response_time.count":  1,
		}},
		{"an exit span without a target name: no destination", without(exitAttrs, "service.target.name"), summary},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c, store, _ := newTestConnector(t, createDefaultConfig())
			require.NoError(t, c.Start(t.Context(), componenttest.NewNopHost()))
			td := ptrace.NewTraces()
			span(t, td, "checkout", tt.attrs, nil)
			c.countTraces(t.Context(), td)
			require.NoError(t, c.Shutdown(t.Context()))
			flushes := store.all()
			require.Len(t, flushes, 1)
			assert.Equal(t, tt.want, metricsOf(flushes[0]))
		})
	}
}

// value finds metric name of metricset set in md and returns get of it.
func value[T any](t *testing.T, md pmetric.Metrics, set, name string, get func(pmetric.Metric) T) T {
	t.Helper()
	var found pmetric.Metric
	ok := false
	for _, rm := range md.ResourceMetrics().All() {
		for _, sm := range rm.ScopeMetrics().All() {
			for _, m := range sm.Metrics().All() {
				forEachDataPointAttrs(m, func(attrs pcommon.Map) {
					if v, _ := attrs.Get("metricset.name"); m.Name() == name && v.Str() == set {
						found, ok = m, true
					}
				})
			}
		}
	}
	require.True(t, ok, "no %s/%s", set, name)
	return get(found)
}

func histogramOf(m pmetric.Metric) pmetric.HistogramDataPoint {
	return m.Histogram().DataPoints().At(0)
}

// A span sampled at 50 % (an OpenTelemetry threshold in its tracestate) counts twice; a success
// adds 1 per count to event.success_count, so that sum / value_count stays the success rate.
// An Elastic APM agent's transaction sampled at 20 % stands for 5 (span.representative_count);
// an unsampled one whose agent reports its sample rate stands for none, as APM Server counts them.
func TestElasticRepresentativeCount(t *testing.T) {
	c, store, _ := newTestConnector(t, createDefaultConfig())
	require.NoError(t, c.Start(t.Context(), componenttest.NewNopHost()))
	td := ptrace.NewTraces()
	span(t, td, "checkout", transactionAttrs, func(s ptrace.Span) { s.Attributes().PutDouble("span.representative_count", 5) })
	span(t, td, "checkout", transactionAttrs, func(s ptrace.Span) { s.Attributes().PutDouble("span.representative_count", 0) })
	span(t, td, "checkout", transactionAttrs, func(ptrace.Span) {})
	c.countTraces(t.Context(), td)
	require.NoError(t, c.Shutdown(t.Context()))
	md := store.all()[0]
	sum := value(t, md, "service_summary", "service_summary", func(m pmetric.Metric) int64 { return m.Sum().DataPoints().At(0).IntValue() })
	assert.Equal(t, int64(6), sum, "5 for the sampled transaction, 0 for the unsampled one, 1 for the plain span")
}

func TestSampledSpansCountAsTheirAdjustedCount(t *testing.T) {
	c, store, _ := newTestConnector(t, createDefaultConfig())
	require.NoError(t, c.Start(t.Context(), componenttest.NewNopHost()))
	td := ptrace.NewTraces()
	span(t, td, "checkout", transactionAttrs, func(s ptrace.Span) { s.TraceState().FromRaw("ot=th:8") })
	span(t, td, "checkout", without(transactionAttrs, "event.outcome"), func(s ptrace.Span) {
		s.Attributes().PutStr("event.outcome", "failure")
	})
	c.countTraces(t.Context(), td)
	require.NoError(t, c.Shutdown(t.Context()))
	md := store.all()[0]
	sum := value(t, md, "service_summary", "service_summary", func(m pmetric.Metric) int64 { return m.Sum().DataPoints().At(0).IntValue() })
	assert.Equal(t, int64(3), sum, "service_summary: 2 for the sampled span, 1 for the other")
	success := value(t, md, "service_transaction", "event.success_count", histogramOf)
	assert.Equal(t, uint64(3), success.Count())
	assert.InDelta(t, 2.0, success.Sum(), 0, "two of three (adjusted) transactions succeeded")
	assert.Equal(t, []float64{1}, success.ExplicitBounds().AsRaw())
	// The sampled transaction's group (outcome success; the other span's is a group of its own).
	summary := value(t, md, "transaction", "transaction.duration.summary", func(m pmetric.Metric) pmetric.HistogramDataPoint {
		for _, dp := range m.Histogram().DataPoints().All() {
			if v, _ := dp.Attributes().Get("event.outcome"); v.Str() == "success" {
				return dp
			}
		}
		return pmetric.NewHistogramDataPoint()
	})
	assert.Equal(t, uint64(2), summary.Count())
	assert.InDelta(t, 3000.0, summary.Sum(), 0, "1,500 µs weighed by the adjusted count 2")
}

// A tracestate that cannot be parsed does not fail the request (EDOT's connector returns an
// error for the whole batch): the span counts once.
func TestInvalidTracestateCountsOnce(t *testing.T) {
	c, store, _ := newTestConnector(t, createDefaultConfig())
	require.NoError(t, c.Start(t.Context(), componenttest.NewNopHost()))
	td := ptrace.NewTraces()
	span(t, td, "checkout", transactionAttrs, func(s ptrace.Span) { s.TraceState().FromRaw("ot=th:zz,=,") })
	c.countTraces(t.Context(), td)
	require.NoError(t, c.Shutdown(t.Context()))
	sum := value(t, store.all()[0], "service_summary", "service_summary", func(m pmetric.Metric) int64 { return m.Sum().DataPoints().At(0).IntValue() })
	assert.Equal(t, int64(1), sum)
}

// Counting only reads: a read-only batch (the fan-out shares one between read-only consumers)
// is counted, and is unchanged.
func TestInputUnchanged(t *testing.T) {
	c, _, _ := newTestConnector(t, createDefaultConfig())
	require.NoError(t, c.Start(t.Context(), componenttest.NewNopHost()))
	td := ptrace.NewTraces()
	span(t, td, "checkout", transactionAttrs, nil)
	want := ptrace.NewTraces()
	td.CopyTo(want)
	td.MarkReadOnly()
	want.MarkReadOnly()
	c.countTraces(t.Context(), td)
	require.NoError(t, c.Shutdown(t.Context()))
	assert.Equal(t, want, td)
}

func TestFlushes(t *testing.T) {
	t.Run("a new window flushes what the last one summed, before the new items", func(t *testing.T) {
		c, store, clk := newTestConnector(t, createDefaultConfig())
		td := ptrace.NewTraces()
		span(t, td, "checkout", transactionAttrs, nil)
		c.countTraces(t.Context(), td)
		clk.set(clk.now().Add(time.Minute))
		c.countTraces(t.Context(), td)
		require.Len(t, store.all(), 1, "the first minute's sums, flushed when the second minute's span came")
		require.NoError(t, c.Shutdown(t.Context()))
		require.Len(t, store.all(), 2)
	})
	t.Run("max_pending_series flushes at once", func(t *testing.T) {
		cfg := createDefaultConfig()
		cfg.MaxPendingSeries = 7 // a transaction makes 6 series
		c, store, _ := newTestConnector(t, cfg)
		td := ptrace.NewTraces()
		span(t, td, "checkout", transactionAttrs, nil)
		c.countTraces(t.Context(), td)
		assert.Empty(t, store.all())
		span(t, td, "cart", transactionAttrs, nil)
		c.countTraces(t.Context(), td)
		assert.Len(t, store.all(), 1)
		require.NoError(t, c.Shutdown(t.Context()))
	})
	t.Run("a new window's first request over max_pending_series flushes both", func(t *testing.T) {
		cfg := createDefaultConfig()
		cfg.MaxPendingSeries = 7 // a transaction makes 6 series
		c, store, clk := newTestConnector(t, cfg)
		one := ptrace.NewTraces()
		span(t, one, "checkout", transactionAttrs, nil)
		c.countTraces(t.Context(), one)
		clk.set(clk.now().Add(time.Minute))
		two := ptrace.NewTraces()
		span(t, two, "checkout", transactionAttrs, nil)
		span(t, two, "cart", transactionAttrs, nil)
		c.countTraces(t.Context(), two)
		assert.Len(t, store.all(), 2, "the last window's sums, then the new window's 12 series")
		c.mu.Lock()
		assert.Zero(t, c.seriesLocked())
		c.mu.Unlock()
		require.NoError(t, c.Shutdown(t.Context()))
		assert.Len(t, store.all(), 2, "nothing left to flush at shutdown")
	})
	t.Run("the flush interval", func(t *testing.T) {
		defer goleak.VerifyNone(t)
		cfg := createDefaultConfig()
		cfg.FlushInterval = 10 * time.Millisecond
		c, store, _ := newTestConnector(t, cfg)
		c.now = time.Now
		require.NoError(t, c.Start(t.Context(), componenttest.NewNopHost()))
		td := ptrace.NewTraces()
		span(t, td, "checkout", transactionAttrs, nil)
		c.countTraces(t.Context(), td)
		require.Eventually(t, func() bool { return len(store.all()) == 1 }, 5*time.Second, 5*time.Millisecond)
		require.NoError(t, c.Shutdown(t.Context()))
		assert.Len(t, store.all(), 1, "nothing left to flush at shutdown")
	})
}

// A store that refuses a hand-over loses its counts: the flush, the series it held and an error
// line say so.
func TestStoreRefusalIsCountedAndLogged(t *testing.T) {
	tel := componenttest.NewTelemetry()
	defer func() { require.NoError(t, tel.Shutdown(context.Background())) }()
	core, logs := observer.New(zap.ErrorLevel)
	set := metadatatest.NewSettings(tel)
	set.ID, set.Logger = component.NewID(metadata.Type), zap.New(core)
	store := &recordingStore{refuse: errors.New("disk full")}
	c, err := newWithStore(set, createDefaultConfig(), store)
	require.NoError(t, err)
	c.sink.set(consumertest.NewNop())

	td := ptrace.NewTraces()
	span(t, td, "checkout", transactionAttrs, nil) // a transaction: 6 series
	c.countTraces(t.Context(), td)
	require.NoError(t, c.Shutdown(t.Context()))

	metadatatest.AssertEqualConnectorApmmetricsFlushFailures(t, tel, []metricdata.DataPoint[int64]{{Value: 1}}, metricdatatest.IgnoreTimestamp())
	metadatatest.AssertEqualConnectorApmmetricsLostSeries(t, tel, []metricdata.DataPoint[int64]{{Value: 6}}, metricdatatest.IgnoreTimestamp())
	lines := logs.FilterMessageSnippet("the aggregation store refused").All()
	require.Len(t, lines, 1)
	assert.Equal(t, int64(6), lines[0].ContextMap()["series"])
	assert.Equal(t, "disk full", lines[0].ContextMap()["error"])
}

// Client metadata named in aggregation.metadata_keys splits the sums: each flush carries its
// values, as the store reads them.
func TestMetadataKeysSplitTheSums(t *testing.T) {
	cfg := createDefaultConfig()
	cfg.Aggregation.MetadataKeys = []string{"X-Tenant"}
	c, store, _ := newTestConnector(t, cfg)
	for _, tenant := range []string{"a", "b", "a"} {
		ctx := client.NewContext(t.Context(), client.Info{Metadata: client.NewMetadata(map[string][]string{"X-Tenant": {tenant}})})
		td := ptrace.NewTraces()
		span(t, td, "checkout", transactionAttrs, nil)
		c.countTraces(ctx, td)
	}
	require.NoError(t, c.Shutdown(t.Context()))
	require.Len(t, store.all(), 2)
	assert.ElementsMatch(t, []string{"a", "b"}, store.tenants)
	for i, md := range store.all() {
		sum := value(t, md, "service_summary", "service_summary", func(m pmetric.Metric) int64 { return m.Sum().DataPoints().At(0).IntValue() })
		want := map[string]int64{"a": 2, "b": 1}[store.tenants[i]]
		assert.Equal(t, want, sum, "tenant %s", store.tenants[i])
	}
}

// The traces, logs and metrics sides of one component share one store and one set of sums.
func TestSidesShareOneInstance(t *testing.T) {
	f := NewFactory()
	cfg := f.CreateDefaultConfig()
	set := connector.Settings{ID: component.NewID(metadata.Type), TelemetrySettings: componenttest.NewNopTelemetrySettings(), BuildInfo: component.NewDefaultBuildInfo()}
	tr, err := f.CreateTracesToTraces(t.Context(), set, cfg, consumertest.NewNop())
	require.NoError(t, err)
	lg, err := f.CreateLogsToLogs(t.Context(), set, cfg, consumertest.NewNop())
	require.NoError(t, err)
	mt, err := f.CreateMetricsToMetrics(t.Context(), set, cfg, consumertest.NewNop())
	require.NoError(t, err)
	assert.Same(t, tr.(*tracesForwarder).apmMetrics, lg.(*logsForwarder).apmMetrics)
	assert.Same(t, tr.(*tracesForwarder).apmMetrics, mt.(*metricsForwarder).apmMetrics)
	for _, c := range []component.Component{tr, lg, mt} {
		require.NoError(t, c.Shutdown(t.Context()))
	}
	again, err := f.CreateTracesToTraces(t.Context(), set, cfg, consumertest.NewNop())
	require.NoError(t, err)
	assert.NotSame(t, tr.(*tracesForwarder).apmMetrics, again.(*tracesForwarder).apmMetrics, "a new graph (a reload) builds a new instance")
	require.NoError(t, again.Shutdown(t.Context()))
}

func TestUntilNextFlush(t *testing.T) {
	base := time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)
	for _, tt := range []struct {
		now   time.Duration // after base
		every time.Duration
		want  time.Duration
	}{
		{0, time.Second, 980 * time.Millisecond},
		{500 * time.Millisecond, time.Second, 480 * time.Millisecond},
		{980 * time.Millisecond, time.Second, time.Second}, // just flushed: the next second's
		{990 * time.Millisecond, time.Second, 990 * time.Millisecond},
		{0, 50 * time.Millisecond, 45 * time.Millisecond}, // a tenth of a short interval
	} {
		assert.Equal(t, tt.want, untilNextFlush(base.Add(tt.now), tt.every), "now +%v, every %v", tt.now, tt.every)
	}
}

// forEachDataPointAttrs calls f with the attributes of each of m's data points.
func forEachDataPointAttrs(m pmetric.Metric, f func(pcommon.Map)) {
	switch m.Type() {
	case pmetric.MetricTypeGauge:
		for _, dp := range m.Gauge().DataPoints().All() {
			f(dp.Attributes())
		}
	case pmetric.MetricTypeSum:
		for _, dp := range m.Sum().DataPoints().All() {
			f(dp.Attributes())
		}
	case pmetric.MetricTypeHistogram:
		for _, dp := range m.Histogram().DataPoints().All() {
			f(dp.Attributes())
		}
	case pmetric.MetricTypeExponentialHistogram:
		for _, dp := range m.ExponentialHistogram().DataPoints().All() {
			f(dp.Attributes())
		}
	case pmetric.MetricTypeSummary:
		for _, dp := range m.Summary().DataPoints().All() {
			f(dp.Attributes())
		}
	case pmetric.MetricTypeEmpty:
	}
}
