// Package zipkinjson decodes Zipkin v2 JSON span lists into zipkin-go's span model without
// reflection. It takes the common form — the fields of the Zipkin v2 API spelled as the API
// spells them, with values of their types — and gives way to encoding/json (what the contrib
// translator uses) for anything else: an unknown or differently cased key, a null, a number that
// is not an unsigned integer, an id that does not parse, a repeated key. So it returns exactly
// what encoding/json returns, errors included, and the differential fuzz test holds it to that.
package zipkinjson

import (
	"encoding/json"
	"errors"
	"net"
	"strconv"
	"time"
	"unicode/utf8"

	zipkinmodel "github.com/openzipkin/zipkin-go/model"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/translator/zipkin/zipkinv2"
)

// errSlow: the input is outside the fast form; encoding/json decides.
var errSlow = errors.New("zipkinjson: not the fast form")

// Unmarshaler turns a Zipkin v2 JSON body into traces as the contrib translator does.
type Unmarshaler struct {
	translator zipkinv2.ToTranslator
}

// NewUnmarshaler returns the unmarshaler; parseStringTags is the translator's option of that name.
func NewUnmarshaler(parseStringTags bool) ptrace.Unmarshaler {
	return Unmarshaler{translator: zipkinv2.ToTranslator{ParseStringTags: parseStringTags}}
}

// UnmarshalTraces decodes buf and translates its spans.
func (u Unmarshaler) UnmarshalTraces(buf []byte) (ptrace.Traces, error) {
	spans, err := Decode(buf)
	if err != nil {
		return ptrace.Traces{}, err
	}
	return u.translator.ToTraces(spans)
}

// Decode returns the spans of a Zipkin v2 JSON list, as json.Unmarshal into
// []*zipkinmodel.SpanModel returns them.
func Decode(buf []byte) ([]*zipkinmodel.SpanModel, error) {
	if spans, err := decodeFast(buf); err == nil {
		return spans, nil
	}
	var spans []*zipkinmodel.SpanModel
	if err := json.Unmarshal(buf, &spans); err != nil {
		return nil, err
	}
	return spans, nil
}

// scanner reads JSON tokens from buf; every method skips the whitespace before its token.
type scanner struct {
	buf []byte
	pos int
}

func decodeFast(buf []byte) ([]*zipkinmodel.SpanModel, error) {
	s := scanner{buf: buf}
	if !s.consume('[') {
		return nil, errSlow
	}
	spans := make([]*zipkinmodel.SpanModel, 0, 16)
	if s.consume(']') {
		return spans, s.end()
	}
	for {
		span, err := s.span()
		if err != nil {
			return nil, err
		}
		spans = append(spans, span)
		if s.consume(']') {
			return spans, s.end()
		}
		if !s.consume(',') {
			return nil, errSlow
		}
	}
}

// Keys of a span, one bit each, to find a repeated one.
const (
	keyTraceID = 1 << iota
	keyID
	keyParentID
	keyDebug
	keyName
	keyKind
	keyTimestamp
	keyDuration
	keyShared
	keyLocal
	keyRemote
	keyAnnotations
	keyTags
)

var spanKeys = map[string]int{
	"traceId": keyTraceID, "id": keyID, "parentId": keyParentID, "debug": keyDebug, "name": keyName,
	"kind": keyKind, "timestamp": keyTimestamp, "duration": keyDuration, "shared": keyShared,
	"localEndpoint": keyLocal, "remoteEndpoint": keyRemote, "annotations": keyAnnotations, "tags": keyTags,
}

// span decodes one span object, then applies what zipkin-go's SpanModel.UnmarshalJSON applies.
func (s *scanner) span() (*zipkinmodel.SpanModel, error) {
	if !s.consume('{') {
		return nil, errSlow
	}
	span := &zipkinmodel.SpanModel{}
	var ts, dur uint64
	seen := 0
	for first := true; !s.consume('}'); first = false {
		if !first && !s.consume(',') {
			return nil, errSlow
		}
		key, ok := s.rawString()
		if !ok || !s.consume(':') {
			return nil, errSlow
		}
		bit := spanKeys[string(key)]
		if bit == 0 || seen&bit != 0 {
			return nil, errSlow
		}
		seen |= bit
		if err := s.spanField(span, bit, &ts, &dur); err != nil {
			return nil, err
		}
	}
	if span.ID < 1 {
		return nil, errSlow
	}
	if ts > 0 {
		span.Timestamp = time.Unix(0, int64(ts)*1e3)
	}
	span.Duration = time.Duration(dur*1e3) * time.Nanosecond
	if span.LocalEndpoint.Empty() {
		span.LocalEndpoint = nil
	}
	if span.RemoteEndpoint.Empty() {
		span.RemoteEndpoint = nil
	}
	return span, nil
}

