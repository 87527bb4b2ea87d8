// Bodies must be UTF-8: apm-data's JSON decoder copies invalid bytes into strings unchanged, and
// Elasticsearch would then refuse the documents, after the agent was told they were taken.

package elasticapmreceiver

import (
	"fmt"
	"io"
	"unicode/utf8"
)

// utf8Reader passes a body through while it is valid UTF-8; at the first invalid byte it returns
// what came before, then an error naming the offset. A rune split across reads is held back.
type utf8Reader struct {
	r        io.Reader
	buf      []byte
	pending  []byte // validated bytes not yet returned (a view of buf)
	carry    []byte // the start of a rune cut off by the last read (a view of carryBuf)
	carryBuf [utf8.UTFMax]byte
	offset   int64
	err      error
}

const utf8ReadSize = 32 << 10

func newUTF8Reader(r io.Reader) *utf8Reader {
	return &utf8Reader{r: r, buf: make([]byte, utf8ReadSize)}
}

func (v *utf8Reader) Read(p []byte) (int, error) {
	for len(v.pending) == 0 {
		if v.err != nil {
			return 0, v.err
		}
		v.fill()
	}
	n := copy(p, v.pending)
	v.pending = v.pending[n:]
	return n, nil
}

// fill reads once more and validates what it read.
func (v *utf8Reader) fill() {
	c := copy(v.buf, v.carry)
	n, err := v.r.Read(v.buf[c:])
	n += c
	end := n
	v.carry = v.carryBuf[:0]
	if err == nil {
		end = n - incompleteTail(v.buf[:n])
		v.carry = append(v.carry, v.buf[end:n]...)
	}
	if i := firstInvalid(v.buf[:end]); i >= 0 {
		v.pending = v.buf[:i]
		v.err = fmt.Errorf("invalid UTF-8 at byte %d of the body", v.offset+int64(i))
		return
	}
	v.pending = v.buf[:end]
	v.offset += int64(end)
	v.err = err
}

// incompleteTail is the length of a rune cut off at the end of b (0 when there is none).
func incompleteTail(b []byte) int {
	for i := 1; i < utf8.UTFMax && i <= len(b); i++ {
		c := b[len(b)-i]
		if c < utf8.RuneSelf { // ASCII: complete
			return 0
		}
		if utf8.RuneStart(c) {
			if utf8.FullRune(b[len(b)-i:]) {
				return 0
			}
			return i
		}
	}
	return 0
}

// firstInvalid is the index of the first invalid byte of b, or -1.
func firstInvalid(b []byte) int {
	if utf8.Valid(b) {
		return -1
	}
	for i := 0; i < len(b); {
		r, size := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && size == 1 {
			return i
		}
		i += size
	}
	return -1
}
