package loadgen

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tracegate/tracegate/internal/testbed/tracemodel"

	"github.com/apache/thrift/lib/go/thrift"
	"github.com/elastic/apm-data/input/elasticapm"
	"github.com/elastic/apm-data/model/modelpb"
	"github.com/jaegertracing/jaeger-idl/thrift-gen/agent"
	"github.com/jaegertracing/jaeger-idl/thrift-gen/jaeger"
	"github.com/openzipkin/zipkin-go/model"
	"github.com/openzipkin/zipkin-go/proto/zipkin_proto3"
	"github.com/tinylib/msgp/msgp"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
	"golang.org/x/sync/semaphore"
)

// decodedSpan is what every protocol's decoder must give back.
type decodedSpan struct {
	traceHi, traceLo uint64
	spanID, parentID uint64
	service, name    string
	attrs            int // attributes/tags/meta+metrics carried from tracemodel.Span.Attrs (at least)
	errored          bool
	duration         time.Duration
	ddType           string             // the Datadog span type (ddtrace only)
	ddMetrics        map[string]float64 // the span's metrics (ddtrace only)
}

func decode(t *testing.T, protocol string, parts [][]byte) []decodedSpan {
	t.Helper()
	var out []decodedSpan
	switch protocol {
	case OTLPHTTP, OTLPGRPC:
		req := ptraceotlp.NewExportRequest()
		if err := req.UnmarshalProto(parts[0]); err != nil {
			t.Fatal(err)
		}
		rs := req.Traces().ResourceSpans().At(0)
		svc, _ := rs.Resource().Attributes().Get("service.name")
		spans := rs.ScopeSpans().At(0).Spans()
		for i := 0; i < spans.Len(); i++ {
			s := spans.At(i)
			tid, sid, pid := s.TraceID(), s.SpanID(), s.ParentSpanID()
			out = append(out, decodedSpan{
				traceHi: binary.BigEndian.Uint64(tid[:8]), traceLo: binary.BigEndian.Uint64(tid[8:]),
				spanID: binary.BigEndian.Uint64(sid[:]), parentID: binary.BigEndian.Uint64(pid[:]), service: svc.Str(), name: s.Name(),
				attrs: s.Attributes().Len(), errored: s.Status().Code() == ptrace.StatusCodeError,
				duration: s.EndTimestamp().AsTime().Sub(s.StartTimestamp().AsTime()),
			})
		}
	case ZipkinJSON, ZipkinProto:
		var spans []model.SpanModel
		if protocol == ZipkinJSON {
			if err := json.Unmarshal(parts[0], &spans); err != nil {
				t.Fatal(err)
			}
		} else {
			ptrs, err := zipkin_proto3.ParseSpans(parts[0], false)
			if err != nil {
				t.Fatal(err)
			}
			for _, p := range ptrs {
				spans = append(spans, *p)
			}
		}
		for _, s := range spans {
			d := decodedSpan{
				traceHi: s.TraceID.High, traceLo: s.TraceID.Low, spanID: uint64(s.ID), service: s.LocalEndpoint.ServiceName,
				name: s.Name, attrs: len(s.Tags), errored: s.Tags["error"] == "true", duration: s.Duration,
			}
			if s.ParentID != nil {
				d.parentID = uint64(*s.ParentID)
			}
			out = append(out, d)
		}
	case JaegerThriftHTTP, JaegerUDPCompact:
		for _, p := range parts {
			var batch *jaeger.Batch
			if protocol == JaegerThriftHTTP {
				batch = jaeger.NewBatch()
				if err := thrift.NewTDeserializer().Read(context.Background(), batch, p); err != nil {
					t.Fatal(err)
				}
			} else {
				buf := thrift.NewTMemoryBuffer()
				buf.Write(p)
				proto := thrift.NewTCompactProtocolConf(buf, &thrift.TConfiguration{})
				name, _, _, err := proto.ReadMessageBegin(context.Background())
				if err != nil || name != "emitBatch" {
					t.Fatalf("message %q: %v", name, err)
				}
				args := agent.NewAgentEmitBatchArgs()
				if err := args.Read(context.Background(), proto); err != nil {
					t.Fatal(err)
				}
				batch = args.Batch
				if len(p) > 65000 {
					t.Errorf("UDP packet of %d bytes", len(p))
				}
			}
			for _, s := range batch.Spans {
				errored := false
				for _, tag := range s.Tags {
					if tag.Key == "error" && tag.GetVBool() {
						errored = true
					}
				}
				out = append(out, decodedSpan{
					traceHi: uint64(s.TraceIdHigh), traceLo: uint64(s.TraceIdLow), spanID: uint64(s.SpanId),
					parentID: uint64(s.ParentSpanId), service: batch.Process.ServiceName, name: s.OperationName, attrs: len(s.Tags), errored: errored,
					duration: time.Duration(s.Duration) * time.Microsecond,
				})
				for _, ref := range s.References {
					if uint64(ref.TraceIdHigh) != uint64(s.TraceIdHigh) || uint64(ref.TraceIdLow) != uint64(s.TraceIdLow) {
						t.Errorf("span %x: reference to another trace", s.SpanId)
					}
				}
			}
		}
	case DDTraceV04, DDTraceV05:
		if protocol == DDTraceV04 {
			v, _, err := msgp.ReadIntfBytes(parts[0])
			if err != nil {
				t.Fatal(err)
			}
			for _, chunk := range v.([]any) {
				var hi uint64
				for i, sv := range chunk.([]any) {
					m := sv.(map[string]any)
					meta := m["meta"].(map[string]any)
					if i == 0 {
						if _, err := fmt.Sscanf(meta["_dd.p.tid"].(string), "%x", &hi); err != nil {
							t.Fatalf("_dd.p.tid: %v", err)
						}
					}
					out = append(out, decodedSpan{
						traceHi: hi, traceLo: asU64(m["trace_id"]), spanID: asU64(m["span_id"]),
						parentID: asU64(m["parent_id"]), service: m["service"].(string), name: m["resource"].(string),
						attrs: len(meta) + len(m["metrics"].(map[string]any)), errored: asU64(m["error"]) == 1,
						duration: time.Duration(asU64(m["duration"])),
					})
					out[len(out)-1].ddType, _ = m["type"].(string)
					out[len(out)-1].ddMetrics = map[string]float64{}
					for k, v := range m["metrics"].(map[string]any) {
						out[len(out)-1].ddMetrics[k] = v.(float64)
					}
				}
			}
		} else {
			out = decodeV05(t, parts[0])
		}
	case ElasticAPMIntake:
		for _, ev := range decodeElasticAPM(t, parts[0]) {
			out = append(out, apmDecodedSpan(t, ev))
		}
	default:
		t.Fatalf("no decoder for %s", protocol)
	}
	return out
}

