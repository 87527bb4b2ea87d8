package payload

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"strings"
	"unicode/utf8"

	"github.com/tinylib/msgp/msgp"
)

// ErrTooManyElements is returned when a header claims more elements than the remaining bytes
// could hold (every element takes at least one byte), or when the elements would take more memory
// than the payload's size allows (maxStructBytesPerBodyByte).
var ErrTooManyElements = errors.New("too many elements for the payload's size")

// arrayHeader reads an array header (nil counts as empty) and checks it against the bytes left.
func arrayHeader(b []byte) (int, []byte, error) {
	if msgp.IsNil(b) {
		return 0, b[1:], nil
	}
	n, rest, err := msgp.ReadArrayHeaderBytes(b)
	if err != nil {
		return 0, b, err
	}
	if int64(n) > int64(len(rest)) {
		return 0, b, fmt.Errorf("%w: array of %d", ErrTooManyElements, n)
	}
	return int(n), rest, nil
}

// mapHeader reads a map header (nil counts as empty) and checks it against the bytes left.
func mapHeader(b []byte) (int, []byte, error) {
	if msgp.IsNil(b) {
		return 0, b[1:], nil
	}
	n, rest, err := msgp.ReadMapHeaderBytes(b)
	if err != nil {
		return 0, b, err
	}
	if 2*int64(n) > int64(len(rest)) {
		return 0, b, fmt.Errorf("%w: map of %d", ErrTooManyElements, n)
	}
	return int(n), rest, nil
}

// The msgpack type bytes of the fast paths (the general paths use msgp).
const (
	msgpPosFixintMax = 0x7f
	msgpFixstr       = 0xa0 // 0b101xxxxx, xxxxx the length
	msgpFloat64      = 0xcb
	msgpUint64       = 0xcf
	msgpInt32        = 0xd2
	msgpInt64        = 0xd3
)

// reader decodes one body. Every string it returns is a substring of src, one copy of the whole
// body (of v0.5's dictionary only), instead of one allocation per string: decoding then allocates
// per span only what pdata needs. The strings keep src alive as long as the spans live, which
// costs the body's msgpack framing on top of the string bytes themselves.
type reader struct {
	src string // the body, or the part of it that holds its strings, as a string
	n   int    // the body's length (offsets into src count from its start)
	// The spans and their meta and metrics are cut from slabs: a few allocations for many spans
	// instead of three per span, and none once a pooled reader's slabs have grown (see release).
	kvs   slab[KV]
	kfs   slab[KF]
	spans slab[Span]
	// budget is what is left of the bytes of structures the body may decode to (charge).
	budget int
	// nilSpans counts the nil entries readSpans skipped (Payload.NilSpans).
	nilSpans int
	// The skim's scratch (skimChunk, scratchSpans), reused from chunk to chunk.
	scratch    []skimmedSpan
	scratchOut []Span
	scratchKF  []KF
}

// sub returns the substring of src that raw (a subslice of the body just before rest) covers.
func (r *reader) sub(raw, rest []byte) string {
	end := r.n - len(rest)
	return r.src[end-len(raw) : end]
}

// shortStrHeader is the length and header size of a fixstr, str8 or str16 at b (the encodings of
// most strings of a payload); hdr 0 for any other encoding, or a header cut short.
func shortStrHeader(b []byte) (n, hdr int) {
	if len(b) == 0 {
		return 0, 0
	}
	switch c := b[0]; {
	case c >= 0xa0 && c <= 0xbf:
		return int(c & 0x1f), 1
	case c == 0xd9 && len(b) >= 2:
		return int(b[1]), 2
	case c == 0xda && len(b) >= 3:
		return int(b[1])<<8 | int(b[2]), 3
	}
	return 0, 0
}

// readString reads a str or bin (nil is ""), repairing invalid UTF-8 as the agent does.
func (r *reader) readString(b []byte) (string, []byte, error) {
	// Fast path for the common encodings (fixstr, str8, str16): strings are most of a payload.
	if n, hdr := shortStrHeader(b); hdr > 0 && len(b) >= hdr+n {
		raw, rest := b[hdr:hdr+n], b[hdr+n:]
		if isASCII(raw) || utf8.Valid(raw) {
			return r.sub(raw, rest), rest, nil
		}
		return repairUTF8(raw), rest, nil
	}
	if msgp.IsNil(b) {
		return "", b[1:], nil
	}
	var raw []byte
	var err error
	switch t := msgp.NextType(b); t {
	case msgp.StrType:
		raw, b, err = msgp.ReadStringZC(b)
	case msgp.BinType:
		raw, b, err = msgp.ReadBytesZC(b)
	default:
		return "", b, msgp.TypeError{Encoded: t, Method: msgp.StrType}
	}
	if err != nil {
		return "", b, err
	}
	if isASCII(raw) || utf8.Valid(raw) {
		return r.sub(raw, b), b, nil
	}
	return repairUTF8(raw), b, nil
}

