package translator

import (
	"encoding/hex"
	"encoding/json"
	"maps"
	"slices"
	"strconv"
	"strings"
	"unsafe"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/tracegate/tracegate/receiver/ddtracereceiver/internal/payload"
)

// linkFlagsPresent is the bit tracers set on span link flags to say "flags were set"; it is not a
// W3C trace flag.
const linkFlagsPresent = 1 << 31

// MaxEventAttributes is the attributes kept per span event, the OpenTelemetry SDKs' default
// limit; the rest are counted in the event's dropped attributes count. Event values nest, so
// they are not collected like span attributes (attrWriter), and Put's lookup makes each
// attribute cost a scan of those before it.
const MaxEventAttributes = 128

// What a pdata link and event take beyond their attributes, for the JSON meta decoding bound.
const (
	pdataLinkBytes  = 128
	pdataEventBytes = 96
)

// fillLinks writes the span's native links, or those of the _dd.span_links meta JSON when there
// are none.
//
// It reports false when the meta JSON could not be read: the caller keeps it as an attribute
// instead, so nothing the tracer sent disappears.
func fillLinks(links ptrace.SpanLinkSlice, s *payload.Span, metaJSON string) bool {
	src := s.Links
	if len(src) == 0 && metaJSON != "" {
		var ok bool
		if src, ok = parseLinksJSON(metaJSON); !ok {
			return false
		}
	}
	for _, l := range src {
		link := links.AppendEmpty()
		link.SetTraceID(traceID(l.TraceIDHigh, l.TraceID))
		link.SetSpanID(spanID(l.SpanID))
		link.TraceState().FromRaw(l.Tracestate)
		if l.Flags&linkFlagsPresent != 0 {
			link.SetFlags(l.Flags & 0xFF)
		} else {
			link.SetFlags(l.Flags)
		}
		w := newAttrWriter(link.Attributes(), len(l.Attributes))
		for _, kv := range l.Attributes {
			w.putStr(kv.Key, kv.Value)
		}
		w.finish()
	}
	return true
}

// jsonID is a trace or span id in the meta JSON forms: a decimal number, or a hex string of 16 or
// 32 characters.
type jsonID struct {
	high, low uint64
}

func (j *jsonID) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		u, perr := strconv.ParseUint(string(b), 10, 64) // a bare JSON number is decimal
		j.low = u
		return perr
	}
	if len(s) != 16 && len(s) != 32 || !isHex(s) {
		u, err := strconv.ParseUint(s, 10, 64)
		j.low = u
		return err
	}
	raw, _ := hex.DecodeString(s)
	if len(raw) == 16 {
		j.high, raw = beUint64(raw[:8]), raw[8:]
	}
	j.low = beUint64(raw)
	return nil
}

func isHex(s string) bool {
	_, err := hex.DecodeString(s)
	return err == nil
}

func beUint64(b []byte) uint64 {
	var v uint64
	for _, c := range b {
		v = v<<8 | uint64(c)
	}
	return v
}

type jsonLink struct {
	TraceID     jsonID            `json:"trace_id"`
	TraceIDHigh *jsonID           `json:"trace_id_high"`
	SpanID      jsonID            `json:"span_id"`
	Attributes  map[string]string `json:"attributes"`
	Tracestate  string            `json:"tracestate"`
	Flags       uint32            `json:"flags"`
}

// parseLinksJSON reads the _dd.span_links meta; false: unparsable, or beyond the decoding bound.
func parseLinksJSON(s string) ([]payload.Link, bool) {
	if !payload.JSONWithinBudget(s, unsafe.Sizeof(jsonLink{})+unsafe.Sizeof(payload.Link{})+pdataLinkBytes, 0) {
		return nil, false
	}
	var in []jsonLink
	if err := json.Unmarshal([]byte(s), &in); err != nil {
		return nil, false
	}
	out := make([]payload.Link, 0, len(in))
	for _, l := range in {
		high := l.TraceID.high
		if l.TraceIDHigh != nil {
			high = l.TraceIDHigh.low
		}
		out = append(out, payload.Link{
			TraceID: l.TraceID.low, TraceIDHigh: high, SpanID: l.SpanID.low,
			Attributes: sortedKVs(l.Attributes), Tracestate: l.Tracestate, Flags: l.Flags,
		})
	}
	return out, true
}

