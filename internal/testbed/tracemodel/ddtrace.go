package tracemodel

import (
	"fmt"
	"maps"
	"slices"

	"github.com/tinylib/msgp/msgp"
)

// DDSpan is one Datadog span as a tracer sends it (for EncodeDDTraceV04 and EncodeDDTraceV05).
type DDSpan struct {
	Service, Name, Resource   string
	TraceID, SpanID, ParentID uint64
	Start, Duration           int64 // Unix nanoseconds, nanoseconds
	Error                     int32
	// Type is the span type an integration sets (web, http, sql, …); empty for a custom span.
	Type    string
	Meta    map[string]string
	Metrics map[string]float64
}

// EncodeDDTraceV04 returns the /v0.4/traces msgpack body for the chunks (one chunk per trace).
// Integers are written in their shortest msgpack form, so an id >= 2^32 always takes 9 bytes.
func EncodeDDTraceV04(chunks [][]DDSpan) []byte { return encodeV04(chunks) }

// EncodeDDTraceV05 returns the /v0.5/traces body (string dictionary + span arrays) for the chunks.
func EncodeDDTraceV05(chunks [][]DDSpan) []byte { return encodeV05(chunks) }

// encodeV04 writes the v0.4 msgpack body: an array of traces, each an array of span maps.
func encodeV04(chunks [][]DDSpan) []byte {
	b := msgp.AppendArrayHeader(nil, uint32(len(chunks)))
	for _, c := range chunks {
		b = msgp.AppendArrayHeader(b, uint32(len(c)))
		for _, s := range c {
			fields := uint32(11)
			if s.Type != "" {
				fields++
			}
			b = msgp.AppendMapHeader(b, fields)
			b = msgp.AppendString(msgp.AppendString(b, "service"), s.Service)
			b = msgp.AppendString(msgp.AppendString(b, "name"), s.Name)
			b = msgp.AppendString(msgp.AppendString(b, "resource"), s.Resource)
			b = msgp.AppendUint64(msgp.AppendString(b, "trace_id"), s.TraceID)
			b = msgp.AppendUint64(msgp.AppendString(b, "span_id"), s.SpanID)
			b = msgp.AppendUint64(msgp.AppendString(b, "parent_id"), s.ParentID)
			b = msgp.AppendInt64(msgp.AppendString(b, "start"), s.Start)
			b = msgp.AppendInt64(msgp.AppendString(b, "duration"), s.Duration)
			b = msgp.AppendInt32(msgp.AppendString(b, "error"), s.Error)
			if s.Type != "" {
				b = msgp.AppendString(msgp.AppendString(b, "type"), s.Type)
			}
			b = msgp.AppendMapHeader(msgp.AppendString(b, "meta"), uint32(len(s.Meta)))
			for _, k := range slices.Sorted(maps.Keys(s.Meta)) {
				b = msgp.AppendString(msgp.AppendString(b, k), s.Meta[k])
			}
			b = msgp.AppendMapHeader(msgp.AppendString(b, "metrics"), uint32(len(s.Metrics)))
			for _, k := range slices.Sorted(maps.Keys(s.Metrics)) {
				b = msgp.AppendFloat64(msgp.AppendString(b, k), s.Metrics[k])
			}
		}
	}
	return b
}