// isASCII reports whether b is all ASCII, 8 bytes at a time, the last word overlapping the one
// before it. Nearly every string of a payload is ASCII and short, where this is 3–4 times faster
// than utf8.Valid, which then only runs for the rest.
func isASCII(b []byte) bool {
	n := len(b)
	if n < 8 {
		var or byte
		for _, c := range b {
			or |= c
		}
		return or < utf8.RuneSelf
	}
	var or uint64
	for i := 0; i+8 <= n; i += 8 {
		or |= binary.LittleEndian.Uint64(b[i:])
	}
	or |= binary.LittleEndian.Uint64(b[n-8:])
	return or&0x8080808080808080 == 0
}

// repairUTF8 replaces every invalid byte with U+FFFD, as the agent does (strings.ToValidUTF8
// would replace a run of them with one, and the documents would differ from the agent's).
func repairUTF8(raw []byte) string {
	var sb strings.Builder
	sb.Grow(len(raw) + 8)
	for len(raw) > 0 {
		r, size := utf8.DecodeRune(raw)
		if r == utf8.RuneError && size == 1 {
			sb.WriteRune(utf8.RuneError)
		} else {
			sb.Write(raw[:size])
		}
		raw = raw[size:]
	}
	return sb.String()
}

// readUint64 reads an unsigned id: nil is 0, and a negative int is reinterpreted as unsigned
// because Java encodes unsigned ids as signed longs.
func readUint64(b []byte) (uint64, []byte, error) {
	// Fast paths for what tracers send for ids: a positive fixint or a uint64.
	if len(b) > 0 && b[0] <= msgpPosFixintMax {
		return uint64(b[0]), b[1:], nil
	}
	if len(b) >= 9 && b[0] == msgpUint64 {
		return binary.BigEndian.Uint64(b[1:9]), b[9:], nil
	}
	if msgp.IsNil(b) {
		return 0, b[1:], nil
	}
	switch t := msgp.NextType(b); t {
	case msgp.UintType:
		return msgp.ReadUint64Bytes(b)
	case msgp.IntType:
		i, rest, err := msgp.ReadInt64Bytes(b)
		return uint64(i), rest, err
	default:
		return 0, b, msgp.TypeError{Encoded: t, Method: msgp.UintType}
	}
}

// readInt64 reads a signed integer: nil is 0, a uint is accepted unless it overflows.
func readInt64(b []byte) (int64, []byte, error) {
	// Fast paths for what tracers send for times and durations: a positive fixint, an int64 or an
	// int32.
	switch {
	case len(b) > 0 && b[0] <= msgpPosFixintMax:
		return int64(b[0]), b[1:], nil
	case len(b) >= 9 && b[0] == msgpInt64:
		return int64(binary.BigEndian.Uint64(b[1:9])), b[9:], nil
	case len(b) >= 5 && b[0] == msgpInt32:
		return int64(int32(binary.BigEndian.Uint32(b[1:5]))), b[5:], nil
	}
	if msgp.IsNil(b) {
		return 0, b[1:], nil
	}
	switch t := msgp.NextType(b); t {
	case msgp.IntType:
		return msgp.ReadInt64Bytes(b)
	case msgp.UintType:
		u, rest, err := msgp.ReadUint64Bytes(b)
		if err != nil {
			return 0, b, err
		}
		if u > math.MaxInt64 {
			return 0, b, errors.New("found uint64, overflows int64")
		}
		return int64(u), rest, nil
	default:
		return 0, b, msgp.TypeError{Encoded: t, Method: msgp.IntType}
	}
}

// readInt32 reads a signed 32-bit integer with the same tolerance.
func readInt32(b []byte) (int32, []byte, error) {
	i, rest, err := readInt64(b)
	if err != nil {
		return 0, b, err
	}
	if i > math.MaxInt32 || i < math.MinInt32 {
		return 0, b, fmt.Errorf("integer %d overflows int32", i)
	}
	return int32(i), rest, nil
}

// readUint32 reads an unsigned 32-bit integer (nil is 0; a negative int is an error).
func readUint32(b []byte) (uint32, []byte, error) {
	if msgp.IsNil(b) {
		return 0, b[1:], nil
	}
	i, rest, err := readInt64(b)
	if err != nil {
		// a uint64 above MaxInt64 is certainly above MaxUint32
		return 0, b, err
	}
	if i < 0 || i > math.MaxUint32 {
		return 0, b, fmt.Errorf("integer %d overflows uint32", i)
	}
	return uint32(i), rest, nil
}

