package apmdocsconnector

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/connector"
	"go.opentelemetry.io/collector/connector/connectortest"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/consumer/consumererror"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/tracegate/tracegate/connector/apmdocsconnector/internal/metadata"
	"github.com/tracegate/tracegate/connector/apmdocsconnector/internal/metadatatest"
)

// doc is one written document: where it goes, its id and its JSON as Elasticsearch would get it.
type doc struct {
	index, id string
	body      map[string]any
}

func docsOf(t *testing.T, all []plog.Logs) []doc {
	t.Helper()
	var out []doc
	for _, ld := range all {
		for i := 0; i < ld.ResourceLogs().Len(); i++ {
			sls := ld.ResourceLogs().At(i).ScopeLogs()
			for j := 0; j < sls.Len(); j++ {
				sl := sls.At(j)
				index, _ := sl.Scope().Attributes().Get(attrIndex)
				for k := 0; k < sl.LogRecords().Len(); k++ {
					r := sl.LogRecords().At(k)
					id, _ := r.Attributes().Get(attrDocumentID)
					var body map[string]any
					require.NoError(t, json.Unmarshal(r.Body().Bytes().AsRaw(), &body))
					out = append(out, doc{index: index.Str(), id: id.Str(), body: body})
				}
			}
		}
	}
	return out
}

// field reads a path of nested objects, whose keys may hold dots themselves, as apm-data writes
// some ("duration.histogram", "sum.us"): Elasticsearch reads either as the same path.
func field(m map[string]any, path ...string) any {
	if len(path) == 0 {
		return m
	}
	for n := len(path); n >= 1; n-- {
		v, ok := m[strings.Join(path[:n], ".")]
		if !ok {
			continue
		}
		if n == len(path) {
			return v
		}
		if o, ok := v.(map[string]any); ok {
			if got := field(o, path[n:]...); got != nil {
				return got
			}
		}
	}
	return nil
}

func startSides(t *testing.T, cfg *Config, sink consumer.Logs) (tracesSide, logsSide, metricsSide) {
	t.Helper()
	return startSidesWith(t, connectortest.NewNopSettings(metadata.Type), cfg, sink)
}

// startSidesWith starts the three sides of one instance; the test's cleanup shuts them down.
func startSidesWith(t *testing.T, set connector.Settings, cfg *Config, sink consumer.Logs) (tracesSide, logsSide, metricsSide) {
	t.Helper()
	ctx := context.Background()
	tr, err := createTracesToLogs(ctx, set, cfg, sink)
	require.NoError(t, err)
	lg, err := createLogsToLogs(ctx, set, cfg, sink)
	require.NoError(t, err)
	mt, err := createMetricsToLogs(ctx, set, cfg, sink)
	require.NoError(t, err)
	for _, c := range []component.Component{tr, lg, mt} {
		require.NoError(t, c.Start(ctx, componenttest.NewNopHost()))
		t.Cleanup(func() { require.NoError(t, c.Shutdown(context.Background())) })
	}
	return tr.(tracesSide), lg.(logsSide), mt.(metricsSide)
}

// httpTrace: a server span with an exception event and a database client span under it.
func httpTrace(start time.Time) ptrace.Traces {
	td := ptrace.NewTraces()
	rs := td.ResourceSpans().AppendEmpty()
	rs.Resource().Attributes().PutStr("service.name", "checkout")
	rs.Resource().Attributes().PutStr("deployment.environment", "production")
	rs.Resource().Attributes().PutStr("telemetry.sdk.language", "go")
	rs.Resource().Attributes().PutStr("telemetry.sdk.name", "opentelemetry")
	spans := rs.ScopeSpans().AppendEmpty().Spans()
	root := spans.AppendEmpty()
	root.SetTraceID(pcommon.TraceID{1, 2, 3})
	root.SetSpanID(pcommon.SpanID{1})
	root.SetName("GET /cart")
	root.SetKind(ptrace.SpanKindServer)
	root.SetStartTimestamp(pcommon.NewTimestampFromTime(start))
	root.SetEndTimestamp(pcommon.NewTimestampFromTime(start.Add(120 * time.Millisecond)))
	root.Attributes().PutStr("http.request.method", "GET")
	root.Attributes().PutInt("http.response.status_code", 500)
	root.Status().SetCode(ptrace.StatusCodeError)
	ev := root.Events().AppendEmpty()
	ev.SetName("exception")
	ev.SetTimestamp(pcommon.NewTimestampFromTime(start.Add(100 * time.Millisecond)))
	ev.Attributes().PutStr("exception.type", "CartError")
	ev.Attributes().PutStr("exception.message", "cart is gone")
	db := spans.AppendEmpty()
	db.SetTraceID(root.TraceID())
	db.SetSpanID(pcommon.SpanID{2})
	db.SetParentSpanID(root.SpanID())
	db.SetName("SELECT carts")
	db.SetKind(ptrace.SpanKindClient)
	db.SetStartTimestamp(pcommon.NewTimestampFromTime(start.Add(10 * time.Millisecond)))
	db.SetEndTimestamp(pcommon.NewTimestampFromTime(start.Add(30 * time.Millisecond)))
	db.Attributes().PutStr("db.system", "postgresql")
	db.Attributes().PutStr("db.statement", "SELECT * FROM carts")
	return td
}

