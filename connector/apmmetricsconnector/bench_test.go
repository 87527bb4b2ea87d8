package apmmetricsconnector

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/tracegate/tracegate/internal/testbed/tracemodel"

	"github.com/elastic/opentelemetry-collector-components/connector/elasticapmconnector"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/connector"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/tracegate/tracegate/connector/apmmetricsconnector/internal/metadata"
)

const spansPerRequest = 10

// benchRequests are n requests of one trace of 10 spans each, as tracegen sends them (loadgen's
// traces of five services), enriched by Elastic's APM processor as configs/elasticsearch/apm.yaml does.
func benchRequests(tb testing.TB, n int) []ptrace.Traces {
	tb.Helper()
	rng := rand.New(rand.NewPCG(3, 4))
	services := []string{"frontend", "checkout", "cart", "inventory", "payments"}
	all := ptrace.NewTraces()
	for i := range n {
		td := tracemodel.OTLPTraces(tracemodel.NewTrace(rng, services[i%len(services)], spansPerRequest, time.Now()))
		td.ResourceSpans().MoveAndAppendTo(all.ResourceSpans())
	}
	return perResource(tb, enrich(tb, all))
}

// perResource splits td into one request per resource.
func perResource(tb testing.TB, td ptrace.Traces) []ptrace.Traces {
	tb.Helper()
	out := make([]ptrace.Traces, 0, td.ResourceSpans().Len())
	for _, rs := range td.ResourceSpans().All() {
		req := ptrace.NewTraces()
		rs.CopyTo(req.ResourceSpans().AppendEmpty())
		require.Equal(tb, spansPerRequest, req.SpanCount())
		out = append(out, req)
	}
	return out
}

func connectorSettings(f connector.Factory) connector.Settings {
	return connector.Settings{ID: component.NewID(f.Type()), TelemetrySettings: componenttest.NewNopTelemetrySettings(), BuildInfo: component.NewDefaultBuildInfo()}
}

// tracesIn is a connector's traces input with the sides behind it: Shutdown stops them all.
type tracesIn struct {
	connector.Traces
	behind []component.Component
}

func (t tracesIn) Shutdown(ctx context.Context) error {
	errs := []error{t.Traces.Shutdown(ctx)}
	for _, c := range t.behind {
		errs = append(errs, c.Shutdown(ctx))
	}
	return errors.Join(errs...)
}

// startTraces starts a connector whose metrics go to next: EDOT's as a traces to metrics side,
// this one as a traces to traces side (the spans it hands on dropped) and a metrics to metrics one.
func startTraces(tb testing.TB, f connector.Factory, cfg component.Config, next consumer.Metrics) tracesIn {
	tb.Helper()
	ctx, set := context.Background(), connectorSettings(f)
	var in tracesIn
	var err error
	if f.Type() == metadata.Type {
		in.Traces, err = f.CreateTracesToTraces(ctx, set, cfg, consumertest.NewNop())
		require.NoError(tb, err)
		mt, err := f.CreateMetricsToMetrics(ctx, set, cfg, next)
		require.NoError(tb, err)
		in.behind = append(in.behind, mt)
	} else {
		in.Traces, err = f.CreateTracesToMetrics(ctx, set, cfg, next)
		require.NoError(tb, err)
	}
	for _, c := range append([]component.Component{in.Traces}, in.behind...) {
		require.NoError(tb, c.Start(ctx, componenttest.NewNopHost()))
	}
	return in
}

// allocMeter counts the allocations made while the benchmark's timer runs (as -benchmem does),
// and the process's CPU time (the store's background work and the GC run on the other core,
// outside the wall time), to report them per span.
type allocMeter struct {
	ms             runtime.MemStats
	cpu0           time.Duration
	bytes, mallocs uint64
	cpu            time.Duration
}

func (m *allocMeter) resume(b *testing.B) {
	runtime.ReadMemStats(&m.ms)
	m.cpu0 = processCPU(b)
	b.StartTimer()
}

func (m *allocMeter) pause(b *testing.B) {
	b.StopTimer()
	m.cpu += processCPU(b) - m.cpu0
	before := m.ms
	runtime.ReadMemStats(&m.ms)
	m.bytes += m.ms.TotalAlloc - before.TotalAlloc
	m.mallocs += m.ms.Mallocs - before.Mallocs
}

