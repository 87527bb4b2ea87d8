package loadgen

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"

	"github.com/tracegate/tracegate/internal/testbed/tracemodel"

	"github.com/jaegertracing/jaeger-idl/thrift-gen/jaeger"
	"github.com/openzipkin/zipkin-go/model"
	"github.com/openzipkin/zipkin-go/proto/zipkin_proto3"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"

	"github.com/tracegate/tracegate/internal/testbed/tracesend"
)

// Protocol names, as the -protocol flag takes them.
const (
	DDTraceV04       = "ddtrace-v0.4"
	DDTraceV05       = "ddtrace-v0.5"
	JaegerThriftHTTP = "jaeger-thrift-http"
	JaegerUDPCompact = "jaeger-udp-compact"
	ZipkinJSON       = "zipkin-json"
	ZipkinProto      = "zipkin-proto"
	OTLPHTTP         = "otlp-http"
	OTLPGRPC         = "otlp-grpc"
	ElasticAPMIntake = "elasticapm" // Elastic APM agents' intake v2 (APM Server's /intake/v2/events)
)

// Protocols lists every protocol in a stable order.
func Protocols() []string {
	return []string{OTLPGRPC, OTLPHTTP, ZipkinJSON, ZipkinProto, JaegerThriftHTTP, JaegerUDPCompact, DDTraceV04, DDTraceV05, ElasticAPMIntake}
}

// jaegerSpansPerPacket bounds a UDP packet (the agent protocol allows 65,000 bytes).
const jaegerSpansPerPacket = 30

// Encode returns the wire payload of one request carrying t: one part per HTTP body, gRPC message
// or UDP packet (only jaeger-udp-compact splits a trace into several packets).
func Encode(ctx context.Context, protocol string, t tracemodel.Trace) ([][]byte, error) {
	return encode(ctx, protocol, t, false)
}

// encode is Encode; sampled (ddtrace only) writes the priority as prioritySentinel, for a pool
// whose requests each get their trace's priority.
func encode(ctx context.Context, protocol string, t tracemodel.Trace, sampled bool) ([][]byte, error) {
	switch protocol {
	case DDTraceV04:
		return [][]byte{tracemodel.EncodeDDTraceV04([][]tracemodel.DDSpan{ddChunk(t, sampled)})}, nil
	case DDTraceV05:
		return [][]byte{tracemodel.EncodeDDTraceV05([][]tracemodel.DDSpan{ddChunk(t, sampled)})}, nil
	case JaegerThriftHTTP:
		b, err := tracesend.EncodeJaegerBinary(ctx, jaegerBatch(t, t.Spans))
		return [][]byte{b}, err
	case JaegerUDPCompact:
		var parts [][]byte
		for start := 0; start < len(t.Spans); start += jaegerSpansPerPacket {
			b, err := tracesend.EncodeJaegerEmitBatch(ctx, jaegerBatch(t, t.Spans[start:min(start+jaegerSpansPerPacket, len(t.Spans))]))
			if err != nil {
				return nil, err
			}
			parts = append(parts, b)
		}
		return parts, nil
	case ZipkinJSON:
		b, err := json.Marshal(zipkinSpans(t))
		return [][]byte{b}, err
	case ZipkinProto:
		spans := zipkinSpans(t)
		ptrs := make([]*model.SpanModel, len(spans))
		for i := range spans {
			ptrs[i] = &spans[i]
		}
		b, err := zipkin_proto3.SpanSerializer{}.Serialize(ptrs)
		return [][]byte{b}, err
	case ElasticAPMIntake:
		b, err := tracemodel.ElasticAPMEvents(t)
		return [][]byte{b}, err
	case OTLPHTTP, OTLPGRPC:
		b, err := ptraceotlp.NewExportRequestFromTraces(tracemodel.OTLPTraces(t)).MarshalProto()
		return [][]byte{b}, err
	}
	return nil, fmt.Errorf("unknown protocol %q (want one of %v)", protocol, Protocols())
}