// readFloat64 reads a number of any msgpack kind (nil is 0).
func readFloat64(b []byte) (float64, []byte, error) {
	if len(b) >= 9 && b[0] == msgpFloat64 { // fast path: what tracers send for metrics
		return math.Float64frombits(binary.BigEndian.Uint64(b[1:9])), b[9:], nil
	}
	if msgp.IsNil(b) {
		return 0, b[1:], nil
	}
	switch t := msgp.NextType(b); t {
	case msgp.Float64Type:
		return msgp.ReadFloat64Bytes(b)
	case msgp.Float32Type:
		f, rest, err := msgp.ReadFloat32Bytes(b)
		return float64(f), rest, err
	case msgp.IntType:
		i, rest, err := msgp.ReadInt64Bytes(b)
		return float64(i), rest, err
	case msgp.UintType:
		u, rest, err := msgp.ReadUint64Bytes(b)
		return float64(u), rest, err
	default:
		return 0, b, msgp.TypeError{Encoded: t, Method: msgp.Float64Type}
	}
}

// readBool reads a bool; nil is false and integers count as their truth value.
func readBool(b []byte) (bool, []byte, error) {
	if msgp.IsNil(b) {
		return false, b[1:], nil
	}
	switch t := msgp.NextType(b); t {
	case msgp.BoolType:
		return msgp.ReadBoolBytes(b)
	case msgp.IntType, msgp.UintType:
		i, rest, err := readInt64(b)
		return i != 0, rest, err
	default:
		return false, b, msgp.TypeError{Encoded: t, Method: msgp.BoolType}
	}
}

// readBytes reads a bin or str blob (nil is empty), copying it out of the request buffer.
func readBytes(b []byte) ([]byte, []byte, error) {
	if msgp.IsNil(b) {
		return nil, b[1:], nil
	}
	var raw []byte
	var err error
	switch t := msgp.NextType(b); t {
	case msgp.BinType:
		raw, b, err = msgp.ReadBytesZC(b)
	case msgp.StrType:
		raw, b, err = msgp.ReadStringZC(b)
	default:
		return nil, b, msgp.TypeError{Encoded: t, Method: msgp.BinType}
	}
	if err != nil {
		return nil, b, err
	}
	return append([]byte(nil), raw...), b, nil
}

// readKVs reads a map of strings.
func (r *reader) readKVs(b []byte) ([]KV, []byte, error) {
	n, b, err := mapHeader(b)
	if err != nil || n == 0 {
		return nil, b, err
	}
	if err := r.charge(n, sizeKV); err != nil {
		return nil, b, err
	}
	kvs := r.kvSlice(n)
	for i := range kvs {
		if kvs[i].Key, b, err = r.readString(b); err != nil {
			return nil, b, err
		}
		if kvs[i].Value, b, err = r.readString(b); err != nil {
			return nil, b, fmt.Errorf("value of %q: %w", kvs[i].Key, err)
		}
	}
	return kvs, b, nil
}

// DecodeTracesMsgpack decodes a v0.3/v0.4 body: an array of traces, each an array of span maps.
// Each trace becomes a chunk with PriorityNone.
func DecodeTracesMsgpack(b []byte) (Payload, error) {
	r := newReader(b)
	n, b, err := arrayHeader(b)
	if err != nil {
		return Payload{}, err
	}
	if err := r.charge(n, sizeChunk); err != nil {
		return Payload{}, err
	}
	p := Payload{Chunks: make([]Chunk, n), arena: r}
	for i := range p.Chunks {
		p.Chunks[i].Priority = PriorityNone
		if p.Chunks[i].Spans, b, err = r.readSpans(b); err != nil {
			return Payload{}, fmt.Errorf("trace %d: %w", i, err)
		}
	}
	p.NilSpans = r.nilSpans
	return p, nil
}

// readSpans reads an array of span maps; nil entries are skipped and counted (r.nilSpans).
func (r *reader) readSpans(b []byte) ([]Span, []byte, error) {
	n, b, err := arrayHeader(b)
	if err != nil || n == 0 {
		return nil, b, err
	}
	if err := r.charge(n, sizeSpan); err != nil {
		return nil, b, err
	}
	spans, kept := r.spanSlice(n), 0
	for j := range n {
		if msgp.IsNil(b) {
			b = b[1:]
			r.nilSpans++
			continue
		}
		if b, err = r.readSpan(b, &spans[kept]); err != nil {
			return nil, b, fmt.Errorf("span %d: %w", j, err)
		}
		kept++
	}
	return spans[:kept], b, nil
}

