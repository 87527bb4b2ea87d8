package ddtracereceiver

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"syscall"
	"testing"
	"time"

	pb "github.com/DataDog/datadog-agent/pkg/proto/pbgo/trace"
	"github.com/stretchr/testify/require"
	"github.com/tinylib/msgp/msgp"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/featuregate"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/xpdata/pref"

	"github.com/tracegate/tracegate/receiver/ddtracereceiver/internal/payload"
	"github.com/tracegate/tracegate/receiver/ddtracereceiver/internal/translator"
)

const benchSpans = 10

// benchSpan is a realistic span: ~10 meta and ~5 metrics.
func benchMeta(i int) [][2]string {
	return [][2]string{
		{"env", "prod"},
		{"version", "1.4.2"},
		{"span.kind", "server"},
		{"http.method", "GET"},
		{"http.route", "/api/cart/:id"},
		{"http.url", fmt.Sprintf("https://shop.example/api/cart/%d", i)},
		{"http.status_code", "200"},
		{"component", "net/http"},
		{"language", "go"},
		{"runtime-id", "5f1d3c2a-9e4b-4c1e-8f0a-2b7d6e5c4a3b"},
	}
}

var benchMetrics = [][2]any{{"_sampling_priority_v1", 1.0}, {"_dd.measured", 1.0}, {"process_id", 4242.0}, {"_dd.top_level", 1.0}, {"_dd.agent_psr", 1.0}}

func benchV04() []byte {
	b := msgp.AppendArrayHeader(nil, 1)
	b = msgp.AppendArrayHeader(b, benchSpans)
	for i := range benchSpans {
		b = msgp.AppendMapHeader(b, 12)
		for _, kv := range [][2]string{{"service", "checkout"}, {"name", "http.request"}, {"resource", "GET /api/cart/:id"}, {"type", "web"}} {
			b = msgp.AppendString(msgp.AppendString(b, kv[0]), kv[1])
		}
		b = msgp.AppendUint64(msgp.AppendString(b, "trace_id"), 0x1122334455667788)
		b = msgp.AppendUint64(msgp.AppendString(b, "span_id"), uint64(i+1))
		b = msgp.AppendUint64(msgp.AppendString(b, "parent_id"), uint64(i))
		b = msgp.AppendInt64(msgp.AppendString(b, "start"), 1_700_000_000_000_000_000+int64(i))
		b = msgp.AppendInt64(msgp.AppendString(b, "duration"), 1_500_000)
		b = msgp.AppendInt32(msgp.AppendString(b, "error"), 0)
		b = msgp.AppendMapHeader(msgp.AppendString(b, "meta"), 10)
		for _, kv := range benchMeta(i) {
			b = msgp.AppendString(msgp.AppendString(b, kv[0]), kv[1])
		}
		b = msgp.AppendMapHeader(msgp.AppendString(b, "metrics"), uint32(len(benchMetrics)))
		for _, kv := range benchMetrics {
			b = msgp.AppendFloat64(msgp.AppendString(b, kv[0].(string)), kv[1].(float64))
		}
	}
	return b
}

func benchV05() []byte {
	dict := []string{}
	idx := map[string]uint32{}
	id := func(s string) uint32 {
		if i, ok := idx[s]; ok {
			return i
		}
		idx[s] = uint32(len(dict))
		dict = append(dict, s)
		return idx[s]
	}
	var spans []byte
	for i := range benchSpans {
		spans = msgp.AppendArrayHeader(spans, 12)
		spans = msgp.AppendUint32(spans, id("checkout"))
		spans = msgp.AppendUint32(spans, id("http.request"))
		spans = msgp.AppendUint32(spans, id("GET /api/cart/:id"))
		spans = msgp.AppendUint64(spans, 0x1122334455667788)
		spans = msgp.AppendUint64(spans, uint64(i+1))
		spans = msgp.AppendUint64(spans, uint64(i))
		spans = msgp.AppendInt64(spans, 1_700_000_000_000_000_000+int64(i))
		spans = msgp.AppendInt64(spans, 1_500_000)
		spans = msgp.AppendInt32(spans, 0)
		spans = msgp.AppendMapHeader(spans, 10)
		for _, kv := range benchMeta(i) {
			spans = msgp.AppendUint32(msgp.AppendUint32(spans, id(kv[0])), id(kv[1]))
		}
		spans = msgp.AppendMapHeader(spans, uint32(len(benchMetrics)))
		for _, kv := range benchMetrics {
			spans = msgp.AppendFloat64(msgp.AppendUint32(spans, id(kv[0].(string))), kv[1].(float64))
		}
		spans = msgp.AppendUint32(spans, id("web"))
	}
	b := msgp.AppendArrayHeader(nil, 2)
	b = msgp.AppendArrayHeader(b, uint32(len(dict)))
	for _, s := range dict {
		b = msgp.AppendString(b, s)
	}
	b = msgp.AppendArrayHeader(b, 1)
	b = msgp.AppendArrayHeader(b, benchSpans)
	return append(b, spans...)
}

