package convert

import (
	"encoding/hex"
	"math"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/elastic/apm-data/model/modelpb"
)

// Helpers that write an intake value into an attribute map. The intake model marks an absent
// number or flag with a nil pointer and an absent string with "": absent values write nothing,
// so a document carries only what the agent sent.

func putStr(m pcommon.Map, key, v string) {
	if v != "" {
		m.PutStr(key, v)
	}
}

// putCount writes an unsigned count the agent sent; counts above MaxInt64 are clamped.
func putCount[T ~uint32 | ~uint64](m pcommon.Map, key string, v *T) {
	if v != nil {
		m.PutInt(key, clampInt(uint64(*v)))
	}
}

func clampInt(v uint64) int64 {
	if v > math.MaxInt64 {
		return math.MaxInt64
	}
	return int64(v)
}

func putFlag(m pcommon.Map, key string, v *bool) {
	if v != nil {
		m.PutBool(key, *v)
	}
}

func putStrings(m pcommon.Map, key string, vs []string) {
	if len(vs) == 0 {
		return
	}
	s := m.PutEmptySlice(key)
	s.EnsureCapacity(len(vs))
	for _, v := range vs {
		s.AppendEmpty().SetStr(v)
	}
}

// putKeyValues writes free-form agent data (custom context, stack frame variables) as a map.
func putKeyValues(m pcommon.Map, key string, kvs []*modelpb.KeyValue) {
	if len(kvs) == 0 {
		return
	}
	dst := m.PutEmptyMap(key)
	dst.EnsureCapacity(len(kvs))
	for _, kv := range kvs {
		if kv.GetKey() != "" && kv.GetValue() != nil {
			setJSONValue(dst.PutEmpty(kv.GetKey()), kv.GetValue())
		}
	}
}

// putHeaders writes HTTP or message headers as a map from name to the list of its values.
func putHeaders(m pcommon.Map, key string, headers []*modelpb.HTTPHeader) {
	if len(headers) == 0 {
		return
	}
	dst := m.PutEmptyMap(key)
	dst.EnsureCapacity(len(headers))
	for _, h := range headers {
		if h.GetKey() != "" && len(h.GetValue()) > 0 {
			putStrings(dst, h.GetKey(), h.GetValue())
		}
	}
}

// setJSONValue copies a decoded JSON value; JSON numbers are doubles, as the agent's JSON has them.
func setJSONValue(dst pcommon.Value, src *structpb.Value) {
	switch v := src.GetKind().(type) {
	case *structpb.Value_StringValue:
		dst.SetStr(v.StringValue)
	case *structpb.Value_NumberValue:
		dst.SetDouble(v.NumberValue)
	case *structpb.Value_BoolValue:
		dst.SetBool(v.BoolValue)
	case *structpb.Value_StructValue:
		fields := v.StructValue.GetFields()
		m := dst.SetEmptyMap()
		m.EnsureCapacity(len(fields))
		for k, field := range fields {
			setJSONValue(m.PutEmpty(k), field)
		}
	case *structpb.Value_ListValue:
		values := v.ListValue.GetValues()
		s := dst.SetEmptySlice()
		s.EnsureCapacity(len(values))
		for _, item := range values {
			setJSONValue(s.AppendEmpty(), item)
		}
	}
}

// ipString is an address as text, "" when the agent sent none.
func ipString(ip *modelpb.IP) string {
	if ip == nil {
		return ""
	}
	return modelpb.IP2Addr(ip).String()
}

// traceIDOf and spanIDOf read the agents' hex ids. ok is false for an id that is not hex or not
// of the id's length: hex that is too long is cut, too short padded with zeros, anything else
// gives the empty id. The event is kept either way.
func traceIDOf(s string) (pcommon.TraceID, bool) {
	var id pcommon.TraceID
	ok := decodeID(id[:], s)
	return id, ok
}

func spanIDOf(s string) (pcommon.SpanID, bool) {
	var id pcommon.SpanID
	ok := decodeID(id[:], s)
	return id, ok
}

func decodeID(dst []byte, s string) bool {
	if s == "" {
		return true
	}
	var buf [32]byte // an id's hex fits, decoded without an allocation
	if len(s) > 2*len(buf) {
		return decodeLongID(dst, s)
	}
	n, err := hex.Decode(buf[:], []byte(s))
	if err != nil {
		return false
	}
	copy(dst, buf[:n])
	return n == len(dst)
}

// decodeLongID is decodeID for hex longer than any id: what fits is kept.
func decodeLongID(dst []byte, s string) bool {
	b, err := hex.DecodeString(s)
	if err != nil {
		return false
	}
	copy(dst, b)
	return false
}