func jaegerBatch(t tracemodel.Trace, spans []tracemodel.Span) *jaeger.Batch {
	str := func(s string) *string { return &s }
	b := &jaeger.Batch{Process: &jaeger.Process{ServiceName: t.Service, Tags: []*jaeger.Tag{
		{Key: "hostname", VType: jaeger.TagType_STRING, VStr: str(t.Host)},
		{Key: "jaeger.version", VType: jaeger.TagType_STRING, VStr: str("Go-2.30.0")},
		{Key: "ip", VType: jaeger.TagType_STRING, VStr: str("10.0.0.17")},
	}}}
	for _, s := range spans {
		js := &jaeger.Span{
			TraceIdHigh: int64(t.TraceHi), TraceIdLow: int64(t.TraceLo), SpanId: int64(s.SpanID),
			ParentSpanId: int64(s.ParentID), OperationName: s.Resource, StartTime: s.Start.UnixMicro(),
			Duration: s.Duration.Microseconds(),
			Tags:     []*jaeger.Tag{{Key: "span.kind", VType: jaeger.TagType_STRING, VStr: str(string(s.Kind))}},
		}
		if s.ParentID != 0 {
			js.References = []*jaeger.SpanRef{{
				RefType: jaeger.SpanRefType_CHILD_OF, TraceIdHigh: js.TraceIdHigh,
				TraceIdLow: js.TraceIdLow, SpanId: int64(s.ParentID),
			}}
		}
		for _, a := range s.Attrs {
			tag := &jaeger.Tag{Key: a.Key}
			switch a.Type {
			case tracemodel.AttrInt:
				tag.VType, tag.VLong = jaeger.TagType_LONG, &a.Int
			case tracemodel.AttrFloat:
				tag.VType, tag.VDouble = jaeger.TagType_DOUBLE, &a.Float
			case tracemodel.AttrBool:
				tag.VType, tag.VBool = jaeger.TagType_BOOL, &a.Bool
			default:
				tag.VType, tag.VStr = jaeger.TagType_STRING, str(a.Str)
			}
			js.Tags = append(js.Tags, tag)
		}
		if s.Error {
			yes := true
			js.Tags = append(js.Tags, &jaeger.Tag{Key: "error", VType: jaeger.TagType_BOOL, VBool: &yes})
		}
		b.Spans = append(b.Spans, js)
	}
	return b
}

func zipkinSpans(t tracemodel.Trace) []model.SpanModel {
	local := &model.Endpoint{ServiceName: t.Service, IPv4: []byte{10, 0, 0, 17}}
	out := make([]model.SpanModel, len(t.Spans))
	for i, s := range t.Spans {
		m := model.SpanModel{
			SpanContext: model.SpanContext{TraceID: model.TraceID{High: t.TraceHi, Low: t.TraceLo}, ID: model.ID(s.SpanID)},
			Name:        s.Resource, Timestamp: s.Start, Duration: s.Duration, LocalEndpoint: local,
			Tags: make(map[string]string, len(s.Attrs)+2),
		}
		if s.ParentID != 0 {
			p := model.ID(s.ParentID)
			m.ParentID = &p
		}
		switch s.Kind {
		case tracemodel.KindServer:
			m.Kind = model.Server
		case tracemodel.KindClient:
			m.Kind = model.Client
		default:
			m.Tags["span.kind"] = "internal" // Zipkin has no internal kind; the receiver reads this tag
		}
		for _, a := range s.Attrs {
			m.Tags[a.Key] = a.String()
		}
		if s.Error {
			m.Tags["error"] = "true"
		}
		out[i] = m
	}
	return out
}

// ddChunk is t as a tracer's chunk: priority 1 on the first span, or with sampled the sentinel a
// request's priority replaces (a tracer that decided the priority sends no sampling.priority tag).
func ddChunk(t tracemodel.Trace, sampled bool) []tracemodel.DDSpan {
	if sampled {
		return tracemodel.DDSpans(t, prioritySentinel, true)
	}
	return tracemodel.DDSpans(t, 1, false)
}

// idKind is how a trace id (or half of it) is written in a payload.
type idKind int

const (
	idHiBE8    idKind = iota // high 64 bits, 8 bytes big-endian (msgpack uint64 body, Thrift binary i64)
	idLoBE8                  // low 64 bits, 8 bytes big-endian
	idHiHex16                // high 64 bits, 16 lowercase hex digits (Datadog's _dd.p.tid)
	idHex32                  // 128 bits, 32 lowercase hex digits (Zipkin JSON, Elastic APM intake)
	idRaw16                  // 128 bits, 16 bytes (protobuf bytes fields)
	idHiVarint               // high 64 bits as a Thrift compact zigzag varint (10 bytes for our ids)
	idLoVarint
)