// BenchmarkDecodeTranslate measures body → pdata for a v0.4 and a v0.5 payload of 10 spans, with
// our decoder and with the Datadog Agent's (pkg/proto), both followed by the same translation.
func BenchmarkDecodeTranslate(b *testing.B) {
	v04, v05 := benchV04(), benchV05()
	agentV04 := func(b []byte) (payload.Payload, error) {
		var t pb.Traces
		_, err := t.UnmarshalMsg(b)
		return payload.FromTraces(t), err
	}
	agentV05 := func(b []byte) (payload.Payload, error) {
		var t pb.Traces
		err := t.UnmarshalMsgDictionary(b)
		return payload.FromTraces(t), err
	}
	const semconv, contrib = translator.MappingSemconv, translator.MappingDatadogReceiver
	decoders := []struct {
		name         string
		body         []byte
		decode       func([]byte) (payload.Payload, error)
		mapping      translator.Mapping
		protoPooling bool // with the collector's pdata.useProtoPooling gate on
	}{
		{"v0.4/ours", v04, payload.DecodeTracesMsgpack, semconv, false},
		{"v0.4/ours-datadogreceiver", v04, payload.DecodeTracesMsgpack, contrib, false},
		{"v0.4/agent", v04, agentV04, semconv, false},
		{"v0.4/ours+protopooling", v04, payload.DecodeTracesMsgpack, semconv, true},
		{"v0.5/ours", v05, payload.DecodeV05, semconv, false},
		{"v0.5/ours-datadogreceiver", v05, payload.DecodeV05, contrib, false},
		{"v0.5/agent", v05, agentV05, semconv, false},
		{"v0.5/ours+protopooling", v05, payload.DecodeV05, semconv, true},
	}
	for _, d := range decoders {
		b.Run(d.name, func(b *testing.B) {
			if d.protoPooling {
				useProtoPooling(b)
			}
			tr := translator.New(translator.Options{Mapping: d.mapping, TraceIDCacheSize: 1000, StatusOKWithoutError: d.mapping == contrib})
			decodeTranslate := func(h translator.Headers) int {
				p, err := d.decode(d.body)
				if err != nil {
					b.Fatal(err)
				}
				res := tr.ToTraces([]payload.Payload{p}, h)
				p.Release() // as the handler does
				if d.protoPooling {
					releaseAsPipeline(res.Traces)
				}
				return res.Spans
			}
			b.SetBytes(int64(len(d.body)))
			b.ReportAllocs()
			for b.Loop() {
				if spans := decodeTranslate(translator.Headers{Lang: "go"}); spans != benchSpans {
					b.Fatalf("%d spans", spans)
				}
			}
			b.ReportMetric(float64(benchSpans*b.N)/b.Elapsed().Seconds(), "spans/s")
			b.ReportMetric(float64(testing.AllocsPerRun(10, func() {
				decodeTranslate(translator.Headers{})
			}))/benchSpans, "allocs/span")
		})
	}
}

// BenchmarkDecodeTranslateParts splits BenchmarkDecodeTranslate's work: our decoding alone, the
// semconv translation alone (of a payload decoded once), and msgpack tokenizing alone (msgp.Skip
// over the body: what any decoder of these bytes does at least), in ns per span.
func BenchmarkDecodeTranslateParts(b *testing.B) {
	bodies := []struct {
		name   string
		body   []byte
		decode func([]byte) (payload.Payload, error)
	}{{"v0.4", benchV04(), payload.DecodeTracesMsgpack}, {"v0.5", benchV05(), payload.DecodeV05}}
	perSpan := func(b *testing.B) {
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*benchSpans), "ns/span")
	}
	for _, c := range bodies {
		b.Run("decode/"+c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				p, err := c.decode(c.body)
				if err != nil {
					b.Fatal(err)
				}
				p.Release()
			}
			perSpan(b)
		})
		b.Run("translate/"+c.name, func(b *testing.B) {
			p, err := c.decode(c.body)
			require.NoError(b, err)
			tr := translator.New(translator.Options{TraceIDCacheSize: 1000})
			b.ReportAllocs()
			for b.Loop() {
				tr.ToTraces([]payload.Payload{p}, translator.Headers{Lang: "go"})
			}
			perSpan(b)
		})
		b.Run("tokenize/"+c.name, func(b *testing.B) {
			for b.Loop() {
				if _, err := msgp.Skip(c.body); err != nil {
					b.Fatal(err)
				}
			}
			perSpan(b)
		})
	}
}

