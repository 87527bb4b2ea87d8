package translator

import (
	"math"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"google.golang.org/protobuf/encoding/protowire"
)

// manyAttributes is the attribute count above which a span's attributes are collected and built
// in one pass. pcommon.Map's Put looks the key up first, a linear scan: n attributes cost n²/2
// key comparisons. That is nothing for a real span (tens of tags) and hours for a hostile one (a
// 25 MiB body holds a span of millions of tags).
const manyAttributes = 64

// spareAttributes is the room a span's attribute map gets beyond its own: the document id that
// tracegate's pipelines add next (elasticmapping) then fits, instead of copying the whole list
// into a larger one for one attribute more.
const spareAttributes = 1

// attrKind is the type of a collected attribute value.
type attrKind uint8

const (
	kindStr attrKind = iota
	kindInt
	kindDouble
	kindBytes
	kindBool
	kindStrSlice // a string[] of one value
)

type attr struct {
	key  string
	kind attrKind
	str  string
	num  uint64 // int64 or float64 bits
	raw  []byte
}

// attrWriter writes a span's attributes with the semantics of pcommon.Map's Put (a repeated key
// keeps its first position and takes the last value), either straight into the map or, for
// spans with more than manyAttributes, collected with a hash index and built at finish.
type attrWriter struct {
	m     pcommon.Map
	list  []attr         // nil: writing straight into m
	index map[string]int // position of each key in list
}

func newAttrWriter(m pcommon.Map, expected int) attrWriter {
	if expected <= manyAttributes {
		m.EnsureCapacity(expected + spareAttributes)
		return attrWriter{m: m}
	}
	return attrWriter{m: m, list: make([]attr, 0, expected), index: make(map[string]int, expected)}
}

func (w *attrWriter) put(a attr) {
	if i, ok := w.index[a.key]; ok {
		w.list[i] = a
		return
	}
	w.index[a.key] = len(w.list)
	w.list = append(w.list, a)
}

func (w *attrWriter) putStr(k, v string) {
	if w.list == nil {
		w.m.PutStr(k, v)
		return
	}
	w.put(attr{key: k, kind: kindStr, str: v})
}

func (w *attrWriter) putInt(k string, v int64) {
	if w.list == nil {
		w.m.PutInt(k, v)
		return
	}
	w.put(attr{key: k, kind: kindInt, num: uint64(v)})
}

func (w *attrWriter) putDouble(k string, v float64) {
	if w.list == nil {
		w.m.PutDouble(k, v)
		return
	}
	w.put(attr{key: k, kind: kindDouble, num: math.Float64bits(v)})
}

func (w *attrWriter) putBool(k string, v bool) {
	if w.list == nil {
		w.m.PutBool(k, v)
		return
	}
	var n uint64
	if v {
		n = 1
	}
	w.put(attr{key: k, kind: kindBool, num: n})
}

// putStrSlice writes a one-element string array (HTTP headers are string[] by the conventions).
func (w *attrWriter) putStrSlice(k, v string) {
	if w.list == nil {
		w.m.PutEmptySlice(k).AppendEmpty().SetStr(v)
		return
	}
	w.put(attr{key: k, kind: kindStrSlice, str: v})
}

func (w *attrWriter) putBytes(k string, v []byte) {
	if w.list == nil {
		w.m.PutEmptyBytes(k).FromRaw(v)
		return
	}
	w.put(attr{key: k, kind: kindBytes, raw: v})
}

