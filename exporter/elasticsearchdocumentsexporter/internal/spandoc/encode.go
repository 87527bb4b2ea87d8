// Package spandoc writes spans and span events as the OpenTelemetry-native Elasticsearch
// documents of the contrib elasticsearch exporter's otel mapping mode (v0.148.0): the same
// fields, in the same order, byte for byte (differential test against the exporter itself).
// What it does differently is where the time goes: the resource and scope part of the
// documents of one scope is written once, not once per span, and values are appended straight
// into the document instead of through a generic visitor.
package spandoc

import (
	"strconv"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// Encoder writes documents; it keeps scratch space, so one goroutine uses one Encoder.
type Encoder struct {
	keys keys
	geo  []geoPoint
}

// Tail is the end every document of one scope shares: its resource, its scope and the closing
// brace.
func (e *Encoder) Tail(buf []byte, res pcommon.Resource, resSchema string, scope pcommon.InstrumentationScope, scopeSchema string) []byte {
	buf = append(buf, `,"resource":{`...)
	first := true
	buf, first = appendStringSkipEmpty(buf, "schema_url", resSchema, first)
	buf, first = e.appendAttributes(buf, res.Attributes(), first, "")
	buf = appendIntSkipZero(buf, "dropped_attributes_count", int64(res.DroppedAttributesCount()), first)
	buf = append(buf, `},"scope":{`...)
	first = true
	buf, first = appendStringSkipEmpty(buf, "schema_url", scopeSchema, first)
	buf, first = appendStringSkipEmpty(buf, "name", scope.Name(), first)
	buf, first = appendStringSkipEmpty(buf, "version", scope.Version(), first)
	buf, first = e.appendAttributes(buf, scope.Attributes(), first, "")
	buf = appendIntSkipZero(buf, "dropped_attributes_count", int64(scope.DroppedAttributesCount()), first)
	return append(buf, "}}"...)
}

// AppendSpan appends the span's document; tail is its scope's Tail.
func (e *Encoder) AppendSpan(buf []byte, span ptrace.Span, idx Index, tail []byte) []byte {
	buf = appendTimestamp(buf, span.StartTimestamp())
	buf = appendDataStream(buf, idx)
	buf = appendTraceID(buf, span.TraceID())
	buf = appendSpanID(buf, "span_id", span.SpanID())
	buf, _ = appendStringSkipEmpty(buf, "trace_state", span.TraceState().AsRaw(), false)
	buf = appendSpanID(buf, "parent_span_id", span.ParentSpanID())
	buf, _ = appendStringSkipEmpty(buf, "name", span.Name(), false)
	buf, _ = appendStringSkipEmpty(buf, "kind", span.Kind().String(), false)
	buf = appendKey(buf, "duration", false)
	buf = strconv.AppendUint(buf, uint64(span.EndTimestamp()-span.StartTimestamp()), 10)
	buf, _ = e.appendAttributes(buf, span.Attributes(), false, "")
	buf = appendIntSkipZero(buf, "dropped_attributes_count", int64(span.DroppedAttributesCount()), false)
	buf = appendIntSkipZero(buf, "dropped_events_count", int64(span.DroppedEventsCount()), false)
	buf = e.appendLinks(buf, span.Links())
	buf = appendIntSkipZero(buf, "dropped_links_count", int64(span.DroppedLinksCount()), false)
	buf = appendStatus(buf, span.Status())
	return append(buf, tail...)
}

// AppendSpanEvent appends the document of one of the span's events (a log document: the span's
// ids, the event's name and attributes, with event.name set to the name).
func (e *Encoder) AppendSpanEvent(buf []byte, span ptrace.Span, ev ptrace.SpanEvent, idx Index, tail []byte) []byte {
	buf = appendTimestamp(buf, ev.Timestamp())
	buf = appendDataStream(buf, idx)
	buf = appendTraceID(buf, span.TraceID())
	buf = appendSpanID(buf, "span_id", span.SpanID())
	buf = appendIntSkipZero(buf, "dropped_attributes_count", int64(ev.DroppedAttributesCount()), false)
	buf, _ = appendStringSkipEmpty(buf, "event_name", ev.Name(), false)
	buf, _ = e.appendAttributes(buf, ev.Attributes(), false, ev.Name())
	return append(buf, tail...)
}

func (e *Encoder) appendLinks(buf []byte, links ptrace.SpanLinkSlice) []byte {
	buf = append(buf, `,"links":[`...)
	for i, l := range links.All() {
		if i > 0 {
			buf = append(buf, ',')
		}
		buf = append(buf, '{')
		first := true
		if id := l.TraceID(); !id.IsEmpty() {
			buf = appendKey(buf, "trace_id", first)
			buf, first = appendHexID(buf, id[:]), false
		}
		if id := l.SpanID(); !id.IsEmpty() {
			buf = appendKey(buf, "span_id", first)
			buf, first = appendHexID(buf, id[:]), false
		}
		buf, first = appendStringSkipEmpty(buf, "trace_state", l.TraceState().AsRaw(), first)
		buf, first = e.appendAttributes(buf, l.Attributes(), first, "")
		buf = appendIntSkipZero(buf, "dropped_attributes_count", int64(l.DroppedAttributesCount()), first)
		buf = append(buf, '}')
	}
	return append(buf, ']')
}

func appendStatus(buf []byte, s ptrace.Status) []byte {
	buf = append(buf, `,"status":{`...)
	first := true
	buf, first = appendStringSkipEmpty(buf, "message", s.Message(), first)
	if s.Code() != ptrace.StatusCodeUnset {
		buf, _ = appendStringSkipEmpty(buf, "code", s.Code().String(), first)
	}
	return append(buf, '}')
}

// appendTimestamp opens the document with @timestamp: milliseconds, a dot, then the nanoseconds
// left over written as a plain integer, as the contrib exporter writes it.
func appendTimestamp(buf []byte, ts pcommon.Timestamp) []byte {
	nsec := uint64(ts)
	msec := nsec / 1e6
	nsec -= msec * 1e6
	buf = append(buf, `{"@timestamp":"`...)
	buf = strconv.AppendUint(buf, msec, 10)
	buf = append(buf, '.')
	buf = strconv.AppendUint(buf, nsec, 10)
	return append(buf, '"')
}

func appendDataStream(buf []byte, idx Index) []byte {
	if !idx.IsDataStream() {
		return buf
	}
	buf = append(buf, `,"data_stream":{"type":`...)
	buf = appendString(buf, idx.Type)
	buf = append(buf, `,"dataset":`...)
	buf = appendString(buf, idx.Dataset)
	buf = append(buf, `,"namespace":`...)
	buf = appendString(buf, idx.Namespace)
	return append(buf, '}')
}

func appendTraceID(buf []byte, id pcommon.TraceID) []byte {
	if id.IsEmpty() {
		return buf
	}
	return appendHexID(append(buf, `,"trace_id":`...), id[:])
}

func appendSpanID(buf []byte, key string, id pcommon.SpanID) []byte {
	if id.IsEmpty() {
		return buf
	}
	return appendHexID(appendKey(buf, key, false), id[:])
}

func appendStringSkipEmpty(buf []byte, key, value string, first bool) ([]byte, bool) {
	if value == "" {
		return buf, first
	}
	return appendString(appendKey(buf, key, first), value), false
}

// appendIntSkipZero: the last field of its object where first matters, so no first is returned.
func appendIntSkipZero(buf []byte, key string, v int64, first bool) []byte {
	if v == 0 {
		return buf
	}
	return strconv.AppendInt(appendKey(buf, key, first), v, 10)
}