// encodeID writes the encoding of kind for (hi, lo) into dst, which must have its width.
func encodeID(dst []byte, kind idKind, hi, lo uint64) {
	switch kind {
	case idHiBE8:
		binary.BigEndian.PutUint64(dst, hi)
	case idLoBE8:
		binary.BigEndian.PutUint64(dst, lo)
	case idHiHex16:
		putHex(dst, hi)
	case idHex32:
		putHex(dst, hi)
		putHex(dst[16:], lo)
	case idRaw16:
		binary.BigEndian.PutUint64(dst, hi)
		binary.BigEndian.PutUint64(dst[8:], lo)
	case idHiVarint:
		putZigzag10(dst, hi)
	case idLoVarint:
		putZigzag10(dst, lo)
	}
}

func idWidth(kind idKind) int {
	switch kind {
	case idHiBE8, idLoBE8:
		return 8
	case idHiHex16, idRaw16:
		return 16
	case idHex32:
		return 32
	default:
		return 10
	}
}

const hexDigits = "0123456789abcdef"

func putHex(dst []byte, v uint64) {
	for i := 15; i >= 0; i-- {
		dst[i] = hexDigits[v&0xf]
		v >>= 4
	}
}

// putZigzag10 writes int64(v) as a zigzag varint; for ids from tracemodel.FixID it is exactly 10 bytes.
func putZigzag10(dst []byte, v uint64) {
	n := int64(v)
	z := uint64((n << 1) ^ (n >> 63))
	for i := range 9 {
		dst[i] = byte(z) | 0x80
		z >>= 7
	}
	dst[9] = byte(z)
}

// idKinds are the trace id encodings each protocol's payload contains.
func idKinds(protocol string) []idKind {
	switch protocol {
	case DDTraceV04, DDTraceV05:
		return []idKind{idLoBE8, idHiHex16}
	case JaegerThriftHTTP:
		return []idKind{idHiBE8, idLoBE8}
	case JaegerUDPCompact:
		return []idKind{idHiVarint, idLoVarint}
	case ZipkinJSON, ElasticAPMIntake:
		return []idKind{idHex32}
	default: // zipkin-proto, OTLP
		return []idKind{idRaw16}
	}
}

// idSlot is one place of a trace id in a payload part.
type idSlot struct {
	part, off int
	kind      idKind
}

// findIDSlots finds every occurrence of t's trace id in the encoded parts.
func findIDSlots(protocol string, t tracemodel.Trace, parts [][]byte) []idSlot {
	var slots []idSlot
	for _, kind := range idKinds(protocol) {
		want := make([]byte, idWidth(kind))
		encodeID(want, kind, t.TraceHi, t.TraceLo)
		for p, b := range parts {
			for off := 0; ; {
				i := bytes.Index(b[off:], want)
				if i < 0 {
					break
				}
				slots = append(slots, idSlot{part: p, off: off + i, kind: kind})
				off += i + len(want)
			}
		}
	}
	return slots
}

// expectedSlots is how many trace id occurrences a payload of n spans has: a sanity check that the
// rewrite will reach every span.
func expectedSlots(protocol string, n int) int {
	switch protocol {
	case DDTraceV04, DDTraceV05:
		return n + 1 // every span's trace_id, the root's _dd.p.tid
	case JaegerThriftHTTP, JaegerUDPCompact:
		// every span's high and low half, and the child-of reference of every child span
		return 2*n + 2*max(n-1, 0)
	default: // every span's (Elastic APM: every event's) trace id
		return n
	}
}

// contentType is the Content-Type of an HTTP protocol.
func contentType(protocol string) string {
	switch protocol {
	case DDTraceV04, DDTraceV05:
		return "application/msgpack"
	case JaegerThriftHTTP:
		return "application/x-thrift"
	case ZipkinJSON:
		return "application/json"
	case ElasticAPMIntake:
		return "application/x-ndjson"
	default:
		return "application/x-protobuf"
	}
}

// path is the URL path of an HTTP protocol.
func path(protocol string) string {
	switch protocol {
	case DDTraceV04:
		return "/v0.4/traces"
	case DDTraceV05:
		return "/v0.5/traces"
	case JaegerThriftHTTP:
		return "/api/traces"
	case ZipkinJSON, ZipkinProto:
		return "/api/v2/spans"
	case ElasticAPMIntake:
		return "/intake/v2/events"
	default:
		return "/v1/traces"
	}
}
