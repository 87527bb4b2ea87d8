package elasticsearchdocumentsexporter

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer/consumererror"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/sdk/metric/metricdata/metricdatatest"

	"github.com/tracegate/tracegate/exporter/elasticsearchdocumentsexporter/internal/metadatatest"
	"github.com/tracegate/tracegate/internal/testbed/esstandin"
)

// spans: two scopes of n spans each with an id (trace id byte 1 = scope, span id byte 1 = span),
// the first span of each with one event.
func spans(n int) ptrace.Traces {
	td := ptrace.NewTraces()
	rs := td.ResourceSpans().AppendEmpty()
	rs.Resource().Attributes().PutStr("service.name", "checkout")
	for sc := range 2 {
		ss := rs.ScopeSpans().AppendEmpty()
		ss.Scope().SetName("lib")
		ss.Scope().Attributes().PutStr("elastic.mapping.mode", "otel")
		for i := range n {
			s := ss.Spans().AppendEmpty()
			s.SetTraceID(pcommon.TraceID{byte(sc + 1)})
			s.SetSpanID(pcommon.SpanID{byte(i + 1)})
			s.SetName("GET /cart")
			s.SetStartTimestamp(1_765_000_000_000_000_000)
			s.SetEndTimestamp(1_765_000_000_100_000_000)
			s.Attributes().PutStr(attrDocumentID, s.TraceID().String()+s.SpanID().String())
			if i == 0 {
				s.Events().AppendEmpty().SetName("exception")
			}
		}
	}
	return td
}

func TestSpansStored(t *testing.T) {
	s := startVersion(t, "9.2.0")
	td := spans(3)
	require.NoError(t, s.exp.consumeTraces(context.Background(), td))
	docs := s.es.Documents()
	require.Len(t, docs, 8, "6 spans and 2 span events")
	var spanDocs int
	for _, d := range docs {
		var doc map[string]any
		require.NoError(t, json.Unmarshal(d.Source, &doc))
		switch d.Index {
		case "traces-generic.otel-default":
			spanDocs++
			assert.Equal(t, doc["trace_id"].(string)+doc["span_id"].(string), d.ID)
			assert.Equal(t, map[string]any{"service.name": "checkout"}, doc["resource"].(map[string]any)["attributes"])
		case "logs-generic.otel-default":
			assert.Equal(t, "exception", doc["event_name"])
		default:
			t.Errorf("document in %s", d.Index)
		}
	}
	assert.Equal(t, 6, spanDocs)
	// Again: the spans are copies (409), the events without an id are stored twice, as the
	// contrib exporter stores them.
	require.NoError(t, s.exp.consumeTraces(context.Background(), td))
	metadatatest.AssertEqualExporterElasticsearchDocumentsDocuments(t, s.tel, []metricdata.DataPoint[int64]{
		outcome("stored", 10), outcome("duplicate", 6),
	}, metricdatatest.IgnoreTimestamp())
	assert.Equal(t, map[string]uint64{"traces": 2}, bulksTimed(t, s.tel))
}

// bulksTimed is how many bulk requests the duration histogram holds, by signal.
func bulksTimed(t *testing.T, tel *componenttest.Telemetry) map[string]uint64 {
	t.Helper()
	m, err := tel.GetMetric("otelcol.exporter.elasticsearch_documents.bulk.duration")
	require.NoError(t, err)
	counts := map[string]uint64{}
	for _, dp := range m.Data.(metricdata.Histogram[float64]).DataPoints {
		signal, _ := dp.Attributes.Value("signal")
		counts[signal.AsString()] += dp.Count
		assert.Positive(t, dp.Sum)
	}
	return counts
}

func TestRetryableSpansComeBack(t *testing.T) {
	s := startVersion(t, "9.2.0")
	require.NoError(t, s.es.SetFaults(esstandin.Faults{ItemTooManyRequestsFraction: 1}))
	err := s.exp.consumeTraces(context.Background(), spans(2))
	require.Error(t, err)
	assert.False(t, consumererror.IsPermanent(err), "a 429 is retried")
	var again consumererror.Traces
	require.ErrorAs(t, err, &again)
	// Each span once, its event with it, under its own resource and scope.
	require.Equal(t, 4, again.Data().SpanCount())
	require.Equal(t, 2, again.Data().ResourceSpans().Len())
	assert.Equal(t, 1, again.Data().ResourceSpans().At(0).ScopeSpans().At(0).Spans().At(0).Events().Len())
	require.NoError(t, s.es.SetFaults(esstandin.Faults{}))
	require.NoError(t, s.exp.consumeTraces(context.Background(), again.Data()))
	require.Len(t, s.es.Documents(), 6)
	metadatatest.AssertEqualExporterElasticsearchDocumentsDocuments(t, s.tel, []metricdata.DataPoint[int64]{
		outcome("retried", 6), outcome("stored", 6),
	}, metricdatatest.IgnoreTimestamp())
}

func TestSpansOfAnotherMappingRefused(t *testing.T) {
	s := startVersion(t, "9.2.0")
	td := spans(2)
	td.ResourceSpans().At(0).ScopeSpans().At(1).Scope().Attributes().PutStr("elastic.mapping.mode", "ecs")
	require.NoError(t, s.exp.consumeTraces(context.Background(), td))
	assert.Len(t, s.es.Documents(), 3, "the otel scope's 2 spans and 1 event")
	metadatatest.AssertEqualExporterElasticsearchDocumentsDocuments(t, s.tel, []metricdata.DataPoint[int64]{
		outcome("refused", 2), outcome("stored", 3),
	}, metricdatatest.IgnoreTimestamp())
}

func TestSpansToElasticsearchDown(t *testing.T) {
	s := startVersion(t, "9.2.0")
	require.NoError(t, s.es.SetRefusing(true))
	err := s.exp.consumeTraces(context.Background(), spans(1))
	require.Error(t, err)
	assert.False(t, consumererror.IsPermanent(err))
}
