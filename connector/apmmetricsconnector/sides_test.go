package apmmetricsconnector

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/connector"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/consumer/consumererror"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/sdk/metric/metricdata/metricdatatest"
	"go.uber.org/goleak"

	"github.com/tracegate/tracegate/connector/apmmetricsconnector/internal/metadata"
	"github.com/tracegate/tracegate/connector/apmmetricsconnector/internal/metadatatest"
)

// sides are the connector's sides a pipeline graph made, with their next consumers.
type sides struct {
	traces  connector.Traces
	logs    connector.Logs
	metrics connector.Metrics
	all     []component.Component
}

// makeSides creates the named sides of one connector; their output goes to the sinks.
func makeSides(t *testing.T, set connector.Settings, cfg component.Config, names []string,
	spans consumer.Traces, records consumer.Logs, out consumer.Metrics,
) sides {
	t.Helper()
	f := NewFactory()
	ctx := t.Context()
	var s sides
	for _, name := range names {
		var c component.Component
		var err error
		switch name {
		case tracesToTraces:
			s.traces, err = f.CreateTracesToTraces(ctx, set, cfg, spans)
			c = s.traces
		case logsToLogs:
			s.logs, err = f.CreateLogsToLogs(ctx, set, cfg, records)
			c = s.logs
		case metricsToMetrics:
			s.metrics, err = f.CreateMetricsToMetrics(ctx, set, cfg, out)
			c = s.metrics
		}
		require.NoError(t, err, name)
		s.all = append(s.all, c)
	}
	return s
}

func (s sides) start(t *testing.T) error {
	for _, c := range s.all {
		if err := c.Start(t.Context(), componenttest.NewNopHost()); err != nil {
			return err
		}
	}
	return nil
}

func (s sides) shutdown(t *testing.T) {
	for _, c := range s.all {
		require.NoError(t, c.Shutdown(t.Context()))
	}
}

// Start fails without a metrics to metrics side: the aggregated metrics would have nowhere to
// go. Each fitting set starts and stops twice, as a reload does (this replaces mdatagen's
// lifecycle test, which starts every side alone).
func TestSidesNeedTheMetricsSide(t *testing.T) {
	defer goleak.VerifyNone(t)
	for _, tt := range []struct {
		sides   []string
		wantErr error
	}{
		{[]string{tracesToTraces, logsToLogs, metricsToMetrics}, nil},
		{[]string{metricsToMetrics, tracesToTraces}, nil},
		{[]string{metricsToMetrics}, nil},
		{[]string{tracesToTraces}, errNoMetricsToMetrics},
		{[]string{logsToLogs}, errNoMetricsToMetrics},
		{[]string{tracesToTraces, logsToLogs}, errNoMetricsToMetrics},
	} {
		t.Run(strings.Join(tt.sides, ","), func(t *testing.T) {
			for range 2 {
				s := makeSides(t, connectorSettings(NewFactory()), createDefaultConfig(), tt.sides, new(consumertest.TracesSink), new(consumertest.LogsSink), new(consumertest.MetricsSink))
				require.ErrorIs(t, s.start(t), tt.wantErr)
				s.shutdown(t)
			}
		})
	}
}

// The traces and logs sides count what they hand on unchanged (the same batch, not a copy), the
// metrics side hands application metrics on uncounted, and the aggregated metrics reach the
// metrics side's next consumer by the time that side is shut down (not before).
func TestSidesHandOnAndCount(t *testing.T) {
	defer goleak.VerifyNone(t)
	tel := componenttest.NewTelemetry()
	defer func() { require.NoError(t, tel.Shutdown(context.Background())) }()
	set := metadatatest.NewSettings(tel)
	set.ID = component.NewID(metadata.Type)
	spans, records, out := new(consumertest.TracesSink), new(consumertest.LogsSink), new(consumertest.MetricsSink)
	s := makeSides(t, set, createDefaultConfig(), []string{tracesToTraces, logsToLogs, metricsToMetrics}, spans, records, out)
	require.NoError(t, s.start(t))

	td := ptrace.NewTraces()
	span(t, td, "checkout", transactionAttrs, nil)
	require.NoError(t, s.traces.ConsumeTraces(t.Context(), td))
	ld := plog.NewLogs()
	rl := ld.ResourceLogs().AppendEmpty()
	rl.Resource().Attributes().PutStr("service.name", "checkout")
	rl.ScopeLogs().AppendEmpty().LogRecords().AppendEmpty().Body().SetStr("paid")
	require.NoError(t, s.logs.ConsumeLogs(t.Context(), ld))
	app := pmetric.NewMetrics()
	rm := app.ResourceMetrics().AppendEmpty()
	rm.Resource().Attributes().PutStr("service.name", "host-7")
	g := rm.ScopeMetrics().AppendEmpty().Metrics().AppendEmpty()
	g.SetName("system.cpu.utilization")
	g.SetEmptyGauge().DataPoints().AppendEmpty().SetDoubleValue(0.5)
	require.NoError(t, s.metrics.ConsumeMetrics(t.Context(), app))

	require.Len(t, spans.AllTraces(), 1)
	assert.Equal(t, td, spans.AllTraces()[0], "the batch itself is handed on")
	require.Len(t, records.AllLogs(), 1)
	assert.Equal(t, ld, records.AllLogs()[0])
	require.Len(t, out.AllMetrics(), 1, "application metrics are handed on at once, the aggregates at their window's end")
	assert.Equal(t, app, out.AllMetrics()[0])

	require.NoError(t, s.all[0].Shutdown(t.Context()))
	require.NoError(t, s.all[1].Shutdown(t.Context()))
	assert.Len(t, out.AllMetrics(), 1, "the last flush waits for the metrics side")
	require.NoError(t, s.all[2].Shutdown(t.Context()))
	assert.Equal(t, int64(2), summaryCount(out.AllMetrics()[1:], "checkout", "1m"), "the span and the log record")
	assert.Zero(t, summaryCount(out.AllMetrics()[1:], "host-7", "1m"), "application metrics are not counted")

	// Items a side is given after the last flush are still handed on, and reported as uncounted.
	late := ptrace.NewTraces()
	span(t, late, "checkout", transactionAttrs, nil)
	require.NoError(t, s.traces.ConsumeTraces(t.Context(), late))
	assert.Len(t, spans.AllTraces(), 2)
	metadatatest.AssertEqualConnectorApmmetricsUncountedItems(t, tel, []metricdata.DataPoint[int64]{{Value: 1}}, metricdatatest.IgnoreTimestamp())
	metadatatest.AssertEqualConnectorApmmetricsSpans(t, tel, []metricdata.DataPoint[int64]{{Value: 1}}, metricdatatest.IgnoreTimestamp())
}