func (m *allocMeter) report(b *testing.B, spans int) {
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(spans), "ns/span")
	b.ReportMetric(float64(m.cpu.Nanoseconds())/float64(spans), "cpu-ns/span")
	b.ReportMetric(float64(m.bytes)/float64(spans), "B/span")
	b.ReportMetric(float64(m.mallocs)/float64(spans), "allocs/span")
}

// processCPU is the user and system time of the process so far.
func processCPU(tb testing.TB) time.Duration {
	var ru syscall.Rusage
	require.NoError(tb, syscall.Getrusage(syscall.RUSAGE_SELF, &ru))
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkConsumeTraces is the hot path: requests of 10 enriched spans through the traces side
// of this connector and of EDOT's, into a no-op consumer, per span. The timed part ends with the
// connector's shutdown: the store (Pebble) merges the requests' values when it exports, so its
// merge cost is counted; run long enough (-benchtime 20000x or more) that the export of the
// final series is small against the rest.
//
// EDOT's connector writes onto its input, so each request is a fresh copy of a pooled one, made
// while the timer is stopped, for both connectors alike: the numbers are the connectors' own.
// In a pipeline the fan-out makes that copy for EDOT's connector only (it declares MutatesData);
// the "copy" sub-benchmark is its cost, to add to EDOT's.
func BenchmarkConsumeTraces(b *testing.B) {
	pool := benchRequests(b, 500)
	edot := elasticapmconnector.NewFactory()
	for _, c := range []struct {
		name string
		f    connector.Factory
	}{{"apmmetrics", NewFactory()}, {"elasticapm", edot}} {
		b.Run(c.name, func(b *testing.B) {
			tr := startTraces(b, c.f, c.f.CreateDefaultConfig(), consumertest.NewNop())
			const chunk = 1000
			inputs := make([]ptrace.Traces, chunk)
			refill := func(from int) {
				for i := range inputs {
					inputs[i] = ptrace.NewTraces()
					pool[(from+i)%len(pool)].CopyTo(inputs[i])
				}
			}
			refill(0)
			var m allocMeter
			b.ResetTimer()
			b.StopTimer()
			m.resume(b)
			for i := range b.N {
				if i > 0 && i%chunk == 0 {
					m.pause(b)
					refill(i)
					m.resume(b)
				}
				if err := tr.ConsumeTraces(context.Background(), inputs[i%chunk]); err != nil {
					b.Fatal(err)
				}
			}
			require.NoError(b, tr.Shutdown(context.Background()))
			m.pause(b)
			m.report(b, b.N*spansPerRequest)
		})
	}
	b.Run("copy", func(b *testing.B) {
		var m allocMeter
		b.ResetTimer()
		b.StopTimer()
		m.resume(b)
		for i := range b.N {
			pool[i%len(pool)].CopyTo(ptrace.NewTraces())
		}
		m.pause(b)
		m.report(b, b.N*spansPerRequest)
	})
}

// cardinalityRequests are one transaction of every name of every service (a server span and an
// exit span to one of the service's destinations: PostgreSQL, Redis, another service over
// HTTP), five transactions to a request of 10 spans, enriched. Every tenth name fails (HTTP 500).
func cardinalityRequests(tb testing.TB, services, names, dests int) []ptrace.Traces {
	tb.Helper()
	all := ptrace.NewTraces()
	now := time.Now()
	var spans ptrace.SpanSlice
	n := 0
	for s := range services {
		for k := range names {
			if n%(spansPerRequest/2) == 0 {
				rs := all.ResourceSpans().AppendEmpty()
				res := rs.Resource().Attributes()
				res.PutStr("service.name", fmt.Sprintf("service-%02d", s))
				res.PutStr("service.version", "1.0.0")
				res.PutStr("host.name", fmt.Sprintf("host-%02d", s))
				res.PutStr("deployment.environment", "production")
				res.PutStr("telemetry.sdk.language", "go")
				res.PutStr("telemetry.sdk.name", "opentelemetry")
				spans = rs.ScopeSpans().AppendEmpty().Spans()
			}
			addCardinalityTrace(spans, s, k, n%dests, services, now)
			n++
		}
		// A service's last request holds only its own transactions.
		n = 0
	}
	return perResourceAny(tb, enrich(tb, all))
}

func addCardinalityTrace(spans ptrace.SpanSlice, s, k, dest, services int, now time.Time) {
	traceID := pcommon.TraceID{byte(s), byte(k), byte(k >> 8), 7}
	root := spans.AppendEmpty()
	root.SetTraceID(traceID)
	root.SetSpanID(pcommon.SpanID{1, byte(s), byte(k), byte(k >> 8)})
	root.SetKind(ptrace.SpanKindServer)
	route := fmt.Sprintf("/api/v1/resource-%03d/{id}", k)
	root.SetName("GET " + route)
	dur := time.Duration(1+(s*spread(k))%500) * time.Millisecond
	root.SetStartTimestamp(pcommon.NewTimestampFromTime(now.Add(-dur)))
	root.SetEndTimestamp(pcommon.NewTimestampFromTime(now))
	ra := root.Attributes()
	ra.PutStr("http.request.method", "GET")
	ra.PutStr("http.route", route)
	status := int64(200)
	if k%10 == 0 {
		status = 500
		root.Status().SetCode(ptrace.StatusCodeError)
	}
	ra.PutInt("http.response.status_code", status)

	exit := spans.AppendEmpty()
	exit.SetTraceID(traceID)
	exit.SetSpanID(pcommon.SpanID{2, byte(s), byte(k), byte(k >> 8)})
	exit.SetParentSpanID(root.SpanID())
	exit.SetKind(ptrace.SpanKindClient)
	exit.SetStartTimestamp(pcommon.NewTimestampFromTime(now.Add(-dur / 2)))
	exit.SetEndTimestamp(pcommon.NewTimestampFromTime(now))
	ea := exit.Attributes()
	switch dest {
	case 0:
		exit.SetName("SELECT orders")
		ea.PutStr("db.system.name", "postgresql")
		ea.PutStr("db.namespace", "shop")
		ea.PutStr("db.operation.name", "SELECT")
		ea.PutStr("db.collection.name", "orders")
	case 1:
		exit.SetName("GET")
		ea.PutStr("db.system.name", "redis")
		ea.PutStr("db.operation.name", "GET")
	default:
		peer := fmt.Sprintf("service-%02d.internal", (s+dest)%services)
		exit.SetName("GET")
		ea.PutStr("http.request.method", "GET")
		ea.PutStr("server.address", peer)
		ea.PutInt("server.port", 8080)
		ea.PutStr("url.full", "http://"+peer+":8080/items/1")
		ea.PutInt("http.response.status_code", 200)
	}
}

// spread spreads the durations of a service's transactions.
func spread(k int) int { return k*7 + 3 }

// perResourceAny splits td into one request per resource, whatever its span count.
func perResourceAny(tb testing.TB, td ptrace.Traces) []ptrace.Traces {
	tb.Helper()
	out := make([]ptrace.Traces, 0, td.ResourceSpans().Len())
	for _, rs := range td.ResourceSpans().All() {
		req := ptrace.NewTraces()
		rs.CopyTo(req.ResourceSpans().AppendEmpty())
		out = append(out, req)
	}
	return out
}

// addEDOTAttributes writes onto the spans what EDOT's connector writes onto its input, so that
// feeding the same requests again and again does not grow them inside a measurement.
func addEDOTAttributes(reqs []ptrace.Traces) {
	for _, td := range reqs {
		for _, rs := range td.ResourceSpans().All() {
			for _, ss := range rs.ScopeSpans().All() {
				for _, s := range ss.Spans().All() {
					s.Attributes().PutBool("transaction.root", s.ParentSpanID().IsEmpty())
					s.Attributes().PutStr("span.name", s.Name())
				}
			}
		}
	}
}

// tally is the next consumer of a connector under measurement: it keeps what the checks need of
// the exported metrics, not the metrics.
type tally struct {
	mu sync.Mutex
	// points per "interval metricset metric".
	points map[string]int
	// transactions are the (service, transaction name) pairs per interval, destinations the
	// (service, destination resource) pairs.
	transactions, destinations map[string]map[string]struct{}
	// txCount is the transactions counted per interval (transaction.duration.summary of the
	// transaction metricset).
	txCount map[string]uint64
	// kept is the transaction names of each transaction metric: "interval metric" → names.
	kept map[string]map[string]struct{}
	// overflow is the overflow series: "interval metricset metric service overflow" → the value.
	overflow map[string]int64
}

func newTally() *tally {
	return &tally{
		points: map[string]int{}, transactions: map[string]map[string]struct{}{},
		destinations: map[string]map[string]struct{}{}, txCount: map[string]uint64{}, overflow: map[string]int64{},
		kept: map[string]map[string]struct{}{},
	}
}

func (t *tally) Capabilities() consumer.Capabilities { return consumer.Capabilities{} }

func (t *tally) ConsumeMetrics(_ context.Context, md pmetric.Metrics) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, rm := range md.ResourceMetrics().All() {
		service := strAttr(rm.Resource().Attributes(), "service.name")
		resOverflow := strAttr(rm.Resource().Attributes(), "overflow")
		for _, sm := range rm.ScopeMetrics().All() {
			overflow := resOverflow + strAttr(sm.Scope().Attributes(), "overflow")
			for _, m := range sm.Metrics().All() {
				switch m.Type() {
				case pmetric.MetricTypeSum:
					for _, dp := range m.Sum().DataPoints().All() {
						t.add(service, overflow, m, dp.Attributes(), dp.IntValue(), 0)
					}
				case pmetric.MetricTypeHistogram:
					for _, dp := range m.Histogram().DataPoints().All() {
						t.add(service, overflow, m, dp.Attributes(), 0, dp.Count())
					}
				case pmetric.MetricTypeExponentialHistogram:
					for _, dp := range m.ExponentialHistogram().DataPoints().All() {
						t.add(service, overflow, m, dp.Attributes(), 0, dp.Count())
					}
				default:
					return fmt.Errorf("unexpected metric type %s of %s", m.Type(), m.Name())
				}
			}
		}
	}
	return nil
}

