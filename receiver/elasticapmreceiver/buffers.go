// Per-request buffers, pooled: apm-data's stream decoder wraps a request in a bufio.Reader of
// max_event_size (300 KiB) unless it is given one that large already, and allocating and zeroing
// that for every request cost more than decoding a request of ten spans (make bench-intake).
// The same goes for the reader split takes lines from.

package elasticapmreceiver

import (
	"bufio"
	"bytes"
	"io"
	"sync"
)

// requestBuffers are one request's readers: sniff peeks at the body for a compression magic,
// valid checks UTF-8, lines splits it into lines of at most max_event_size, held keeps the lines
// for apm-data, and apmData is apm-data's line buffer (max_event_size).
type requestBuffers struct {
	sniff   *bufio.Reader
	valid   *utf8Reader
	lines   *bufio.Reader
	held    bytes.Buffer
	apmData *bufio.Reader
}

// maxPooledHeld is the largest held buffer kept for the next request; a larger one was for a
// rare request, and is left to the garbage collector.
const maxPooledHeld = 256 << 10

type bufferPool struct {
	pool sync.Pool
}

func newBufferPool(maxEventSize int) *bufferPool {
	return &bufferPool{pool: sync.Pool{New: func() any {
		return &requestBuffers{
			sniff:   bufio.NewReader(nil),
			valid:   newUTF8Reader(nil),
			lines:   bufio.NewReaderSize(nil, maxEventSize),
			apmData: bufio.NewReaderSize(nil, maxEventSize),
		}
	}}}
}

func (p *bufferPool) get() *requestBuffers { return p.pool.Get().(*requestBuffers) }

// put returns b, dropping its readers' references to the request.
func (p *bufferPool) put(b *requestBuffers) {
	b.sniff.Reset(nil)
	b.valid.reset(nil)
	b.lines.Reset(nil)
	b.apmData.Reset(nil)
	b.held.Reset()
	if b.held.Cap() > maxPooledHeld {
		b.held = bytes.Buffer{}
	}
	p.pool.Put(b)
}

// reset readies v to validate r from its start.
func (v *utf8Reader) reset(r io.Reader) {
	*v = utf8Reader{r: r, buf: v.buf}
}
