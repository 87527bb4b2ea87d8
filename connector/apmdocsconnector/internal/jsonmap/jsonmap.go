// Package jsonmap turns a JSON object into a pcommon.Map, for documents that are built as JSON
// (apm-data's encoding) but must travel through the collector as log record bodies, which the
// Elasticsearch exporter's bodymap mode writes back out as the same JSON.
package jsonmap

import (
	"errors"
	"fmt"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"

	"go.opentelemetry.io/collector/pdata/pcommon"
)

// maxDepth bounds nesting; a document of APM Server's is a few levels deep.
const maxDepth = 64

// Into parses the JSON object in data into m, which it clears first. The document is copied into
// one string once; keys and values without escapes are parts of it, not copies of their own.
func Into(data []byte, m pcommon.Map) error {
	p := parser{data: string(data)}
	p.space()
	if !p.eat('{') {
		return p.fail("a JSON object")
	}
	m.Clear()
	if err := p.object(m, 1); err != nil {
		return err
	}
	p.space()
	if p.i != len(p.data) {
		return p.fail("the end of the document")
	}
	return nil
}

type parser struct {
	data string
	i    int
}

func (p *parser) fail(want string) error {
	return fmt.Errorf("jsonmap: want %s at byte %d", want, p.i)
}

func (p *parser) space() {
	for p.i < len(p.data) {
		switch p.data[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

func (p *parser) eat(c byte) bool {
	if p.i < len(p.data) && p.data[p.i] == c {
		p.i++
		return true
	}
	return false
}

// object reads members up to the closing brace (the opening one is read).
func (p *parser) object(m pcommon.Map, depth int) error {
	if depth > maxDepth {
		return errors.New("jsonmap: nested too deeply")
	}
	p.space()
	if p.eat('}') {
		return nil
	}
	for {
		p.space()
		key, err := p.str()
		if err != nil {
			return err
		}
		p.space()
		if !p.eat(':') {
			return p.fail("':'")
		}
		if err := p.value(m.PutEmpty(key), depth); err != nil {
			return err
		}
		p.space()
		if p.eat('}') {
			return nil
		}
		if !p.eat(',') {
			return p.fail("',' or '}'")
		}
	}
}

func (p *parser) array(s pcommon.Slice, depth int) error {
	if depth > maxDepth {
		return errors.New("jsonmap: nested too deeply")
	}
	p.space()
	if p.eat(']') {
		return nil
	}
	for {
		if err := p.value(s.AppendEmpty(), depth); err != nil {
			return err
		}
		p.space()
		if p.eat(']') {
			return nil
		}
		if !p.eat(',') {
			return p.fail("',' or ']'")
		}
	}
}

func (p *parser) value(v pcommon.Value, depth int) error {
	p.space()
	if p.i >= len(p.data) {
		return p.fail("a value")
	}
	switch c := p.data[p.i]; c {
	case '{':
		p.i++
		return p.object(v.SetEmptyMap(), depth+1)
	case '[':
		p.i++
		return p.array(v.SetEmptySlice(), depth+1)
	case '"':
		s, err := p.str()
		v.SetStr(s)
		return err
	case 't':
		return p.literal("true", func() { v.SetBool(true) })
	case 'f':
		return p.literal("false", func() { v.SetBool(false) })
	case 'n':
		return p.literal("null", func() {}) // an empty value: the exporter writes null
	default:
		return p.number(v)
	}
}

func (p *parser) literal(word string, set func()) error {
	if len(p.data)-p.i < len(word) || p.data[p.i:p.i+len(word)] != word {
		return p.fail(word)
	}
	p.i += len(word)
	set()
	return nil
}

// number keeps integers as integers (counts, microseconds) and the rest as doubles.
func (p *parser) number(v pcommon.Value) error {
	start, integral := p.i, true
	for p.i < len(p.data) {
		c := p.data[p.i]
		if c == '.' || c == 'e' || c == 'E' {
			integral = false
		} else if (c < '0' || c > '9') && c != '-' && c != '+' {
			break
		}
		p.i++
	}
	text := p.data[start:p.i]
	if integral {
		if n, err := strconv.ParseInt(text, 10, 64); err == nil {
			v.SetInt(n)
			return nil
		}
	}
	f, err := strconv.ParseFloat(text, 64)
	if err != nil {
		p.i = start
		return p.fail("a number")
	}
	v.SetDouble(f)
	return nil
}

// str reads a string; most have no escapes and are taken as they are.
func (p *parser) str() (string, error) {
	if !p.eat('"') {
		return "", p.fail("a string")
	}
	start := p.i
	for p.i < len(p.data) {
		switch p.data[p.i] {
		case '"':
			s := p.data[start:p.i]
			p.i++
			return s, nil
		case '\\':
			return p.escaped(start)
		}
		p.i++
	}
	return "", p.fail("the end of a string")
}

func (p *parser) escaped(start int) (string, error) {
	out := append([]byte(nil), p.data[start:p.i]...)
	for p.i < len(p.data) {
		c := p.data[p.i]
		p.i++
		switch {
		case c == '"':
			return string(out), nil
		case c != '\\':
			out = append(out, c)
		case p.i >= len(p.data):
			return "", p.fail("an escape")
		default:
			e := p.data[p.i]
			p.i++
			var ok bool
			if out, ok = p.unescape(out, e); !ok {
				return "", p.fail("a valid escape")
			}
		}
	}
	return "", p.fail("the end of a string")
}

func (p *parser) unescape(out []byte, e byte) ([]byte, bool) {
	switch e {
	case '"', '\\', '/':
		return append(out, e), true
	case 'b':
		return append(out, '\b'), true
	case 'f':
		return append(out, '\f'), true
	case 'n':
		return append(out, '\n'), true
	case 'r':
		return append(out, '\r'), true
	case 't':
		return append(out, '\t'), true
	case 'u':
		r, ok := p.hex4()
		if !ok {
			return out, false
		}
		if utf16.IsSurrogate(r) && p.i+1 < len(p.data) && p.data[p.i] == '\\' && p.data[p.i+1] == 'u' {
			save := p.i
			p.i += 2
			if r2, ok := p.hex4(); ok {
				if dec := utf16.DecodeRune(r, r2); dec != utf8.RuneError {
					return utf8.AppendRune(out, dec), true
				}
			}
			p.i = save
		}
		return utf8.AppendRune(out, r), true
	}
	return out, false
}

func (p *parser) hex4() (rune, bool) {
	if len(p.data)-p.i < 4 {
		return 0, false
	}
	n, err := strconv.ParseUint(p.data[p.i:p.i+4], 16, 32)
	if err != nil {
		return 0, false
	}
	p.i += 4
	return rune(n), true
}