// add tallies one data point: value is a sum's, count a histogram's.
func (t *tally) add(service, overflow string, m pmetric.Metric, attrs pcommon.Map, value int64, count uint64) {
	ivl, set := strAttr(attrs, "metricset.interval"), strAttr(attrs, "metricset.name")
	key := ivl + " " + set + " " + m.Name()
	t.points[key]++
	if o := strAttr(attrs, "overflow"); o != "" || overflow != "" || strings.HasPrefix(m.Name(), "_overflow") {
		t.overflow[key+" "+service+" "+o+overflow] += value
		return
	}
	pair := func(to map[string]map[string]struct{}, k, v string) {
		if to[k] == nil {
			to[k] = map[string]struct{}{}
		}
		to[k][service+"\x00"+v] = struct{}{}
	}
	switch set {
	case "transaction":
		name := strAttr(attrs, "transaction.name")
		pair(t.transactions, ivl, name)
		pair(t.kept, ivl+" "+m.Name(), name)
		if m.Type() == pmetric.MetricTypeHistogram {
			t.txCount[ivl] += count
		}
	case "service_destination":
		pair(t.destinations, ivl, strAttr(attrs, "span.destination.service.resource"))
	}
}

func strAttr(m pcommon.Map, k string) string {
	if v, ok := m.Get(k); ok {
		return v.AsString()
	}
	return ""
}

