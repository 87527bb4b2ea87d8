package apmdocsconnector

import (
	"context"
	"testing"
	"time"

	"github.com/elastic/apm-data/model/modelpb"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/tracegate/tracegate/connector/apmdocsconnector/internal/metadatatest"
	"github.com/tracegate/tracegate/internal/apmevent"
)

func agentTransaction(id string, sampled bool) *modelpb.APMEvent {
	return &modelpb.APMEvent{
		Timestamp: uint64(t0.UnixNano()),
		Service:   &modelpb.Service{Name: "shop", Environment: "prod"},
		Agent:     &modelpb.Agent{Name: "nodejs", Version: "4.8.0"},
		Trace:     &modelpb.Trace{Id: "abc"},
		Event:     &modelpb.Event{Outcome: "success", Duration: uint64(5 * time.Millisecond)},
		Transaction: &modelpb.Transaction{
			Id: id, Name: "GET /", Type: "request", Sampled: sampled,
			RepresentativeCount: 1,
		},
		Span: &modelpb.Span{Id: id},
	}
}

func TestAgentEventsAndUnsampledTransactions(t *testing.T) {
	tel := componenttest.NewTelemetry()
	sink := &consumertest.LogsSink{}
	_, lg, _ := startSidesWith(t, metadatatest.NewSettings(tel), createDefaultConfig(), sink)
	ld := plog.NewLogs()
	require.NoError(t, apmevent.Append(ld, []*modelpb.APMEvent{agentTransaction("a1", true), agentTransaction("a2", false)}))
	// An ordinary OTLP log record in the same batch.
	rl := ld.ResourceLogs().AppendEmpty()
	rl.Resource().Attributes().PutStr("service.name", "shop")
	rec := rl.ScopeLogs().AppendEmpty().LogRecords().AppendEmpty()
	rec.Body().SetStr("order placed")
	rec.SetTimestamp(pcommon.NewTimestampFromTime(t0))
	require.NoError(t, lg.ConsumeLogs(context.Background(), ld))

	docs := byIndex(docsOf(t, sink.AllLogs()))
	require.Len(t, docs["traces-apm-default"], 1, "the unsampled transaction is left out")
	assert.Equal(t, "a1", field(docs["traces-apm-default"][0].body, "transaction", "id"))
	assert.Equal(t, "nodejs", field(docs["traces-apm-default"][0].body, "agent", "name"))
	require.Len(t, docs["logs-apm.app.shop-default"], 1)
	assert.Equal(t, "order placed", docs["logs-apm.app.shop-default"][0].body["message"])

	// Both transactions were counted before the unsampled one was left out.
	a := lg.apmDocs
	sink.Reset()
	a.writer.write(context.Background(), a.agg.HarvestAll(t0), false)
	for _, d := range byIndex(docsOf(t, sink.AllLogs()))["metrics-apm.service_transaction.1m-default"] {
		assert.InDelta(t, 2.0, d.body["_doc_count"], 0)
	}
	metadatatest.AssertEqualConnectorApmdocsDroppedEvents(t, tel, []metricdata.DataPoint[int64]{
		{Value: 1, Attributes: reasonAttrs(reasonUnsampled)},
	}, metricdatatestIgnore()...)
}

func TestUndecodableEventRecordsAreCounted(t *testing.T) {
	tel := componenttest.NewTelemetry()
	sink := &consumertest.LogsSink{}
	_, lg, _ := startSidesWith(t, metadatatest.NewSettings(tel), createDefaultConfig(), sink)
	ld := plog.NewLogs()
	sl := ld.ResourceLogs().AppendEmpty().ScopeLogs().AppendEmpty()
	sl.Scope().SetName(apmevent.ScopeName)
	sl.LogRecords().AppendEmpty().Body().SetStr("not an event")
	require.NoError(t, lg.ConsumeLogs(context.Background(), ld))
	assert.Zero(t, sink.LogRecordCount())
	metadatatest.AssertEqualConnectorApmdocsDroppedEvents(t, tel, []metricdata.DataPoint[int64]{
		{Value: 1, Attributes: reasonAttrs(reasonUnconvertible)},
	}, metricdatatestIgnore()...)
}

func TestApplicationMetrics(t *testing.T) {
	sink := &consumertest.LogsSink{}
	_, _, mt := startSides(t, createDefaultConfig(), sink)
	md := pmetric.NewMetrics()
	rm := md.ResourceMetrics().AppendEmpty()
	rm.Resource().Attributes().PutStr("service.name", "shop")
	g := rm.ScopeMetrics().AppendEmpty().Metrics().AppendEmpty()
	g.SetName("orders.open")
	dp := g.SetEmptyGauge().DataPoints().AppendEmpty()
	dp.SetIntValue(7)
	dp.SetTimestamp(pcommon.NewTimestampFromTime(t0))
	require.NoError(t, mt.ConsumeMetrics(context.Background(), md))
	docs := byIndex(docsOf(t, sink.AllLogs()))
	require.Len(t, docs["metrics-apm.app.shop-default"], 1)
	samples, ok := field(docs["metrics-apm.app.shop-default"][0].body, "metricset", "samples").([]any)
	require.True(t, ok)
	assert.Equal(t, map[string]any{"name": "orders.open", "type": "gauge", "value": 7.0}, samples[0])
}