func byIndex(docs []doc) map[string][]doc {
	out := map[string][]doc{}
	for _, d := range docs {
		out[d.index] = append(out[d.index], d)
	}
	return out
}

func TestTracesBecomeAPMServerDocuments(t *testing.T) {
	sink := &consumertest.LogsSink{}
	tr, _, _ := startSides(t, createDefaultConfig(), sink)
	start := time.Date(2026, 12, 6, 10, 0, 5, 0, time.UTC)
	require.NoError(t, tr.ConsumeTraces(context.Background(), httpTrace(start)))
	docs := byIndex(docsOf(t, sink.AllLogs()))
	require.Len(t, docs["traces-apm-default"], 2)
	require.Len(t, docs["logs-apm.error-default"], 1)

	tx, span := docs["traces-apm-default"][0].body, docs["traces-apm-default"][1].body
	for path, want := range map[string]any{
		"trace.id": "01020300000000000000000000000000", "transaction.id": "0100000000000000",
		"transaction.name": "GET /cart", "transaction.type": "request", "transaction.result": "HTTP 5xx",
		"transaction.sampled": true, "event.outcome": "failure", "event.duration": 120e6,
		"service.name": "checkout", "service.environment": "production", "agent.name": "opentelemetry/go",
		"timestamp.us": float64(start.UnixMicro()), "observer.type": "tracegate", "data_stream.dataset": "apm",
	} {
		assert.Equal(t, want, field(tx, strings.Split(path, ".")...), path)
	}
	assert.Nil(t, field(tx, "parent", "id"), "a root has no parent")
	for path, want := range map[string]any{
		"parent.id": "0100000000000000", "span.id": "0200000000000000", "span.type": "db",
		"span.subtype": "postgresql", "span.destination.service.resource": "postgresql", "event.duration": 20e6,
	} {
		assert.Equal(t, want, field(span, strings.Split(path, ".")...), path)
	}
	errDoc := docs["logs-apm.error-default"][0].body
	assert.NotEmpty(t, field(errDoc, "error", "grouping_key"))
	exceptions, ok := field(errDoc, "error", "exception").([]any)
	require.True(t, ok, "error.exception is a list")
	assert.Equal(t, "cart is gone", exceptions[0].(map[string]any)["message"])
	assert.Equal(t, "0100000000000000", field(errDoc, "transaction", "id"))
	assert.Equal(t, "0100000000000000", field(errDoc, "parent", "id"))
}

func TestDocumentIDs(t *testing.T) {
	start := time.Date(2026, 12, 6, 10, 0, 5, 0, time.UTC)
	ids := func(cfg *Config) []string {
		sink := &consumertest.LogsSink{}
		tr, _, _ := startSides(t, cfg, sink)
		require.NoError(t, tr.ConsumeTraces(context.Background(), httpTrace(start)))
		var out []string
		for _, d := range docsOf(t, sink.AllLogs()) {
			out = append(out, d.id)
		}
		return out
	}
	first, again := ids(createDefaultConfig()), ids(createDefaultConfig())
	require.Len(t, first, 3)
	assert.Equal(t, first, again, "a copy sent again has the same ids: Elasticsearch refuses it (409)")
	assert.Len(t, map[string]bool{first[0]: true, first[1]: true, first[2]: true}, 3)
	for _, id := range first {
		assert.Len(t, id, 22)
	}
	off := createDefaultConfig()
	off.DocumentIDs = false
	assert.Equal(t, []string{"", "", ""}, ids(off))
}