// finish builds collected attributes into the map. pdata has no way to append without the lookup,
// but its protobuf decoder appends: the attributes are encoded as the OTLP span they belong to
// and decoded, in linear time and in order.
func (w *attrWriter) finish() {
	if w.list == nil {
		return
	}
	size := 0
	for _, a := range w.list {
		size += 16 + len(a.key) + len(a.str) + len(a.raw) // tags, lengths and a varint or double
	}
	span := make([]byte, 0, size)
	for _, a := range w.list {
		span = appendKeyValue(span, a)
	}
	scope := protowire.AppendBytes(protowire.AppendTag(nil, 2, protowire.BytesType), span) // ScopeSpans.spans
	rs := protowire.AppendBytes(protowire.AppendTag(nil, 2, protowire.BytesType), scope)   // ResourceSpans.scope_spans
	req := protowire.AppendBytes(protowire.AppendTag(nil, 1, protowire.BytesType), rs)     // ExportTraceServiceRequest.resource_spans
	var u ptrace.ProtoUnmarshaler
	td, err := u.UnmarshalTraces(req)
	if err != nil { // our own encoding of valid values: cannot happen, but never lose the attributes
		for _, a := range w.list {
			w.putDirect(a)
		}
		return
	}
	td.ResourceSpans().At(0).ScopeSpans().At(0).Spans().At(0).Attributes().MoveTo(w.m)
}

// putDirect is the slow path finish falls back on.
func (w *attrWriter) putDirect(a attr) {
	switch a.kind {
	case kindStr:
		w.m.PutStr(a.key, a.str)
	case kindInt:
		w.m.PutInt(a.key, int64(a.num))
	case kindDouble:
		w.m.PutDouble(a.key, math.Float64frombits(a.num))
	case kindBytes:
		w.m.PutEmptyBytes(a.key).FromRaw(a.raw)
	case kindBool:
		w.m.PutBool(a.key, a.num != 0)
	case kindStrSlice:
		w.m.PutEmptySlice(a.key).AppendEmpty().SetStr(a.str)
	}
}

// appendKeyValue appends an OTLP KeyValue as Span.attributes (field 9), sizes computed up front
// so nothing is encoded twice.
func appendKeyValue(b []byte, a attr) []byte {
	var valueSize int // AnyValue's one field, tag included
	switch a.kind {
	case kindStr:
		valueSize = 1 + protowire.SizeBytes(len(a.str))
	case kindInt:
		valueSize = 1 + protowire.SizeVarint(a.num)
	case kindDouble:
		valueSize = 1 + protowire.SizeFixed64()
	case kindBytes:
		valueSize = 1 + protowire.SizeBytes(len(a.raw))
	case kindBool:
		valueSize = 1 + 1
	case kindStrSlice: // AnyValue.array_value{values: [AnyValue{string_value}]}
		valueSize = 1 + protowire.SizeBytes(arrayOfOneSize(a.str))
	}
	kvSize := 1 + protowire.SizeBytes(len(a.key)) + 1 + protowire.SizeBytes(valueSize)
	b = protowire.AppendVarint(protowire.AppendTag(b, 9, protowire.BytesType), uint64(kvSize))
	b = protowire.AppendString(protowire.AppendTag(b, 1, protowire.BytesType), a.key)
	b = protowire.AppendVarint(protowire.AppendTag(b, 2, protowire.BytesType), uint64(valueSize))
	switch a.kind {
	case kindStr:
		b = protowire.AppendString(protowire.AppendTag(b, 1, protowire.BytesType), a.str)
	case kindInt:
		b = protowire.AppendVarint(protowire.AppendTag(b, 3, protowire.VarintType), a.num)
	case kindDouble:
		b = protowire.AppendFixed64(protowire.AppendTag(b, 4, protowire.Fixed64Type), a.num)
	case kindBytes:
		b = protowire.AppendBytes(protowire.AppendTag(b, 7, protowire.BytesType), a.raw)
	case kindBool:
		b = protowire.AppendVarint(protowire.AppendTag(b, 2, protowire.VarintType), a.num)
	case kindStrSlice:
		b = protowire.AppendVarint(protowire.AppendTag(b, 5, protowire.BytesType), uint64(arrayOfOneSize(a.str)))
		b = protowire.AppendVarint(protowire.AppendTag(b, 1, protowire.BytesType), uint64(1+protowire.SizeBytes(len(a.str))))
		b = protowire.AppendString(protowire.AppendTag(b, 1, protowire.BytesType), a.str)
	}
	return b
}

// arrayOfOneSize is the encoded size of an ArrayValue holding one string AnyValue.
func arrayOfOneSize(s string) int {
	return 1 + protowire.SizeBytes(1+protowire.SizeBytes(len(s)))
}