// useProtoPooling turns the collector-wide pdata.useProtoPooling feature gate on for one
// benchmark: pdata then takes its objects from pools, to which the pipeline returns them when the
// last consumer is done with them (with pdata.enableRefCounting, on by default).
func useProtoPooling(b *testing.B) {
	const gate = "pdata.useProtoPooling"
	require.NoError(b, featuregate.GlobalRegistry().Set(gate, true))
	b.Cleanup(func() { _ = featuregate.GlobalRegistry().Set(gate, false) })
}

// releaseAsPipeline does what the collector's pipeline does with traces when its first consumer
// returns and nothing took a reference: it returns their objects to pdata's pools.
func releaseAsPipeline(td ptrace.Traces) {
	if pref.MarkPipelineOwnedTraces(td) {
		pref.UnrefTraces(td)
	}
}

// BenchmarkHandler measures whole requests through the HTTP handler into a consumer that drops
// them (a sink that kept them would grow the heap the collector scans with every request): requests/s
// and the p99 of the handler's latency, with concurrent clients.
func BenchmarkHandler(b *testing.B) {
	body := benchV04()
	r, err := newReceiver(createDefaultConfig().(*Config), nopSettings(), consumertest.NewNop())
	if err != nil {
		b.Fatal(err)
	}
	h := r.handler()
	var mu sync.Mutex
	var latencies []time.Duration
	b.ReportAllocs()
	b.SetBytes(int64(len(body)))
	b.RunParallel(func(pb *testing.PB) {
		var local []time.Duration
		for pb.Next() {
			req := httptest.NewRequestWithContext(context.Background(), http.MethodPut, "/v0.4/traces", bytes.NewReader(body))
			req.Header.Set("Content-Type", "application/msgpack")
			rec := httptest.NewRecorder()
			start := time.Now()
			h.ServeHTTP(rec, req)
			local = append(local, time.Since(start))
			if rec.Code != 200 {
				b.Errorf("status %d", rec.Code)
			}
		}
		mu.Lock()
		latencies = append(latencies, local...)
		mu.Unlock()
	})
	slices.Sort(latencies)
	if n := len(latencies); n > 0 {
		b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "req/s")
		b.ReportMetric(float64(latencies[n*99/100].Microseconds()), "p99-µs")
	}
}

// BenchmarkPdataFloor builds the same output as BenchmarkDecodeTranslate/v0.4 (each mapping's)
// directly in pdata, from constants, with no decoding or translation: the cost of the pdata
// objects alone, a floor for any receiver that produces these spans.
func BenchmarkPdataFloor(b *testing.B) {
	for _, f := range []struct {
		name  string
		build func() ptrace.Traces
	}{
		{"semconv", pdataFloorSemconv},
		{"datadogreceiver", func() ptrace.Traces { return pdataFloor(benchMeta(0)) }},
	} {
		b.Run(f.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				f.build()
			}
			b.ReportMetric(float64(benchSpans*b.N)/b.Elapsed().Seconds(), "spans/s")
		})
	}
}

// pdataFloorSemconv builds the semconv mapping's output for the benchmark payload (the test
// below holds it to the translator's).
func pdataFloorSemconv() ptrace.Traces {
	td := ptrace.NewTraces()
	rs := td.ResourceSpans().AppendEmpty()
	res := rs.Resource().Attributes()
	res.EnsureCapacity(9)
	res.PutStr("service.name", "checkout")
	res.PutStr("deployment.environment.name", "prod")
	res.PutStr("service.version", "1.4.2")
	res.PutInt("process.pid", 4242)
	res.PutStr("service.instance.id", "5f1d3c2a-9e4b-4c1e-8f0a-2b7d6e5c4a3b")
	res.PutStr("telemetry.sdk.name", "datadog")
	res.PutStr("telemetry.sdk.language", "go")
	spans := rs.ScopeSpans().AppendEmpty().Spans()
	spans.EnsureCapacity(benchSpans)
	for i := range benchSpans {
		s := floorSpan(spans, i)
		attrs := s.Attributes()
		attrs.EnsureCapacity(9)
		attrs.PutStr("operation.name", "http.request")
		attrs.PutStr("resource.name", "GET /api/cart/:id")
		attrs.PutStr("span.type", "web")
		attrs.PutStr("http.route", "/api/cart/:id")
		attrs.PutInt("http.response.status_code", 200)
		attrs.PutStr("http.request.method", "GET")
		attrs.PutStr("url.scheme", "https")
		attrs.PutStr("url.path", "/api/cart/1")
	}
	spans.At(0).Attributes().PutInt("sampling.priority", 1)
	return td
}

