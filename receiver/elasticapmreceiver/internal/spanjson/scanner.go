package spanjson

import (
	"strconv"
	"unsafe"
)

// scanner reads the JSON of one line strictly (RFC 8259). The strings it returns are views of b,
// which must not change while they live. Every method returns false on anything
// it does not take, and the line is then left to apm-data, so the scanner can be narrower than
// JSON: a string with a \u escape or a raw control character, a key with any escape, a number
// longer than maxNumberLen.
type scanner struct {
	b []byte
	i int
}

// maxNumberLen bounds the numbers read: every value the intake sends fits, and a float of at most
// 15 significant digits reads the same whichever correct decoder reads it.
const maxNumberLen = 32

func (s *scanner) ws() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

// peek is the next byte after white space, 0 at the end.
func (s *scanner) peek() byte {
	s.ws()
	if s.i < len(s.b) {
		return s.b[s.i]
	}
	return 0
}

// eat consumes c, the next byte after white space.
func (s *scanner) eat(c byte) bool {
	if s.peek() != c {
		return false
	}
	s.i++
	return true
}

// atEnd reports whether only white space is left.
func (s *scanner) atEnd() bool {
	s.ws()
	return s.i == len(s.b)
}

// object calls member for each key of the object that comes next, positioned at its value;
// member returns false to stop. An empty object calls nothing.
func (s *scanner) object(member func(key []byte) bool) bool {
	if !s.eat('{') {
		return false
	}
	if s.eat('}') {
		return true
	}
	for {
		key, ok := s.key()
		if !ok || !s.eat(':') || !member(key) {
			return false
		}
		if s.eat('}') {
			return true
		}
		if !s.eat(',') {
			return false
		}
	}
}

// key is an object key without escapes, a view of the line.
func (s *scanner) key() ([]byte, bool) {
	if !s.eat('"') {
		return nil, false
	}
	start := s.i
	for s.i < len(s.b) {
		switch c := s.b[s.i]; {
		case c == '"':
			s.i++
			return s.b[start : s.i-1], true
		case c == '\\' || c < 0x20:
			return nil, false
		}
		s.i++
	}
	return nil, false
}

// null consumes a null if one comes next.
func (s *scanner) null() bool {
	if s.peek() != 'n' || !s.literal("null") {
		return false
	}
	return true
}

func (s *scanner) literal(word string) bool {
	if len(s.b)-s.i < len(word) || string(s.b[s.i:s.i+len(word)]) != word {
		return false
	}
	s.i += len(word)
	return true
}

// boolean reads true or false.
func (s *scanner) boolean() (v, ok bool) {
	switch s.peek() {
	case 't':
		return true, s.literal("true")
	case 'f':
		return false, s.literal("false")
	}
	return false, false
}

// str reads a string, decoding the escapes \" \\ \/ \b \f \n \r \t.
func (s *scanner) str() (string, bool) {
	if !s.eat('"') {
		return "", false
	}
	start := s.i
	for s.i < len(s.b) {
		switch c := s.b[s.i]; {
		case c == '"':
			s.i++
			return view(s.b[start : s.i-1]), true
		case c == '\\':
			return s.escapedStr(start)
		case c < 0x20:
			return "", false
		}
		s.i++
	}
	return "", false
}

// escapedStr finishes a string that started at start and has an escape at s.i.
func (s *scanner) escapedStr(start int) (string, bool) {
	out := append(make([]byte, 0, s.i-start+16), s.b[start:s.i]...)
	for s.i < len(s.b) {
		c := s.b[s.i]
		switch {
		case c == '"':
			s.i++
			return view(out), true
		case c < 0x20:
			return "", false
		case c != '\\':
			out = append(out, c)
			s.i++
			continue
		}
		if s.i+1 >= len(s.b) {
			return "", false
		}
		switch e := s.b[s.i+1]; e {
		case '"', '\\', '/':
			out = append(out, e)
		case 'b':
			out = append(out, '\b')
		case 'f':
			out = append(out, '\f')
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 't':
			out = append(out, '\t')
		default: // \u and anything invalid
			return "", false
		}
		s.i += 2
	}
	return "", false
}

// number reads a number's text: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func (s *scanner) number() ([]byte, bool) {
	s.ws()
	start := s.i
	if s.i < len(s.b) && s.b[s.i] == '-' {
		s.i++
	}
	switch {
	case s.i < len(s.b) && s.b[s.i] == '0':
		s.i++
	case !s.digits():
		return nil, false
	}
	if s.i < len(s.b) && s.b[s.i] == '.' {
		s.i++
		if !s.digits() {
			return nil, false
		}
	}
	if s.i < len(s.b) && (s.b[s.i] == 'e' || s.b[s.i] == 'E') {
		s.i++
		if s.i < len(s.b) && (s.b[s.i] == '+' || s.b[s.i] == '-') {
			s.i++
		}
		if !s.digits() {
			return nil, false
		}
	}
	if s.i-start > maxNumberLen {
		return nil, false
	}
	return s.b[start:s.i], true
}

func (s *scanner) digits() bool {
	start := s.i
	for s.i < len(s.b) && s.b[s.i] >= '0' && s.b[s.i] <= '9' {
		s.i++
	}
	return s.i > start
}

// uint reads a non-negative integer without fraction or exponent, at most max.
func (s *scanner) uint(limit uint64) (uint64, bool) {
	text, ok := s.number()
	if !ok {
		return 0, false
	}
	v, err := strconv.ParseUint(view(text), 10, 64)
	return v, err == nil && v <= limit
}

// decimal reads a number written without an exponent and with at most 15 digits, which every
// correct decoder reads as the same float64; anything else is left to apm-data.
func (s *scanner) decimal() (float64, bool) {
	text, ok := s.number()
	if !ok {
		return 0, false
	}
	digits := 0
	for _, c := range text {
		switch {
		case c >= '0' && c <= '9':
			digits++
		case c == 'e' || c == 'E':
			return 0, false
		}
	}
	if digits > 15 {
		return 0, false
	}
	return parseFloat(text)
}

// view is b as a string, without a copy: b must not change while the string lives.
func view(b []byte) string {
	return unsafe.String(unsafe.SliceData(b), len(b)) //nolint:gosec // the arena's bytes never change (Decoder)
}

// parseFloat reads a number's text as apm-data reads a json.Number: strconv.ParseFloat.
func parseFloat(text []byte) (float64, bool) {
	v, err := strconv.ParseFloat(view(text), 64)
	return v, err == nil
}

// emptyObject consumes null or {}: a struct or map field apm-data reads as not set. Anything else
// (an array included, which apm-data refuses there) is declined.
func (s *scanner) emptyObject() bool {
	if s.peek() == 'n' {
		return s.null()
	}
	return s.eat('{') && s.eat('}')
}

// emptyArray consumes null or []: a list field apm-data reads as empty.
func (s *scanner) emptyArray() bool {
	if s.peek() == 'n' {
		return s.null()
	}
	return s.eat('[') && s.eat(']')
}