// readSpan reads one span map into s, a zeroed span of a slab (written in place: copying a whole
// Span into the heap costs a write barrier per pointer field while the collector marks); unknown
// keys are skipped.
func (r *reader) readSpan(b []byte, s *Span) ([]byte, error) {
	n, b, err := mapHeader(b)
	if err != nil {
		return b, err
	}
	for ; n > 0; n-- {
		var key []byte
		if key, b, err = readKey(b); err != nil {
			return b, err
		}
		switch string(key) {
		case "service":
			s.Service, b, err = r.readString(b)
		case "name":
			s.Name, b, err = r.readString(b)
		case "resource":
			s.Resource, b, err = r.readString(b)
		case "type":
			s.Type, b, err = r.readString(b)
		case "trace_id":
			s.TraceID, b, err = readUint64(b)
		case "span_id":
			s.SpanID, b, err = readUint64(b)
		case "parent_id":
			s.ParentID, b, err = readUint64(b)
		case "start":
			s.Start, b, err = readInt64(b)
		case "duration":
			s.Duration, b, err = readInt64(b)
		case "error":
			s.Error, b, err = readInt32(b)
		case "meta":
			s.Meta, b, err = r.readKVs(b)
		case "metrics":
			s.Metrics, b, err = r.readMetrics(b)
		case "meta_struct":
			s.MetaStruct, b, err = r.readMetaStruct(b)
		case "span_links":
			s.Links, b, err = r.readLinks(b)
		case "span_events":
			s.Events, b, err = r.readEvents(b)
		default:
			b, err = msgp.Skip(b)
		}
		if err != nil {
			return b, fmt.Errorf("%s: %w", key, err)
		}
	}
	return b, nil
}

// readKey reads a map key, str or bin, without copying.
func readKey(b []byte) ([]byte, []byte, error) {
	if len(b) > 0 && b[0]&0xe0 == msgpFixstr { // fast path: every field name of a span map
		if n := int(b[0] & 0x1f); len(b) > n {
			return b[1 : 1+n], b[1+n:], nil
		}
	}
	if msgp.NextType(b) == msgp.BinType {
		return msgp.ReadBytesZC(b)
	}
	return msgp.ReadStringZC(b)
}

func (r *reader) readMetrics(b []byte) ([]KF, []byte, error) {
	n, b, err := mapHeader(b)
	if err != nil || n == 0 {
		return nil, b, err
	}
	if err := r.charge(n, sizeKF); err != nil {
		return nil, b, err
	}
	kfs := r.kfSlice(n)
	for i := range kfs {
		if kfs[i].Key, b, err = r.readString(b); err != nil {
			return nil, b, err
		}
		if kfs[i].Value, b, err = readFloat64(b); err != nil {
			return nil, b, fmt.Errorf("value of %q: %w", kfs[i].Key, err)
		}
	}
	return kfs, b, nil
}

func (r *reader) readMetaStruct(b []byte) ([]KB, []byte, error) {
	n, b, err := mapHeader(b)
	if err != nil || n == 0 {
		return nil, b, err
	}
	if err := r.charge(n, sizeKB); err != nil {
		return nil, b, err
	}
	kbs := make([]KB, n)
	for i := range kbs {
		if kbs[i].Key, b, err = r.readString(b); err != nil {
			return nil, b, err
		}
		if kbs[i].Value, b, err = readBytes(b); err != nil {
			return nil, b, fmt.Errorf("value of %q: %w", kbs[i].Key, err)
		}
	}
	return kbs, b, nil
}

// readArray reads an array, calling elem for each element that is not nil (tracers may send nil
// for an absent link, event or chunk; the agent skips them too).
func readArray(b []byte, elem func([]byte) ([]byte, error)) ([]byte, error) {
	n, b, err := arrayHeader(b)
	for ; err == nil && n > 0; n-- {
		if msgp.IsNil(b) {
			b = b[1:]
			continue
		}
		b, err = elem(b)
	}
	return b, err
}

// readMap reads a map, calling field with each key and the bytes at its value; field returns
// what follows the value. Used for the objects that are not on the per-span hot path.
func readMap(b []byte, field func(key string, b []byte) ([]byte, error)) ([]byte, error) {
	n, b, err := mapHeader(b)
	for ; err == nil && n > 0; n-- {
		var key []byte
		if key, b, err = readKey(b); err != nil {
			break
		}
		if b, err = field(string(key), b); err != nil {
			err = fmt.Errorf("%s: %w", key, err)
		}
	}
	return b, err
}