// floorSpan appends the floors' span i, without attributes.
func floorSpan(spans ptrace.SpanSlice, i int) ptrace.Span {
	s := spans.AppendEmpty()
	s.SetTraceID(pcommon.TraceID{1})
	s.SetSpanID(pcommon.SpanID{byte(i + 1)})
	s.SetName("GET /api/cart/:id")
	s.SetKind(ptrace.SpanKindServer)
	s.SetStartTimestamp(1)
	s.SetEndTimestamp(2)
	return s
}

// TestPdataFloorSemconvIsTheOutput holds the semconv floor to what the receiver makes of the
// benchmark payload: same resource, span and attribute counts.
func TestPdataFloorSemconvIsTheOutput(t *testing.T) {
	p, err := payload.DecodeTracesMsgpack(benchV04())
	require.NoError(t, err)
	got := translator.New(translator.Options{}).ToTraces([]payload.Payload{p}, translator.Headers{Lang: "go"}).Traces
	want := pdataFloorSemconv()
	require.Equal(t, want.ResourceSpans().At(0).Resource().Attributes().Len(), got.ResourceSpans().At(0).Resource().Attributes().Len())
	wantSpans, gotSpans := want.ResourceSpans().At(0).ScopeSpans().At(0).Spans(), got.ResourceSpans().At(0).ScopeSpans().At(0).Spans()
	require.Equal(t, wantSpans.Len(), gotSpans.Len())
	for i := range wantSpans.Len() {
		require.Equal(t, wantSpans.At(i).Attributes().Len(), gotSpans.At(i).Attributes().Len(), "span %d: %v", i, gotSpans.At(i).Attributes().AsRaw())
	}
}

// pdataFloor builds the datadogreceiver mapping's output for BenchmarkPdataFloor.
func pdataFloor(meta [][2]string) ptrace.Traces {
	td := ptrace.NewTraces()
	rs := td.ResourceSpans().AppendEmpty()
	rs.Resource().Attributes().PutStr("service.name", "checkout")
	spans := rs.ScopeSpans().AppendEmpty().Spans()
	spans.EnsureCapacity(benchSpans)
	for i := range benchSpans {
		s := floorSpan(spans, i)
		attrs := s.Attributes()
		attrs.EnsureCapacity(18)
		attrs.PutStr("dd.span.Resource", "GET /api/cart/:id")
		attrs.PutStr("datadog.span.id", "1")
		attrs.PutStr("datadog.trace.id", "2")
		for _, kv := range meta {
			attrs.PutStr(kv[0], kv[1])
		}
		for _, kv := range benchMetrics {
			attrs.PutDouble(kv[0].(string), kv[1].(float64))
		}
		s.Status().SetCode(ptrace.StatusCodeOk)
	}
	return td
}

// refuseEach refuses the first n offers of every payload (offers come in turn: one client), then
// takes it.
type refuseEach struct {
	n     int
	calls int
}

func (c *refuseEach) Capabilities() consumer.Capabilities { return consumer.Capabilities{} }
func (c *refuseEach) ConsumeTraces(context.Context, ptrace.Traces) error {
	c.calls++
	if c.calls%(c.n+1) != 0 {
		return errors.New("sending queue is full")
	}
	return nil
}

// BenchmarkReoffer measures the CPU a request costs when the pipeline refuses it n times within
// refusal_wait: each re-offer is a fresh translation (wall time is mostly the backoff's sleeps,
// so CPU time is reported, from getrusage).
func BenchmarkReoffer(b *testing.B) {
	body := benchV04()
	for _, n := range []int{0, 2, 6} {
		b.Run(fmt.Sprintf("refused-%d-times", n), func(b *testing.B) {
			r, err := newReceiver(createDefaultConfig().(*Config), nopSettings(), &refuseEach{n: n})
			if err != nil {
				b.Fatal(err)
			}
			h := r.handler()
			var before, after syscall.Rusage
			_ = syscall.Getrusage(syscall.RUSAGE_SELF, &before)
			for b.Loop() {
				req := httptest.NewRequestWithContext(context.Background(), http.MethodPut, "/v0.4/traces", bytes.NewReader(body))
				req.Header.Set("Content-Type", "application/msgpack")
				rec := httptest.NewRecorder()
				h.ServeHTTP(rec, req)
				if rec.Code != 200 {
					b.Fatalf("status %d", rec.Code)
				}
			}
			_ = syscall.Getrusage(syscall.RUSAGE_SELF, &after)
			cpu := time.Duration(after.Utime.Nano() + after.Stime.Nano() - before.Utime.Nano() - before.Stime.Nano())
			b.ReportMetric(float64(cpu.Microseconds())/float64(b.N), "cpu-µs/request")
		})
	}
}