var intervals = []string{"1m", "10m", "60m"}

// minuteSpans is one minute's worth of spans at 10,000 spans a second, fed evenly over
// feedTime: paced, so that this connector flushes about as often as it would in a real minute,
// and inside one minute's window, so that the store holds a whole minute when measured.
const (
	minuteSpans = 600_000
	feedTime    = 55 * time.Second
)

// BenchmarkMemory measures the connectors at a realistic cardinality: 50 services × 200
// transaction names, 3 destinations a service, one minute's worth of spans. Heap: in use after a
// GC, less the baseline before the connector was made; RSS likewise (Pebble's memtables and block
// cache are C memory when cgo is on, outside the Go heap); disk: the store's directory after the
// feed; cpu: the process's CPU time over the feed, per span; export: the shutdown, which exports
// every open window. Each run waits for a minute's edge and takes a minute.
// Run: -bench Memory -benchtime 1x.
func BenchmarkMemory(b *testing.B) {
	const services, names, dests = 50, 200, 3
	pool := cardinalityRequests(b, services, names, dests)
	addEDOTAttributes(pool)
	requests := minuteSpans / spansPerRequest
	// apmmetrics-1s: the flush of every second and the 10,000 series the defaults were before
	// this benchmark chose 10 s and 50,000.
	longer := func(cfg component.Config) {
		c := cfg.(*Config)
		c.FlushInterval, c.MaxPendingSeries = time.Second, 10_000
	}
	for _, c := range []struct {
		name  string
		f     connector.Factory
		tweak func(component.Config)
	}{{"apmmetrics", NewFactory(), nil}, {"apmmetrics-1s", NewFactory(), longer}, {"elasticapm", elasticapmconnector.NewFactory(), nil}} {
		for _, storage := range []string{"memory", "directory"} {
			b.Run(c.name+"/"+storage, func(b *testing.B) {
				for range b.N {
					cfg := c.f.CreateDefaultConfig()
					if c.tweak != nil {
						c.tweak(cfg)
					}
					r := measureMemory(b, c.f, cfg, storage == "directory", pool, requests)
					b.ReportMetric(r.heapMB, "heap-MB")
					b.ReportMetric(r.rssMB, "rss-MB")
					b.ReportMetric(r.diskMB, "disk-MB")
					b.ReportMetric(float64(r.cpu.Nanoseconds())/minuteSpans, "cpu-ns/span")
					b.ReportMetric(r.export.Seconds()*1000, "export-ms")
					t := r.tally
					// Robust facts: every transaction and destination of every service is
					// exported in every interval, every transaction counted, nothing overflowed.
					for _, ivl := range intervals {
						assert.Len(b, t.transactions[ivl], services*names, "transactions at %s", ivl)
						assert.Len(b, t.destinations[ivl], services*dests, "destinations at %s", ivl)
						assert.Equal(b, uint64(minuteSpans/2), t.txCount[ivl], "transactions counted at %s", ivl)
					}
					assert.Empty(b, t.overflow, "overflow below the limits")
				}
			})
		}
	}
}