func (r *reader) readLinks(b []byte) ([]Link, []byte, error) {
	n, err := r.chargeArray(b, sizeLink)
	if err != nil {
		return nil, b, fmt.Errorf("span_links: %w", err)
	}
	links := make([]Link, 0, n)
	b, err = readArray(b, func(b []byte) ([]byte, error) {
		var l Link
		b, err := readMap(b, func(key string, b []byte) (rest []byte, err error) {
			switch key {
			case "trace_id":
				l.TraceID, rest, err = readUint64(b)
			case "trace_id_high":
				l.TraceIDHigh, rest, err = readUint64(b)
			case "span_id":
				l.SpanID, rest, err = readUint64(b)
			case "attributes":
				l.Attributes, rest, err = r.readKVs(b)
			case "tracestate":
				l.Tracestate, rest, err = r.readString(b)
			case "flags":
				l.Flags, rest, err = readUint32(b)
			default:
				rest, err = msgp.Skip(b)
			}
			return rest, err
		})
		links = append(links, l)
		return b, err
	})
	if err != nil {
		return nil, b, fmt.Errorf("span_links: %w", err)
	}
	return links, b, nil
}

func (r *reader) readEvents(b []byte) ([]Event, []byte, error) {
	n, err := r.chargeArray(b, sizeEvent)
	if err != nil {
		return nil, b, fmt.Errorf("span_events: %w", err)
	}
	events := make([]Event, 0, n)
	b, err = readArray(b, func(b []byte) ([]byte, error) {
		var e Event
		b, err := readMap(b, func(key string, b []byte) (rest []byte, err error) {
			switch key {
			case "name":
				e.Name, rest, err = r.readString(b)
			case "time_unix_nano":
				e.TimeUnixNano, rest, err = readUint64(b)
			case "attributes":
				var n int
				if n, err = r.chargeMap(b, sizeAttr); err != nil {
					return b, err
				}
				e.Attributes = make([]EventAttribute, 0, n)
				rest, err = readMap(b, func(key string, b []byte) ([]byte, error) {
					if msgp.IsNil(b) { // a nil value carries nothing, as in the agent
						return b[1:], nil
					}
					a, after, err := r.readEventValue(b, 0)
					a.Key = repairKey(key)
					e.Attributes = append(e.Attributes, a)
					return after, err
				})
			default:
				rest, err = msgp.Skip(b)
			}
			return rest, err
		})
		events = append(events, e)
		return b, err
	})
	if err != nil {
		return nil, b, fmt.Errorf("span_events: %w", err)
	}
	return events, b, nil
}

// repairKey makes a map key valid UTF-8 (keys are read without the body-string trick, so they
// are copied once here).
func repairKey(k string) string {
	if utf8.ValidString(k) {
		return k
	}
	return repairUTF8([]byte(k))
}

// maxAttributeDepth bounds array_value nesting: the format has arrays of scalars only, and
// unbounded recursion on hostile input would exhaust the stack.
const maxAttributeDepth = 4

// readEventValue reads {type, string_value|bool_value|int_value|double_value|array_value}.
func (r *reader) readEventValue(b []byte, depth int) (EventAttribute, []byte, error) {
	var a EventAttribute
	if depth > maxAttributeDepth {
		return a, b, errors.New("span event attribute arrays nested too deeply")
	}
	b, err := readMap(b, func(key string, b []byte) (rest []byte, err error) {
		switch key {
		case "type":
			var t int32
			t, rest, err = readInt32(b)
			a.Type = AttributeType(t)
		case "string_value":
			a.Str, rest, err = r.readString(b)
		case "bool_value":
			a.Bool, rest, err = readBool(b)
		case "int_value":
			a.Int, rest, err = readInt64(b)
		case "double_value":
			a.Double, rest, err = readFloat64(b)
		case "array_value":
			if msgp.IsNil(b) {
				return b[1:], nil
			}
			rest, err = readMap(b, func(key string, b []byte) ([]byte, error) {
				if key != "values" {
					return msgp.Skip(b)
				}
				n, err := r.chargeArray(b, sizeAttr)
				if err != nil {
					return b, err
				}
				a.Array = make([]EventAttribute, 0, n)
				return readArray(b, func(b []byte) ([]byte, error) {
					v, after, err := r.readEventValue(b, depth+1)
					a.Array = append(a.Array, v)
					return after, err
				})
			})
		default:
			rest, err = msgp.Skip(b)
		}
		return rest, err
	})
	return a, b, err
}