// fillEvents writes the span's native events, or those of the events meta JSON when there are
// none.
//
// It returns the attributes dropped past MaxEventAttributes, and false when the meta JSON could
// not be read, like fillLinks.
func fillEvents(events ptrace.SpanEventSlice, s *payload.Span, metaJSON string) (dropped int, ok bool) {
	if len(s.Events) == 0 && metaJSON != "" {
		return fillEventsJSON(events, metaJSON)
	}
	for _, e := range s.Events {
		ev := events.AppendEmpty()
		ev.SetName(e.Name)
		ev.SetTimestamp(pcommon.Timestamp(e.TimeUnixNano))
		for i, a := range e.Attributes {
			if pastEventLimit(ev, i, len(e.Attributes), &dropped) {
				break
			}
			putEventValue(ev.Attributes().PutEmpty(a.Key), a)
		}
	}
	return dropped, true
}

// pastEventLimit reports whether attribute i of an event's n is past MaxEventAttributes; at the
// first one past it, the rest go into the event's dropped attributes count and into *dropped.
func pastEventLimit(ev ptrace.SpanEvent, i, n int, dropped *int) bool {
	if i < MaxEventAttributes {
		return false
	}
	ev.SetDroppedAttributesCount(uint32(n - i))
	*dropped += n - i
	return true
}

func putEventValue(v pcommon.Value, a payload.EventAttribute) {
	switch a.Type {
	case payload.AttributeBool:
		v.SetBool(a.Bool)
	case payload.AttributeInt:
		v.SetInt(a.Int)
	case payload.AttributeDouble:
		v.SetDouble(a.Double)
	case payload.AttributeArray:
		sl := v.SetEmptySlice()
		for _, e := range a.Array {
			putEventValue(sl.AppendEmpty(), e)
		}
	default:
		v.SetStr(a.Str)
	}
}

type jsonEvent struct {
	Name         string         `json:"name"`
	TimeUnixNano uint64         `json:"time_unix_nano"`
	Attributes   map[string]any `json:"attributes"`
}

// fillEventsJSON reads the events meta: [{name, time_unix_nano, attributes: {k: scalar or array}}].
// It returns the attributes dropped past MaxEventAttributes, and false when the JSON is
// unparsable or beyond the decoding bound (nothing was added).
func fillEventsJSON(events ptrace.SpanEventSlice, s string) (dropped int, ok bool) {
	if !payload.JSONWithinBudget(s, unsafe.Sizeof(jsonEvent{})+pdataEventBytes, unsafe.Sizeof([]any{})) {
		return 0, false
	}
	var in []jsonEvent
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	if err := dec.Decode(&in); err != nil {
		return 0, false
	}
	for _, e := range in {
		ev := events.AppendEmpty()
		ev.SetName(e.Name)
		ev.SetTimestamp(pcommon.Timestamp(e.TimeUnixNano))
		for i, k := range slices.Sorted(maps.Keys(e.Attributes)) {
			if pastEventLimit(ev, i, len(e.Attributes), &dropped) {
				break
			}
			putJSONValue(ev.Attributes().PutEmpty(k), e.Attributes[k], 0)
		}
	}
	return dropped, true
}

func putJSONValue(v pcommon.Value, x any, depth int) {
	switch t := x.(type) {
	case string:
		v.SetStr(t)
	case bool:
		v.SetBool(t)
	case json.Number:
		if i, err := t.Int64(); err == nil {
			v.SetInt(i)
		} else if f, err := t.Float64(); err == nil {
			v.SetDouble(f)
		} else {
			v.SetStr(t.String())
		}
	case []any:
		sl := v.SetEmptySlice()
		for _, e := range t {
			if depth < 4 {
				putJSONValue(sl.AppendEmpty(), e, depth+1)
			}
		}
	default:
		b, _ := json.Marshal(t)
		v.SetStr(string(b))
	}
}