type memoryResult struct {
	heapMB, rssMB, diskMB float64
	cpu, export           time.Duration
	tally                 *tally
}

func measureMemory(b *testing.B, f connector.Factory, cfg component.Config, onDisk bool, pool []ptrace.Traces, requests int) memoryResult {
	for attempt := 0; ; attempt++ {
		r, whole := measureMemoryOnce(b, f, cfg, onDisk, pool, requests)
		if whole || attempt == 1 {
			if !whole {
				b.Logf("the feed crossed a minute's edge, where the store exports the 1m window: the numbers are of part of a minute")
			}
			return r
		}
	}
}

func measureMemoryOnce(b *testing.B, f connector.Factory, cfg component.Config, onDisk bool, pool []ptrace.Traces, requests int) (memoryResult, bool) {
	b.StopTimer()
	var dir string
	if onDisk {
		dir = b.TempDir()
		switch c := cfg.(type) {
		case *Config:
			c.Aggregation.Directory = dir
		case *elasticapmconnector.Config:
			c.Aggregation.Directory = dir
		}
	}
	heap0, rss0 := memoryInUse()
	time.Sleep(time.Until(time.Now().Truncate(time.Minute).Add(time.Minute + 20*time.Millisecond)))
	t := newTally()
	start := time.Now()
	tr := startTraces(b, f, cfg, t)
	b.StartTimer()
	cpu0 := processCPU(b)
	const step = 100 // requests between two looks at the clock
	every := feedTime / time.Duration(requests)
	for i := range requests {
		if i%step == 0 {
			time.Sleep(time.Until(start.Add(time.Duration(i) * every)))
		}
		require.NoError(b, tr.ConsumeTraces(context.Background(), pool[i%len(pool)]))
	}
	cpu := processCPU(b) - cpu0
	b.StopTimer()
	fed := time.Now()
	heap, rss := memoryInUse()
	disk := dirSize(b, dir)
	whole := start.Truncate(time.Minute).Equal(time.Now().Truncate(time.Minute))
	exportStart := time.Now()
	require.NoError(b, tr.Shutdown(context.Background()))
	export := time.Since(exportStart)
	const mb = 1 << 20
	r := memoryResult{
		heapMB: float64(heap-heap0) / mb, rssMB: float64(rss-rss0) / mb, diskMB: float64(disk) / mb,
		cpu: cpu, export: export, tally: t,
	}
	b.Logf("heap %.1f MB, RSS %.1f MB, disk %.1f MB, CPU %s over a feed of %s, export %s (whole minute: %v)",
		r.heapMB, r.rssMB, r.diskMB, cpu.Round(time.Millisecond), fed.Sub(start).Round(time.Millisecond),
		export.Round(time.Millisecond), whole)
	return r, whole
}

