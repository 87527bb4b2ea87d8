package spandoc

import (
	"bytes"
	"encoding/hex"
	"math"
	"strconv"
	"unicode/utf8"

	"go.opentelemetry.io/collector/pdata/pcommon"
)

const hexDigits = "0123456789abcdef"

// mustEscape marks the ASCII bytes written as an escape: control characters, the quote and the
// backslash (JSON's), and <, > and & (as the contrib exporter's JSON writer escapes them).
var mustEscape = func() (set [utf8.RuneSelf]bool) {
	for b := range 0x20 {
		set[b] = true
	}
	for _, b := range `"\<>&` {
		set[b] = true
	}
	return set
}()

// appendString appends s as a JSON string. Bytes that are not UTF-8 become U+FFFD; U+2028 and
// U+2029 are escaped (valid JSON, but not valid JavaScript).
func appendString(buf []byte, s string) []byte {
	buf = append(buf, '"')
	start := 0
	for i := 0; i < len(s); {
		b := s[i]
		if b < utf8.RuneSelf {
			if !mustEscape[b] {
				i++
				continue
			}
			buf = append(buf, s[start:i]...)
			switch b {
			case '"', '\\':
				buf = append(buf, '\\', b)
			case '\n':
				buf = append(buf, '\\', 'n')
			case '\r':
				buf = append(buf, '\\', 'r')
			case '\t':
				buf = append(buf, '\\', 't')
			default:
				buf = append(buf, '\\', 'u', '0', '0', hexDigits[b>>4], hexDigits[b&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			buf = append(buf, s[start:i]...)
			buf = append(buf, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			buf = append(buf, s[start:i]...)
			buf = append(buf, '\\', 'u', '2', '0', '2', hexDigits[r&0xF])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	buf = append(buf, s[start:]...)
	return append(buf, '"')
}

// appendKey appends "key": after a comma unless first.
func appendKey(buf []byte, key string, first bool) []byte {
	if !first {
		buf = append(buf, ',')
	}
	buf = appendString(buf, key)
	return append(buf, ':')
}

// appendFloat writes f with a radix point always (1.0, 1.0e+21), so that Elasticsearch's dynamic
// mapping makes a float field of the first value it sees. NaN and ±Inf have no JSON form: null.
func appendFloat(buf []byte, f float64) []byte {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return append(buf, "null"...)
	}
	if f == math.Trunc(f) && math.Abs(f) < 1e6 && (f != 0 || !math.Signbit(f)) {
		// What 'g' writes for a whole number below its exponent threshold, the common case
		// (counts, ids, codes as doubles), without the shortest-digits search.
		return append(strconv.AppendInt(buf, int64(f), 10), '.', '0')
	}
	start := len(buf)
	buf = strconv.AppendFloat(buf, f, 'g', -1, 64)
	num := buf[start:]
	mantissa := num
	exp := bytes.IndexByte(num, 'e')
	if exp >= 0 {
		mantissa = num[:exp]
	}
	switch {
	case bytes.IndexByte(mantissa, '.') >= 0:
		return buf
	case exp < 0:
		return append(buf, '.', '0')
	}
	// 1e+21 → 1.0e+21: the mantissa gets the radix point (rare: a copy of the exponent).
	tail := string(num[exp:])
	return append(append(buf[:start+exp], '.', '0'), tail...)
}

// appendValue appends an attribute value: maps as objects, slices as arrays, bytes as hex.
func appendValue(buf []byte, v pcommon.Value) []byte {
	switch v.Type() {
	case pcommon.ValueTypeStr:
		return appendString(buf, v.Str())
	case pcommon.ValueTypeInt:
		return strconv.AppendInt(buf, v.Int(), 10)
	case pcommon.ValueTypeDouble:
		return appendFloat(buf, v.Double())
	case pcommon.ValueTypeBool:
		return strconv.AppendBool(buf, v.Bool())
	case pcommon.ValueTypeBytes:
		raw := v.Bytes().AsRaw()
		buf = append(buf, '"')
		buf = hex.AppendEncode(buf, raw)
		return append(buf, '"')
	case pcommon.ValueTypeMap:
		buf = append(buf, '{')
		first := true
		for k, item := range v.Map().All() {
			buf = appendKey(buf, k, first)
			buf = appendValue(buf, item)
			first = false
		}
		return append(buf, '}')
	case pcommon.ValueTypeSlice:
		buf = append(buf, '[')
		for i, item := range v.Slice().All() {
			if i > 0 {
				buf = append(buf, ',')
			}
			buf = appendValue(buf, item)
		}
		return append(buf, ']')
	}
	return append(buf, "null"...)
}

// appendHexID appends the id as a lowercase hex string.
func appendHexID(buf, id []byte) []byte {
	buf = append(buf, '"')
	buf = hex.AppendEncode(buf, id)
	return append(buf, '"')
}