// Items counted, then refused by the next consumer (a full buffer), are reported: the client's
// retry counts them again. Accepted ones and refusals of nothing counted are not.
func TestRefusedAfterCountingIsReported(t *testing.T) {
	tel := componenttest.NewTelemetry()
	defer func() { require.NoError(t, tel.Shutdown(context.Background())) }()
	set := metadatatest.NewSettings(tel)
	set.ID = component.NewID(metadata.Type)
	full := consumererror.NewRetryableError(errors.New("the buffer is full"))
	s := makeSides(t, set, createDefaultConfig(), []string{tracesToTraces, logsToLogs, metricsToMetrics},
		consumertest.NewErr(full), consumertest.NewErr(full), consumertest.NewNop())
	require.NoError(t, s.start(t))

	td := ptrace.NewTraces()
	span(t, td, "checkout", transactionAttrs, nil)
	span(t, td, "checkout", exitAttrs, nil)
	require.ErrorIs(t, s.traces.ConsumeTraces(t.Context(), td), full, "the refusal reaches the client")
	ld := plog.NewLogs()
	ld.ResourceLogs().AppendEmpty().ScopeLogs().AppendEmpty().LogRecords().AppendEmpty().Body().SetStr("paid")
	require.ErrorIs(t, s.logs.ConsumeLogs(t.Context(), ld), full)
	require.Error(t, s.traces.ConsumeTraces(t.Context(), ptrace.NewTraces()), "an empty batch: nothing counted, nothing reported")

	metadatatest.AssertEqualConnectorApmmetricsRefusedItems(t, tel, []metricdata.DataPoint[int64]{{Value: 3}}, metricdatatest.IgnoreTimestamp())
	metadatatest.AssertEqualConnectorApmmetricsSpans(t, tel, []metricdata.DataPoint[int64]{{Value: 2}}, metricdatatest.IgnoreTimestamp())
	s.shutdown(t)
}

// summaryCount sums the service_summary counts of service at interval in mds.
func summaryCount(mds []pmetric.Metrics, service, interval string) int64 {
	var n int64
	for _, md := range mds {
		for _, rm := range md.ResourceMetrics().All() {
			if v, _ := rm.Resource().Attributes().Get("service.name"); v.Str() != service {
				continue
			}
			for _, sm := range rm.ScopeMetrics().All() {
				for _, m := range sm.Metrics().All() {
					if m.Name() != "service_summary" {
						continue
					}
					for _, dp := range m.Sum().DataPoints().All() {
						if v, _ := dp.Attributes().Get("metricset.interval"); v.Str() == interval {
							n += dp.IntValue()
						}
					}
				}
			}
		}
	}
	return n
}

// A side has its next consumer's capabilities: a pipeline whose only exporter is the
// connector hands a buffer behind it the batch uncopied, and one with a second exporter copies
// it for the connector when the buffer keeps it.
func TestSideCapabilities(t *testing.T) {
	for _, mutates := range []bool{false, true} {
		next, err := consumer.NewTraces(func(context.Context, ptrace.Traces) error { return nil },
			consumer.WithCapabilities(consumer.Capabilities{MutatesData: mutates}))
		require.NoError(t, err)
		set := connectorSettings(NewFactory())
		c, err := NewFactory().CreateTracesToTraces(t.Context(), set, createDefaultConfig(), next)
		require.NoError(t, err)
		assert.Equal(t, mutates, c.Capabilities().MutatesData)
		require.NoError(t, c.Shutdown(t.Context()))
	}
}