// asU64 reads a msgpack integer however it was encoded (small values decode as int64).
func asU64(v any) uint64 {
	switch x := v.(type) {
	case uint64:
		return x
	case int64:
		return uint64(x)
	}
	panic(fmt.Sprintf("not an integer: %T", v))
}

// decodeV05 reads the v0.5 dictionary format: [[strings], [[12-element span arrays]]].
func decodeV05(t *testing.T, b []byte) []decodedSpan {
	t.Helper()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	var n uint32
	var err error
	n, b, err = msgp.ReadArrayHeaderBytes(b)
	must(err)
	if n != 2 {
		t.Fatalf("v0.5 top-level array of %d", n)
	}
	n, b, err = msgp.ReadArrayHeaderBytes(b)
	must(err)
	dict := make([]string, n)
	for i := range dict {
		dict[i], b, err = msgp.ReadStringBytes(b)
		must(err)
	}
	u32 := func() uint32 {
		var v uint32
		v, b, err = msgp.ReadUint32Bytes(b)
		must(err)
		return v
	}
	u64 := func() uint64 {
		var v uint64
		v, b, err = msgp.ReadUint64Bytes(b)
		must(err)
		return v
	}
	var out []decodedSpan
	chunks, b, err := msgp.ReadArrayHeaderBytes(b)
	must(err)
	for range chunks {
		var spans uint32
		spans, b, err = msgp.ReadArrayHeaderBytes(b)
		must(err)
		var hi uint64
		for i := uint32(0); i < spans; i++ {
			n, b, err = msgp.ReadArrayHeaderBytes(b)
			must(err)
			if n != 12 {
				t.Fatalf("v0.5 span of %d fields", n)
			}
			d := decodedSpan{service: dict[u32()]}
			_ = u32() // name
			d.name = dict[u32()]
			d.traceLo, d.spanID, d.parentID = u64(), u64(), u64()
			_ = u64() // start
			d.duration = time.Duration(u64())
			var e int32
			e, b, err = msgp.ReadInt32Bytes(b)
			must(err)
			d.errored = e == 1
			var m uint32
			m, b, err = msgp.ReadMapHeaderBytes(b)
			must(err)
			for j := uint32(0); j < m; j++ {
				k, v := dict[u32()], dict[u32()]
				if k == "_dd.p.tid" {
					_, err = fmt.Sscanf(v, "%x", &hi)
					must(err)
				}
			}
			d.attrs += int(m)
			m, b, err = msgp.ReadMapHeaderBytes(b)
			must(err)
			d.ddMetrics = map[string]float64{}
			for j := uint32(0); j < m; j++ {
				k := dict[u32()]
				d.ddMetrics[k], b, err = msgp.ReadFloat64Bytes(b)
				must(err)
			}
			d.attrs += int(m)
			d.ddType = dict[u32()]
			d.traceHi = hi
			out = append(out, d)
		}
	}
	return out
}

