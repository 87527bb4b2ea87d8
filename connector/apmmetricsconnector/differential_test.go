package apmmetricsconnector

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/elastic/opentelemetry-collector-components/connector/elasticapmconnector"
	"github.com/elastic/opentelemetry-collector-components/processor/elasticapmprocessor"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/connector"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/processor"
	"go.uber.org/zap"

	"github.com/tracegate/tracegate/internal/testbed/esexportertest"
	"github.com/tracegate/tracegate/internal/testbed/esstandin"
)

// The differential test: the same enriched spans and log records through EDOT's elasticapm
// connector (v0.36.0) and through this one, each into the contrib elasticsearch exporter and a
// stand-in of its own, must leave the same documents. EDOT's connector is handed everything in
// one request: its documents depend on how the items were split into requests (its store
// coarsens a latency histogram with every request it merges, and resets event.success_count when
// a request's first transaction has another outcome than the last one's; README.md). This one is
// handed the same items in many small requests, and sums them all before its one flush. A
// document's @timestamp is the time of the last items merged into its window (EDOT: its request;
// here: the flush), so it is checked to lie in the run, not compared.

// buildTraces makes a varied set of traces with the conventions Elastic's processor reads:
// several services and resources, entry spans (server, consumer) and roots, exit spans (HTTP,
// database, messaging), failures, sampled spans (an OpenTelemetry threshold in the tracestate)
// and durations from microseconds to seconds.
func buildTraces(rng *rand.Rand, n int, sampled bool) ptrace.Traces {
	td := ptrace.NewTraces()
	services := []struct{ name, host, version string }{
		{"checkout", "host-a", "1.0.0"}, {"checkout", "host-b", "1.0.0"}, {"cart", "", "2.1"}, {"inventory", "host-c", ""},
	}
	for i := range n {
		svc := services[i%len(services)]
		rs := td.ResourceSpans().AppendEmpty()
		res := rs.Resource().Attributes()
		res.PutStr("service.name", svc.name)
		res.PutStr("deployment.environment", "prod")
		res.PutStr("telemetry.sdk.language", "go")
		res.PutStr("telemetry.sdk.name", "opentelemetry")
		res.PutStr("telemetry.sdk.version", "1.40.0")
		if svc.host != "" {
			res.PutStr("host.name", svc.host)
		}
		if svc.version != "" {
			res.PutStr("service.version", svc.version)
		}
		if i%5 == 0 {
			res.PutStr("k8s.pod.name", fmt.Sprintf("pod-%d", i%3))
			res.PutStr("tenant", "t1") // a custom resource attribute
		}
		spans := rs.ScopeSpans().AppendEmpty().Spans()
		addTrace(rng, spans, i, sampled)
	}
	return td
}

func addTrace(rng *rand.Rand, spans ptrace.SpanSlice, i int, sampled bool) {
	start := time.Now().Add(-time.Duration(rng.IntN(1000)) * time.Millisecond)
	traceID := pcommon.TraceID{byte(i), byte(i >> 8), 1, 2, 3}
	span := func(name string, kind ptrace.SpanKind, parent pcommon.SpanID, id byte, dur time.Duration) ptrace.Span {
		s := spans.AppendEmpty()
		s.SetTraceID(traceID)
		s.SetSpanID(pcommon.SpanID{id, byte(i), byte(i >> 8)})
		s.SetParentSpanID(parent)
		s.SetName(name)
		s.SetKind(kind)
		s.SetStartTimestamp(pcommon.NewTimestampFromTime(start))
		s.SetEndTimestamp(pcommon.NewTimestampFromTime(start.Add(dur)))
		return s
	}
	routes := []string{"/users/{id}", "/cart", "/items/{id}", "/health"}
	route := routes[rng.IntN(len(routes))]
	dur := time.Duration(rng.ExpFloat64() * float64(50*time.Millisecond))
	root := span("GET "+route, ptrace.SpanKindServer, pcommon.SpanID{}, 1, dur)
	ra := root.Attributes()
	ra.PutStr("http.request.method", "GET")
	ra.PutStr("http.route", route)
	status := []int64{200, 200, 200, 404, 500}[rng.IntN(5)]
	ra.PutInt("http.response.status_code", status)
	if status >= 500 {
		root.Status().SetCode(ptrace.StatusCodeError)
	}
	if sampled && i%7 == 0 {
		root.TraceState().FromRaw("ot=th:8") // sampled at 50 %: each span counts twice
	}
	if i%4 == 0 {
		ra.PutStr("customer.tier", "gold") // a custom span attribute
	}
	rootID := root.SpanID()
	switch i % 3 {
	case 0:
		c := span("GET", ptrace.SpanKindClient, rootID, 2, dur/2)
		c.Attributes().PutStr("http.request.method", "GET")
		c.Attributes().PutStr("server.address", "inventory.internal")
		c.Attributes().PutInt("server.port", 8081)
		c.Attributes().PutStr("url.full", "http://inventory.internal:8081/items/1")
		c.Attributes().PutInt("http.response.status_code", status)
	case 1:
		c := span("SELECT users", ptrace.SpanKindClient, rootID, 2, time.Duration(rng.IntN(2000))*time.Microsecond)
		c.Attributes().PutStr("db.system.name", "postgresql")
		c.Attributes().PutStr("db.namespace", "shop")
		c.Attributes().PutStr("db.operation.name", "SELECT")
		c.Attributes().PutStr("db.collection.name", "users")
	case 2:
		c := span("publish orders", ptrace.SpanKindProducer, rootID, 2, 300*time.Microsecond)
		c.Attributes().PutStr("messaging.system", "kafka")
		c.Attributes().PutStr("messaging.destination.name", "orders")
		c.Attributes().PutStr("messaging.operation.type", "publish")
		consumer := span("process orders", ptrace.SpanKindConsumer, c.SpanID(), 3, time.Duration(rng.IntN(3))*time.Second)
		consumer.Attributes().PutStr("messaging.system", "kafka")
		consumer.Attributes().PutStr("messaging.destination.name", "orders")
	}
	internal := span("render", ptrace.SpanKindInternal, rootID, 4, time.Duration(rng.IntN(500))*time.Microsecond)
	if i%6 == 0 {
		internal.Status().SetCode(ptrace.StatusCodeError)
	}
}