// memoryInUse returns the Go heap in use and the process's resident set after a GC that also
// returns freed memory to the OS.
func memoryInUse() (heap, rss int64) {
	runtime.GC()
	debug.FreeOSMemory()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return int64(ms.HeapInuse), residentBytes()
}

func residentBytes() int64 {
	b, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return 0
	}
	fields := strings.Fields(string(b))
	if len(fields) < 2 {
		return 0
	}
	pages, _ := strconv.ParseInt(fields[1], 10, 64)
	return pages * int64(os.Getpagesize())
}

func dirSize(tb testing.TB, dir string) int64 {
	tb.Helper()
	if dir == "" {
		return 0
	}
	var n int64
	require.NoError(tb, filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		info, err := d.Info()
		if err == nil {
			n += info.Size()
		}
		return err
	}))
	return n
}

// TestOverflowAlike: above the default limits (one service with 10,000 transaction names; 4,000
// data points a metric) both connectors keep 4,000 data points of each transaction metric and
// count the rest into the same overflow series (_overflow_datapoints, overflow: datapoint).
func TestOverflowAlike(t *testing.T) {
	const names = 10_000
	pool := cardinalityRequests(t, 1, names, 3)
	run := func(f connector.Factory) *tally {
		reqs := make([]ptrace.Traces, len(pool))
		for i, td := range pool {
			reqs[i] = ptrace.NewTraces()
			td.CopyTo(reqs[i])
		}
		tl := newTally()
		tr := startTraces(t, f, f.CreateDefaultConfig(), tl)
		for _, td := range reqs {
			require.NoError(t, tr.ConsumeTraces(t.Context(), td))
		}
		require.NoError(t, tr.Shutdown(t.Context()))
		return tl
	}
	// Each run inside one minute: a window's edge would split its counts between two windows (the
	// runs take seconds, longer under the race detector on a busy machine), so a run that straddles
	// one is made again.
	inOneMinute := func(f connector.Factory) *tally {
		for attempt := 0; ; attempt++ {
			start := time.Now()
			tl := run(f)
			if start.Truncate(time.Minute).Equal(time.Now().Truncate(time.Minute)) || attempt == 2 {
				return tl
			}
			t.Logf("a minute's edge fell in the run; again")
		}
	}
	edot, ours := inOneMinute(elasticapmconnector.NewFactory()), inOneMinute(NewFactory())
	assert.Equal(t, edot.points, ours.points, "data points per interval and metric")
	assert.Equal(t, keys64(edot.overflow), keys64(ours.overflow), "overflow series")
	for _, ivl := range intervals {
		for _, metric := range []string{"transaction.duration.histogram", "transaction.duration.summary"} {
			assert.Len(t, ours.kept[ivl+" "+metric], 4000, "names kept in %s at %s", metric, ivl)
			assert.Len(t, edot.kept[ivl+" "+metric], 4000, "EDOT: names kept in %s at %s", metric, ivl)
		}
		// The store writes the overflow of both transaction metrics into one
		// _overflow_datapoints series (overflow: datapoint, no metricset): a HyperLogLog
		// estimate of the series that did not fit, 6,000 a metric.
		key := ivl + "  _overflow_datapoints service-00 datapoint"
		want := float64(2 * (names - 4000))
		assert.InDelta(t, want, ours.overflow[key], want/20, "overflow at %s", ivl)
		assert.InDelta(t, want, edot.overflow[key], want/20, "EDOT: overflow at %s", ivl)
	}
	// Each keeps the same names in the histogram and the summary of a transaction group (this
	// connector hands the store its series in the order they arrived, not a map's), so no
	// transaction has a throughput without a latency. Which 4,000 they are follows the store's
	// merge order, and differs between the two.
	for _, ivl := range intervals {
		assert.Len(t, ours.transactions[ivl], 4000, "names in either transaction metric at %s", ivl)
		assert.Len(t, edot.transactions[ivl], 4000, "EDOT: names in either transaction metric at %s", ivl)
	}
	t.Logf("overflow series %v", ours.overflow)
}

func keys64(m map[string]int64) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