// decodeElasticAPM reads an intake v2 body with apm-data's processor, the decoder APM Server runs:
// every line must be valid for it, so any invalid or too large event fails the test.
func decodeElasticAPM(t *testing.T, body []byte) []*modelpb.APMEvent {
	t.Helper()
	proc := elasticapm.NewProcessor(elasticapm.Config{MaxEventSize: 1 << 20, Semaphore: semaphore.NewWeighted(1)})
	var events []*modelpb.APMEvent
	collect := modelpb.ProcessBatchFunc(func(_ context.Context, b *modelpb.Batch) error {
		for _, ev := range *b {
			events = append(events, ev.CloneVT()) // the processor reuses its batch
		}
		return nil
	})
	var result elasticapm.Result
	err := proc.HandleStream(context.Background(), &modelpb.APMEvent{Event: &modelpb.Event{}}, bytes.NewReader(body), 100, collect, &result)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range result.Errors {
		var invalid *elasticapm.InvalidInputError
		if errors.As(e, &invalid) {
			t.Errorf("invalid event: %s: %s", invalid.Message, invalid.Document)
		} else {
			t.Error(e)
		}
	}
	if result.Invalid != 0 || result.TooLarge != 0 || result.Accepted != len(events) {
		t.Fatalf("%d events accepted, %d collected, %d invalid, %d too large", result.Accepted, len(events), result.Invalid, result.TooLarge)
	}
	return events
}

func apmDecodedSpan(t *testing.T, ev *modelpb.APMEvent) decodedSpan {
	t.Helper()
	d := decodedSpan{
		service: ev.GetService().GetName(), errored: ev.GetEvent().GetOutcome() == "failure", attrs: apmAttrs(ev),
		// The intake carries microseconds (milliseconds with three decimals); the decoder's float
		// multiplication can land a nanosecond off.
		duration: time.Duration(ev.GetEvent().GetDuration()).Round(time.Microsecond),
	}
	switch ev.Type() {
	case modelpb.TransactionEventType:
		d.spanID, d.name = hexID(t, ev.Transaction.Id), ev.Transaction.Name
	case modelpb.SpanEventType:
		d.spanID, d.name = hexID(t, ev.Span.Id), ev.Span.Name
	default:
		t.Fatalf("event of type %v", ev.Type())
	}
	tid := ev.GetTrace().GetId()
	if len(tid) != 32 {
		t.Fatalf("trace id %q", tid)
	}
	d.traceHi, d.traceLo = hexID(t, tid[:16]), hexID(t, tid[16:])
	if ev.ParentId != "" {
		d.parentID = hexID(t, ev.ParentId)
	}
	return d
}