func buildLogs(n int) plog.Logs {
	ld := plog.NewLogs()
	for i := range n {
		rl := ld.ResourceLogs().AppendEmpty()
		rl.Resource().Attributes().PutStr("service.name", []string{"checkout", "cart", "batch-job"}[i%3])
		lr := rl.ScopeLogs().AppendEmpty().LogRecords().AppendEmpty()
		lr.Body().SetStr("log line")
		lr.SetTimestamp(pcommon.NewTimestampFromTime(time.Now()))
	}
	return ld
}

// enrich runs Elastic's APM processor over td, as configs/elasticsearch/apm.yaml does.
func enrich(tb testing.TB, td ptrace.Traces) ptrace.Traces {
	tb.Helper()
	f := elasticapmprocessor.NewFactory()
	sink := new(consumertest.TracesSink)
	p, err := f.CreateTraces(tb.Context(), processor.Settings{
		ID: component.NewID(f.Type()), TelemetrySettings: componenttest.NewNopTelemetrySettings(), BuildInfo: component.NewDefaultBuildInfo(),
	}, f.CreateDefaultConfig(), sink)
	require.NoError(tb, err)
	require.NoError(tb, p.Start(tb.Context(), componenttest.NewNopHost()))
	require.NoError(tb, p.ConsumeTraces(tb.Context(), td))
	require.NoError(tb, p.Shutdown(tb.Context()))
	return sink.AllTraces()[0]
}

// splitTraces cuts td into requests of 1 to 4 resources.
func splitTraces(rng *rand.Rand, td ptrace.Traces) []ptrace.Traces {
	var out []ptrace.Traces
	rss := td.ResourceSpans()
	for i := 0; i < rss.Len(); {
		req := ptrace.NewTraces()
		for n := 1 + rng.IntN(4); n > 0 && i < rss.Len(); n, i = n-1, i+1 {
			rss.At(i).CopyTo(req.ResourceSpans().AppendEmpty())
		}
		out = append(out, req)
	}
	return out
}

type connectorSides struct {
	traces connector.Traces
	logs   connector.Logs
	all    []component.Component
}

func differentialSettings(f connector.Factory) connector.Settings {
	ts := componenttest.NewNopTelemetrySettings()
	ts.Resource.Attributes().PutStr("service.instance.id", "collector-1")
	return connector.Settings{ID: component.NewID(f.Type()), TelemetrySettings: ts, BuildInfo: component.NewDefaultBuildInfo()}
}

// startEDOT starts EDOT's connector as its pipelines use it: traces and logs end in it.
func startEDOT(t *testing.T, f connector.Factory, cfg component.Config, next consumer.Metrics) connectorSides {
	t.Helper()
	set := differentialSettings(f)
	tr, err := f.CreateTracesToMetrics(t.Context(), set, cfg, next)
	require.NoError(t, err)
	lg, err := f.CreateLogsToMetrics(t.Context(), set, cfg, next)
	require.NoError(t, err)
	return startAll(t, connectorSides{traces: tr, logs: lg, all: []component.Component{tr, lg}})
}

// startOurs starts this connector's three sides; the spans and records it hands on are dropped.
func startOurs(t *testing.T, f connector.Factory, cfg component.Config, next consumer.Metrics) connectorSides {
	t.Helper()
	set := differentialSettings(f)
	tr, err := f.CreateTracesToTraces(t.Context(), set, cfg, consumertest.NewNop())
	require.NoError(t, err)
	lg, err := f.CreateLogsToLogs(t.Context(), set, cfg, consumertest.NewNop())
	require.NoError(t, err)
	mt, err := f.CreateMetricsToMetrics(t.Context(), set, cfg, next)
	require.NoError(t, err)
	return startAll(t, connectorSides{traces: tr, logs: lg, all: []component.Component{tr, lg, mt}})
}