func (s *scanner) spanField(span *zipkinmodel.SpanModel, bit int, ts, dur *uint64) error {
	var ok bool
	switch bit {
	case keyTraceID:
		ok = s.traceID(&span.TraceID)
	case keyID:
		ok = s.spanID(&span.ID)
	case keyParentID:
		var id zipkinmodel.ID
		if ok = s.spanID(&id); ok {
			span.ParentID = &id
		}
	case keyDebug:
		span.Debug, ok = s.boolean()
	case keyShared:
		span.Shared, ok = s.boolean()
	case keyName:
		span.Name, ok = s.str()
	case keyKind:
		var kind string
		kind, ok = s.str()
		span.Kind = zipkinmodel.Kind(kind)
	case keyTimestamp:
		*ts, ok = s.uint(64)
	case keyDuration:
		*dur, ok = s.uint(64)
	case keyLocal:
		span.LocalEndpoint, ok = s.endpoint()
	case keyRemote:
		span.RemoteEndpoint, ok = s.endpoint()
	case keyAnnotations:
		span.Annotations, ok = s.annotations()
	case keyTags:
		span.Tags, ok = s.tags()
	}
	if !ok {
		return errSlow
	}
	return nil
}

// traceID: 1 to 32 hex digits in a string without escapes (TraceIDFromHex's rules).
func (s *scanner) traceID(t *zipkinmodel.TraceID) bool {
	raw, ok := s.rawString()
	if !ok || len(raw) == 0 || len(raw) > 32 {
		return false
	}
	id, err := zipkinmodel.TraceIDFromHex(string(raw))
	*t = id
	return err == nil
}

// spanID: 1 to 16 hex digits in a string without escapes.
func (s *scanner) spanID(i *zipkinmodel.ID) bool {
	raw, ok := s.rawString()
	if !ok || len(raw) == 0 {
		return false
	}
	v, err := strconv.ParseUint(string(raw), 16, 64)
	*i = zipkinmodel.ID(v)
	return err == nil
}

const (
	epServiceName = 1 << iota
	epIPv4
	epIPv6
	epPort
)

var endpointKeys = map[string]int{"serviceName": epServiceName, "ipv4": epIPv4, "ipv6": epIPv6, "port": epPort}

func (s *scanner) endpoint() (*zipkinmodel.Endpoint, bool) {
	if !s.consume('{') {
		return nil, false
	}
	ep := &zipkinmodel.Endpoint{}
	seen := 0
	for first := true; !s.consume('}'); first = false {
		if !first && !s.consume(',') {
			return nil, false
		}
		key, ok := s.rawString()
		if !ok || !s.consume(':') {
			return nil, false
		}
		bit := endpointKeys[string(key)]
		if bit == 0 || seen&bit != 0 {
			return nil, false
		}
		seen |= bit
		switch bit {
		case epServiceName:
			ep.ServiceName, ok = s.str()
		case epIPv4:
			ep.IPv4, ok = s.ip()
		case epIPv6:
			ep.IPv6, ok = s.ip()
		case epPort:
			var port uint64
			port, ok = s.uint(16)
			ep.Port = uint16(port)
		}
		if !ok {
			return nil, false
		}
	}
	return ep, true
}

// ip: what net.IP's UnmarshalText makes of the string (nil for an empty one).
func (s *scanner) ip() (net.IP, bool) {
	raw, ok := s.rawString()
	if !ok {
		return nil, false
	}
	if len(raw) == 0 {
		return nil, true
	}
	ip := net.ParseIP(string(raw))
	return ip, ip != nil
}

func (s *scanner) annotations() ([]zipkinmodel.Annotation, bool) {
	if !s.consume('[') {
		return nil, false
	}
	out := []zipkinmodel.Annotation{}
	for first := true; !s.consume(']'); first = false {
		if !first && !s.consume(',') {
			return nil, false
		}
		a, ok := s.annotation()
		if !ok {
			return nil, false
		}
		out = append(out, a)
	}
	return out, true
}