// apmAttrs counts what a decoded event carries of tracemodel.Span.Attrs: its labels, and the fields the
// intake has for the others.
func apmAttrs(ev *modelpb.APMEvent) int {
	n := len(ev.Labels) + len(ev.NumericLabels)
	for _, set := range []bool{
		ev.GetService().GetEnvironment() != "", ev.GetService().GetVersion() != "",
		ev.GetHttp().GetRequest().GetMethod() != "", ev.GetHttp().GetResponse().GetStatusCode() != 0,
		ev.GetUrl().GetPath() != "", ev.GetUserAgent().GetOriginal() != "",
		ev.GetSpan().GetType() == "db" && ev.GetSpan().GetSubtype() != "",
		ev.GetSpan().GetDb().GetInstance() != "", ev.GetSpan().GetDb().GetStatement() != "",
		ev.GetDestination().GetAddress() != "", ev.GetDestination().GetPort() != 0,
	} {
		if set {
			n++
		}
	}
	return n
}

// hexID parses an id the intake carries as 16 lowercase hex digits.
func hexID(t *testing.T, s string) uint64 {
	t.Helper()
	v, err := strconv.ParseUint(s, 16, 64)
	if err != nil || len(s) != 16 || fmt.Sprintf("%016x", v) != s {
		t.Fatalf("id %q is not 16 lowercase hex digits", s)
	}
	return v
}

// TestProtocolsAgree decodes the same pooled trace in every protocol and compares what each
// carries with OTLP's: trace id, span ids, parents, names, durations (within a microsecond: Jaeger,
// Zipkin and the Elastic APM intake carry microseconds, Zipkin JSON rounded, the others truncated).
func TestProtocolsAgree(t *testing.T) {
	decodeFirst := func(t *testing.T, protocol string) []decodedSpan {
		pool, err := NewPool(t.Context(), protocol, "checkout", 1, 10, 42)
		if err != nil {
			t.Fatal(err)
		}
		return decode(t, protocol, pool.Payloads[0].Parts)
	}
	want := decodeFirst(t, OTLPHTTP)
	for _, protocol := range Protocols() {
		t.Run(protocol, func(t *testing.T) {
			got := decodeFirst(t, protocol)
			if len(got) != len(want) {
				t.Fatalf("%d spans, want %d", len(got), len(want))
			}
			for i, g := range got {
				w := want[i]
				sameName := g.name == w.name
				if protocol == ZipkinJSON {
					sameName = strings.EqualFold(g.name, w.name) // zipkin-go writes names in lower case
				}
				if g.traceHi != w.traceHi || g.traceLo != w.traceLo || g.spanID != w.spanID || g.parentID != w.parentID || !sameName {
					t.Errorf("span %d: %016x%016x/%x parent %x %q, want %016x%016x/%x parent %x %q", i,
						g.traceHi, g.traceLo, g.spanID, g.parentID, g.name, w.traceHi, w.traceLo, w.spanID, w.parentID, w.name)
				}
				if d := g.duration - w.duration; d <= -time.Microsecond || d >= time.Microsecond {
					t.Errorf("span %d: duration %v, want %v", i, g.duration, w.duration)
				}
			}
		})
	}
}

// TestDDTraceSpanTypes: v0.4 and v0.5 carry the same span types, those of Datadog's integrations
// for tracegen's operations, so that their documents compare.
func TestDDTraceSpanTypes(t *testing.T) {
	types := func(protocol string) []string {
		pool, err := NewPool(t.Context(), protocol, "checkout", 1, 10, 42)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, s := range decode(t, protocol, pool.Payloads[0].Parts) {
			out = append(out, s.ddType)
		}
		return out
	}
	v04, v05 := types(DDTraceV04), types(DDTraceV05)
	if !slices.Equal(v04, v05) {
		t.Errorf("v0.4 types %q, v0.5 %q", v04, v05)
	}
	if len(v04) == 0 || v04[0] != "web" {
		t.Errorf("the root (an HTTP server span) has type %q, want web", v04)
	}
	if !slices.Contains(v04, "sql") || !slices.Contains(v04, "http") {
		t.Errorf("types %q: no database or HTTP client span", v04)
	}
}