func startAll(t *testing.T, s connectorSides) connectorSides {
	t.Helper()
	for _, c := range s.all {
		require.NoError(t, c.Start(t.Context(), componenttest.NewNopHost()))
	}
	return s
}

func (s connectorSides) shutdown(t *testing.T) {
	t.Helper()
	for _, c := range s.all {
		require.NoError(t, c.Shutdown(t.Context()))
	}
}

// normalized is a stand-in's documents as sorted JSON, @timestamp taken out (and checked).
func normalized(t *testing.T, es *esstandin.Server, from, to time.Time) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	for _, d := range es.Documents() {
		var doc map[string]any
		require.NoError(t, json.Unmarshal(d.Source, &doc))
		ms, ok := doc["@timestamp"].(float64) // epoch milliseconds
		require.True(t, ok, "%s", d.Source)
		ts := time.UnixMilli(int64(ms))
		assert.False(t, ts.Before(from.Truncate(time.Millisecond)) || ts.After(to), "@timestamp %v outside the run %v–%v", ts, from, to)
		delete(doc, "@timestamp")
		b, err := json.Marshal(doc) // map keys sorted
		require.NoError(t, err)
		out[d.Index] = append(out[d.Index], string(b))
	}
	for k := range out {
		slices.Sort(out[k])
	}
	return out
}

func TestSameDocumentsAsEDOT(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	spans := enrich(t, buildTraces(rng, 400, false))
	logs := buildLogs(30)
	requests := splitTraces(rng, spans)
	const logRequests = 5

	// send hands the items to a connector's sides and returns the documents it left.
	send := func(start func(*testing.T, connector.Factory, component.Config, consumer.Metrics) connectorSides,
		f connector.Factory, cfg component.Config, feed func(connectorSides),
	) (map[string][]string, int) {
		es := esexportertest.StartStandin(t, esstandin.Options{})
		exp := esexportertest.NewMetricsExporter(t, es.URL(), map[string]any{"sending_queue": map[string]any{"enabled": false}}, zap.NewNop())
		from := time.Now()
		sides := start(t, f, cfg, exp)
		feed(sides)
		sides.shutdown(t)
		return normalized(t, es, from, time.Now()), len(es.Documents())
	}
	edotFeed := func(s connectorSides) {
		all := ptrace.NewTraces()
		spans.CopyTo(all)
		require.NoError(t, s.traces.ConsumeTraces(t.Context(), all))
		lg := plog.NewLogs()
		for range logRequests {
			for _, rl := range logs.ResourceLogs().All() {
				rl.CopyTo(lg.ResourceLogs().AppendEmpty())
			}
		}
		require.NoError(t, s.logs.ConsumeLogs(t.Context(), lg))
	}
	ourFeed := func(s connectorSides) {
		step := len(requests) / logRequests
		for i, req := range requests {
			require.NoError(t, s.traces.ConsumeTraces(t.Context(), req))
			if i%step == 0 && i/step < logRequests {
				require.NoError(t, s.logs.ConsumeLogs(t.Context(), logs))
			}
		}
	}
	for attempt := 0; ; attempt++ {
		// Both runs in one minute: a window's edge between them would split one run's counts.
		started := time.Now()
		edot := elasticapmconnector.NewFactory()
		edotCfg := edot.CreateDefaultConfig().(*elasticapmconnector.Config)
		edotCfg.CustomResourceAttributes, edotCfg.CustomSpanAttributes = []string{"tenant"}, []string{"customer.tier"}
		want, n := send(startEDOT, edot, edotCfg, edotFeed)
		ours := NewFactory()
		ourCfg := ours.CreateDefaultConfig().(*Config)
		ourCfg.CustomResourceAttributes, ourCfg.CustomSpanAttributes = []string{"tenant"}, []string{"customer.tier"}
		ourCfg.FlushInterval = time.Minute // one flush: at the shutdown
		got, _ := send(startOurs, ours, ourCfg, ourFeed)
		if started.Truncate(time.Minute) != time.Now().Truncate(time.Minute) && attempt < 2 {
			t.Logf("a minute's edge fell in the runs; again")
			continue
		}
		require.Greater(t, n, 100, "EDOT's connector wrote too few documents for a meaningful comparison")
		for _, set := range []string{"service_summary", "service_transaction", "transaction", "service_destination"} {
			for _, ivl := range []string{"1m", "10m", "60m"} {
				assert.NotEmpty(t, want["metrics-"+set+"."+ivl+".otel-default"], "EDOT wrote no %s.%s documents", set, ivl)
			}
		}
		assert.Equal(t, keys(want), keys(got), "data streams")
		for index, docs := range want {
			assert.Equal(t, docs, got[index], "documents of %s", index)
		}
		t.Logf("%d documents in %d data streams, the same from both", n, len(want))
		return
	}
}

func keys(m map[string][]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