func TestMetricsetsAfterTheWindow(t *testing.T) {
	cfg := createDefaultConfig()
	cfg.Aggregation.Intervals = []time.Duration{time.Second}
	cfg.Aggregation.Delay = 0
	sink := &consumertest.LogsSink{}
	tr, _, _ := startSides(t, cfg, sink)
	require.NoError(t, tr.ConsumeTraces(context.Background(), httpTrace(time.Now())))
	var metricsets map[string][]doc
	require.Eventually(t, func() bool {
		metricsets = byIndex(docsOf(t, sink.AllLogs()))
		return len(metricsets["metrics-apm.transaction.1s-default"]) > 0
	}, 5*time.Second, 50*time.Millisecond)
	tx := metricsets["metrics-apm.transaction.1s-default"][0].body
	assert.InDelta(t, 1.0, tx["_doc_count"], 0)
	assert.Equal(t, "transaction", field(tx, "metricset", "name"))
	assert.Equal(t, "1s", field(tx, "metricset", "interval"))
	assert.Equal(t, "checkout", field(tx, "service", "name"))
	assert.NotNil(t, field(tx, "transaction", "duration", "histogram", "values"))
	assert.Len(t, metricsets["metrics-apm.service_transaction.1s-default"], 1)
	assert.Len(t, metricsets["metrics-apm.service_destination.1s-default"], 1)
	assert.Len(t, metricsets["metrics-apm.service_summary.1s-default"], 1)
	assert.NotEmpty(t, metricsets["metrics-apm.transaction.1s-default"][0].id)
}

// refusingSink refuses every batch until accept is set.
type refusingSink struct {
	consumertest.LogsSink
	accept    bool
	permanent bool
}

func (s *refusingSink) ConsumeLogs(ctx context.Context, ld plog.Logs) error {
	if s.permanent {
		return consumererror.NewPermanent(errors.New("mapping conflict"))
	}
	if !s.accept {
		return errors.New("buffer full")
	}
	return s.LogsSink.ConsumeLogs(ctx, ld)
}

func TestMetricsetsHeldWhileRefused(t *testing.T) {
	tel := componenttest.NewTelemetry()
	cfg := createDefaultConfig()
	sink := &refusingSink{}
	tr, _, _ := startSidesWith(t, metadatatest.NewSettings(tel), cfg, sink)
	require.Error(t, tr.ConsumeTraces(context.Background(), httpTrace(t0)), "the refusal goes back to the client")
	a := tr.apmDocs
	a.writer.write(context.Background(), a.agg.Harvest(t0.Add(2*time.Hour), 0), false)
	assert.Zero(t, sink.LogRecordCount())
	sink.accept = true
	a.writer.write(context.Background(), nil, false)
	docs := byIndex(docsOf(t, sink.AllLogs()))
	assert.Len(t, docs["metrics-apm.service_summary.1m-default"], 1)
	assert.Len(t, docs["metrics-apm.service_summary.10m-default"], 1)
	assert.Len(t, docs["metrics-apm.service_summary.60m-default"], 1)

	sink.permanent = true
	require.Error(t, tr.ConsumeTraces(context.Background(), httpTrace(t0.Add(3*time.Hour))))
	a.writer.write(context.Background(), a.agg.HarvestAll(t0.Add(5*time.Hour)), false)
	// 4 metricsets a window (one of each kind), 3 intervals.
	metadatatest.AssertEqualConnectorApmdocsDroppedEvents(t, tel, []metricdata.DataPoint[int64]{
		{Value: 12, Attributes: reasonAttrs(reasonRefused)},
	}, metricdatatestIgnore()...)
}

var t0 = time.Date(2026, 12, 6, 10, 0, 0, 0, time.UTC)

// TestShutdownWritesOpenWindows: a clean shutdown writes every open window at once, through the
// sides' consumer, before the pipeline behind it stops.
func TestShutdownWritesOpenWindows(t *testing.T) {
	set := connectortest.NewNopSettings(metadata.Type)
	sink := &consumertest.LogsSink{}
	cfg := createDefaultConfig()
	ctx := context.Background()
	tr, err := createTracesToLogs(ctx, set, cfg, sink)
	require.NoError(t, err)
	lg, err := createLogsToLogs(ctx, set, cfg, sink)
	require.NoError(t, err)
	for _, c := range []component.Component{tr, lg} {
		require.NoError(t, c.Start(ctx, componenttest.NewNopHost()))
	}
	require.NoError(t, tr.(tracesSide).ConsumeTraces(ctx, httpTrace(time.Now())))
	require.NoError(t, tr.Shutdown(ctx))
	assert.Empty(t, byIndex(docsOf(t, sink.AllLogs()))["metrics-apm.service_summary.1m-default"], "another side is still up")
	require.NoError(t, lg.Shutdown(ctx))
	docs := byIndex(docsOf(t, sink.AllLogs()))
	for _, interval := range []string{"1m", "10m", "60m"} {
		assert.Len(t, docs["metrics-apm.service_summary."+interval+"-default"], 1, interval)
		assert.Len(t, docs["metrics-apm.transaction."+interval+"-default"], 1, interval)
	}
}