// TestEncodeDecode decodes what every encoder wrote, after the per-request trace id rewrite, and
// checks the spans: new trace id on every span, ids, parents, service, names, attributes, errors.
func TestEncodeDecode(t *testing.T) {
	for _, protocol := range Protocols() {
		for _, n := range []int{1, 10, 70} { // 70: several Jaeger UDP packets
			t.Run(fmt.Sprintf("%s/%d", protocol, n), func(t *testing.T) {
				pool, err := NewPool(t.Context(), protocol, "checkout", 3, n, 42)
				if err != nil {
					t.Fatal(err)
				}
				var req Request
				for round, ids := range [][2]uint64{{0x1111, 0x2222}, {0xdeadbeefcafe, 0x0123456789abcdef}} {
					payload := &pool.Payloads[round%len(pool.Payloads)]
					orig := make([][]byte, len(payload.Parts))
					for i, p := range payload.Parts {
						orig[i] = bytes.Clone(p)
					}
					req.Fill(payload, ids[0], ids[1])
					if req.Spans != n {
						t.Fatalf("request has %d spans, want %d", req.Spans, n)
					}
					got := decode(t, protocol, req.Parts)
					if len(got) != n {
						t.Fatalf("decoded %d spans, want %d", len(got), n)
					}
					wantHi, wantLo := tracemodel.FixID(ids[0]), tracemodel.FixID(ids[1])
					for i, s := range got {
						if s.traceHi != wantHi || s.traceLo != wantLo {
							t.Errorf("span %d: trace id %016x%016x, want %016x%016x", i, s.traceHi, s.traceLo, wantHi, wantLo)
						}
						if s.service != "checkout" {
							t.Errorf("span %d: service %q", i, s.service)
						}
						if s.name == "" || s.spanID == 0 {
							t.Errorf("span %d: name %q, id %x", i, s.name, s.spanID)
						}
						if (i == 0) != (s.parentID == 0) {
							t.Errorf("span %d: parent %x", i, s.parentID)
						}
						if i > 0 && s.parentID != got[0].spanID {
							t.Errorf("span %d: parent %x, want the root %x", i, s.parentID, got[0].spanID)
						}
						if s.attrs < 10 {
							t.Errorf("span %d: %d attributes, want at least 10", i, s.attrs)
						}
					}
					for i, p := range payload.Parts {
						if !bytes.Equal(p, orig[i]) {
							t.Fatal("Fill modified the pooled payload")
						}
					}
				}
			})
		}
	}
}

// TestPoolDistinctTraces checks that the pool's payloads are different traces.
func TestPoolDistinctTraces(t *testing.T) {
	for _, protocol := range Protocols() {
		t.Run(protocol, func(t *testing.T) {
			pool, err := NewPool(t.Context(), protocol, "s", 8, 5, 7)
			if err != nil {
				t.Fatal(err)
			}
			seen := map[string]bool{}
			for _, p := range pool.Payloads {
				got := decode(t, protocol, p.Parts)
				key := fmt.Sprintf("%x/%x/%x", got[0].traceHi, got[0].traceLo, got[0].spanID)
				if seen[key] {
					t.Errorf("payload repeated: %s", key)
				}
				seen[key] = true
			}
		})
	}
}

func TestUnknownProtocol(t *testing.T) {
	if _, err := NewPool(t.Context(), "smoke-signals", "s", 1, 1, 1); err == nil {
		t.Fatal("want an error for an unknown protocol")
	}
}

// TestDDTraceEnvAndVersionAsTracersSendThem checks that a ddtrace span carries the environment and
// version once, in the env and version tags, as dd-trace does: sending them under their
// OpenTelemetry names as well would make its documents larger than the other protocols'.
func TestDDTraceEnvAndVersionAsTracersSendThem(t *testing.T) {
	pool, err := NewPool(t.Context(), DDTraceV04, "checkout", 1, 10, 42)
	if err != nil {
		t.Fatal(err)
	}
	v, _, err := msgp.ReadIntfBytes(pool.Payloads[0].Parts[0])
	if err != nil {
		t.Fatal(err)
	}
	for _, chunk := range v.([]any) {
		for i, sv := range chunk.([]any) {
			meta := sv.(map[string]any)["meta"].(map[string]any)
			if meta["env"] != "production" || meta["version"] != "1.4.2" {
				t.Errorf("span %d: env %v, version %v; want production, 1.4.2", i, meta["env"], meta["version"])
			}
			for _, k := range []string{"deployment.environment", "service.version"} {
				if _, ok := meta[k]; ok {
					t.Errorf("span %d: meta has %s beside env/version", i, k)
				}
			}
		}
	}
}