func (s *scanner) annotation() (zipkinmodel.Annotation, bool) {
	var a zipkinmodel.Annotation
	if !s.consume('{') {
		return a, false
	}
	var ts uint64
	var seenTS, seenValue bool
	for first := true; !s.consume('}'); first = false {
		if !first && !s.consume(',') {
			return a, false
		}
		key, ok := s.rawString()
		if !ok || !s.consume(':') {
			return a, false
		}
		switch {
		case string(key) == "timestamp" && !seenTS:
			seenTS = true
			ts, ok = s.uint(64)
		case string(key) == "value" && !seenValue:
			seenValue = true
			a.Value, ok = s.str()
		default:
			return a, false
		}
		if !ok {
			return a, false
		}
	}
	if ts < 1 {
		return a, false
	}
	a.Timestamp = time.Unix(0, int64(ts)*1e3)
	return a, true
}

func (s *scanner) tags() (map[string]string, bool) {
	if !s.consume('{') {
		return nil, false
	}
	tags := make(map[string]string, 8)
	for first := true; !s.consume('}'); first = false {
		if !first && !s.consume(',') {
			return nil, false
		}
		key, ok := s.str()
		if !ok || !s.consume(':') {
			return nil, false
		}
		if _, dup := tags[key]; dup {
			return nil, false
		}
		if tags[key], ok = s.str(); !ok {
			return nil, false
		}
	}
	return tags, true
}

func (s *scanner) skipSpace() {
	for s.pos < len(s.buf) {
		switch s.buf[s.pos] {
		case ' ', '\t', '\n', '\r':
			s.pos++
		default:
			return
		}
	}
}

// consume takes c if it comes next.
func (s *scanner) consume(c byte) bool {
	s.skipSpace()
	if s.pos < len(s.buf) && s.buf[s.pos] == c {
		s.pos++
		return true
	}
	return false
}

// end: nothing but whitespace may follow the list.
func (s *scanner) end() error {
	s.skipSpace()
	if s.pos != len(s.buf) {
		return errSlow
	}
	return nil
}

// rawString returns the bytes of a string without escapes or control characters, in UTF-8.
func (s *scanner) rawString() ([]byte, bool) {
	if !s.consume('"') {
		return nil, false
	}
	start := s.pos
	for s.pos < len(s.buf) {
		switch c := s.buf[s.pos]; {
		case c == '"':
			raw := s.buf[start:s.pos]
			s.pos++
			return raw, utf8.Valid(raw)
		case c == '\\' || c < 0x20:
			return nil, false
		}
		s.pos++
	}
	return nil, false
}

// str is a string value; with escapes, encoding/json reads that one string.
func (s *scanner) str() (string, bool) {
	save := s.pos
	if raw, ok := s.rawString(); ok {
		return string(raw), true
	}
	s.pos = save
	s.skipSpace()
	end, ok := s.stringEnd()
	if !ok {
		return "", false
	}
	var v string
	if err := json.Unmarshal(s.buf[s.pos:end], &v); err != nil {
		return "", false
	}
	s.pos = end
	return v, true
}

// stringEnd finds the end of the string starting at pos (escapes skipped).
func (s *scanner) stringEnd() (int, bool) {
	if s.pos >= len(s.buf) || s.buf[s.pos] != '"' {
		return 0, false
	}
	for i := s.pos + 1; i < len(s.buf); i++ {
		switch s.buf[i] {
		case '\\':
			i++
		case '"':
			return i + 1, true
		}
	}
	return 0, false
}

func (s *scanner) boolean() (bool, bool) {
	s.skipSpace()
	switch {
	case hasPrefixAt(s.buf, s.pos, "true"):
		s.pos += 4
		return true, s.delimited()
	case hasPrefixAt(s.buf, s.pos, "false"):
		s.pos += 5
		return false, s.delimited()
	}
	return false, false
}

// uint reads digits that fit in bits without a sign, fraction or exponent.
func (s *scanner) uint(bits int) (uint64, bool) {
	s.skipSpace()
	start := s.pos
	for s.pos < len(s.buf) && s.buf[s.pos] >= '0' && s.buf[s.pos] <= '9' {
		s.pos++
	}
	digits := s.buf[start:s.pos]
	if len(digits) == 0 || (len(digits) > 1 && digits[0] == '0') || !s.delimited() {
		return 0, false
	}
	v, err := strconv.ParseUint(string(digits), 10, bits)
	return v, err == nil
}

// delimited: the literal just read ends where a JSON value may end.
func (s *scanner) delimited() bool {
	if s.pos >= len(s.buf) {
		return true
	}
	switch s.buf[s.pos] {
	case ',', '}', ']', ' ', '\t', '\n', '\r':
		return true
	}
	return false
}

func hasPrefixAt(b []byte, at int, p string) bool {
	return len(b)-at >= len(p) && string(b[at:at+len(p)]) == p
}