// encodeV05 writes the v0.5 dictionary format: [strings, traces of 12-element span arrays].
func encodeV05(chunks [][]DDSpan) []byte {
	dict := []string{""}
	index := map[string]uint32{"": 0}
	id := func(s string) uint32 {
		if i, ok := index[s]; ok {
			return i
		}
		index[s] = uint32(len(dict))
		dict = append(dict, s)
		return index[s]
	}
	body := msgp.AppendArrayHeader(nil, uint32(len(chunks)))
	for _, c := range chunks {
		body = msgp.AppendArrayHeader(body, uint32(len(c)))
		for _, s := range c {
			body = msgp.AppendArrayHeader(body, 12)
			body = msgp.AppendUint32(body, id(s.Service))
			body = msgp.AppendUint32(body, id(s.Name))
			body = msgp.AppendUint32(body, id(s.Resource))
			body = msgp.AppendUint64(body, s.TraceID)
			body = msgp.AppendUint64(body, s.SpanID)
			body = msgp.AppendUint64(body, s.ParentID)
			body = msgp.AppendInt64(body, s.Start)
			body = msgp.AppendInt64(body, s.Duration)
			body = msgp.AppendInt32(body, s.Error)
			body = msgp.AppendMapHeader(body, uint32(len(s.Meta)))
			for _, k := range slices.Sorted(maps.Keys(s.Meta)) {
				body = msgp.AppendUint32(msgp.AppendUint32(body, id(k)), id(s.Meta[k]))
			}
			body = msgp.AppendMapHeader(body, uint32(len(s.Metrics)))
			for _, k := range slices.Sorted(maps.Keys(s.Metrics)) {
				body = msgp.AppendFloat64(msgp.AppendUint32(body, id(k)), s.Metrics[k])
			}
			body = msgp.AppendUint32(body, id(s.Type)) // the format always has the field: "" when untyped
		}
	}
	b := msgp.AppendArrayHeader(nil, 2)
	b = msgp.AppendArrayHeader(b, uint32(len(dict)))
	for _, s := range dict {
		b = msgp.AppendString(b, s)
	}
	return append(b, body...)
}

// DDSpans returns t as a tracer's chunk, priority on its first span. dropPriorityTag leaves out the
// "sampling.priority" tag every generated span carries, as a tracer does when it decided the
// trace's priority itself.
func DDSpans(t Trace, priority float64, dropPriorityTag bool) []DDSpan {
	out := make([]DDSpan, len(t.Spans))
	for i, s := range t.Spans {
		d := DDSpan{
			Service: t.Service, Name: s.Name, Resource: s.Resource, TraceID: t.TraceLo, SpanID: s.SpanID,
			ParentID: s.ParentID, Start: s.Start.UnixNano(), Duration: int64(s.Duration), Type: ddSpanType(s.Name),
			Meta:    map[string]string{"span.kind": string(s.Kind)},
			Metrics: map[string]float64{},
		}
		if i == 0 {
			// 128-bit trace ids: the high half travels in the chunk's first span, as tracers send it.
			d.Meta["_dd.p.tid"] = fmt.Sprintf("%016x", t.TraceHi)
			d.Metrics["_sampling_priority_v1"] = priority
			d.Metrics["_dd.top_level"] = 1
		}
		if s.Error {
			d.Error = 1
			d.Meta["error.message"] = "internal server error"
			d.Meta["error.type"] = "*errors.errorString"
		}
		for _, a := range s.Attrs {
			key := ddKey(a.Key)
			if dropPriorityTag && key == AttrSamplingPriority {
				// A tracer turns this tag into the trace's priority and does not send it; sent
				// as a metric on every span, it would reach the sampler as each span's own
				// priority 1 beside the chunk's.
				continue
			}
			switch a.Type {
			case AttrInt:
				d.Metrics[key] = float64(a.Int)
			case AttrFloat:
				d.Metrics[key] = a.Float
			default: // strings, and booleans as tracers send them
				d.Meta[key] = a.String()
			}
		}
		out[i] = d
	}
	return out
}

// ddSpanType is the span type Datadog's integrations give the operations tracegen makes
// (dd-trace-go's net/http server and client, database/sql, html/template), sent in both v0.4 and
// v0.5 so that their documents compare.
func ddSpanType(operation string) string {
	switch operation {
	case "http.request":
		return "web"
	case "http.client.request":
		return "http"
	case "postgresql.query":
		return "sql"
	case "template.render":
		return "template"
	}
	return ""
}

// ddKey names an attribute as a Datadog tracer tags it. The environment and version travel in the
// env and version tags (DD_ENV, DD_VERSION), not a second time under their OpenTelemetry names, so
// a ddtrace request carries what the other protocols' requests carry and their documents compare.
func ddKey(k string) string {
	switch k {
	case "deployment.environment":
		return "env"
	case "service.version":
		return "version"
	}
	return k
}
