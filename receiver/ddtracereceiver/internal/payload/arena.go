package payload

import (
	"fmt"
	"sync"
	"unsafe"
)

// slab hands out subslices of a few large blocks, so that a payload's many small slices (meta,
// metrics, spans) cost a few allocations; reset keeps the blocks for the next payload.
type slab[T any] struct {
	blocks [][]T // what was handed out of block i is blocks[i][:len(blocks[i])]
	cur    int   // the block being cut
}

// take returns n zeroed elements. A block too small for them is left for the next payload; a new
// block holds at least blockSize elements.
func (s *slab[T]) take(n, blockSize int) []T {
	for ; s.cur < len(s.blocks); s.cur++ {
		if b := s.blocks[s.cur]; cap(b)-len(b) >= n {
			i := len(b)
			s.blocks[s.cur] = b[:i+n]
			return b[i : i+n : i+n] // full slice expression: appending never overwrites a neighbor
		}
	}
	b := make([]T, n, max(n, blockSize))
	s.blocks = append(s.blocks, b) // s.cur is its index
	return b[:n:n]
}

// reset zeroes what was handed out, which drops its references to the old payload's strings.
func (s *slab[T]) reset() {
	for i, b := range s.blocks {
		clear(b)
		s.blocks[i] = b[:0]
	}
	s.cur = 0
}

func (s *slab[T]) capacity() int {
	n := 0
	for _, b := range s.blocks {
		n += cap(b)
	}
	return n
}

// Block sizes follow the body's size: one meta pair or metric per 32 bytes of body (a short pair
// on the wire), one span per 256 bytes (a span with a few tags), within bounds.
const (
	bodyBytesPerPair = 32
	bodyBytesPerSpan = 256
	maxBlock         = 4096
)

func (r *reader) blockSize(bodyBytesPerElement int) int {
	return min(r.n/bodyBytesPerElement, maxBlock)
}

func (r *reader) kvSlice(n int) []KV     { return r.kvs.take(n, r.blockSize(bodyBytesPerPair)) }
func (r *reader) kfSlice(n int) []KF     { return r.kfs.take(n, r.blockSize(bodyBytesPerPair)) }
func (r *reader) spanSlice(n int) []Span { return r.spans.take(n, r.blockSize(bodyBytesPerSpan)) }

// readers are reused across requests: allocating and zeroing the slabs of every request was a
// third of the bytes a request allocated, and garbage collection a large share of its time.
var readers = sync.Pool{New: func() any { return new(reader) }}

// maxPooledElements keeps the slabs of a huge payload from staying in the pool.
const maxPooledElements = 1 << 16

func newReader(b []byte) *reader { return newReaderOfPrefix(b, len(b)) }

// newReaderOfPrefix is newReader for a body whose strings all lie in its first n bytes (v0.5's
// dictionary): only those are copied.
func newReaderOfPrefix(b []byte, n int) *reader {
	r := readers.Get().(*reader)
	r.src, r.n = string(b[:n]), len(b)
	r.budget = maxStructBytesPerBodyByte*len(b) + structBytesSlack
	r.nilSpans = 0
	return r
}

// maxStructBytesPerBodyByte bounds the element structures (spans, chunks, meta pairs, metrics,
// links, events) decoding may allocate, per byte of body. Checking headers against the bytes left
// only guarantees one byte per element, and a Span takes 232 bytes: a 25 MiB body of empty maps
// would take 6 GB. Real payloads need far less: a span encodes in tens of bytes at least, and
// even v0.5, with one-byte dictionary indexes, needs at most 16 bytes of meta pair per 2 bytes.
const (
	maxStructBytesPerBodyByte = 32
	structBytesSlack          = 64 << 10 // small bodies are never refused for this
)

// charge accounts n elements of size bytes against the body's budget, before they are allocated.
func (r *reader) charge(n int, size uintptr) error {
	r.budget -= n * int(size)
	if r.budget < 0 {
		return fmt.Errorf("%w: the payload decodes to more than %d times its size in structures", ErrTooManyElements, maxStructBytesPerBodyByte)
	}
	return nil
}

// chargeArray charges the elements an array header at b claims (nil: none), without consuming it,
// so the caller can allocate them at once.
func (r *reader) chargeArray(b []byte, size uintptr) (int, error) {
	n, _, err := arrayHeader(b)
	if err != nil {
		return 0, err
	}
	return n, r.charge(n, size)
}

// chargeMap is chargeArray for a map header.
func (r *reader) chargeMap(b []byte, size uintptr) (int, error) {
	n, _, err := mapHeader(b)
	if err != nil {
		return 0, err
	}
	return n, r.charge(n, size)
}

var (
	sizeKV    = unsafe.Sizeof(KV{})
	sizeKF    = unsafe.Sizeof(KF{})
	sizeKB    = unsafe.Sizeof(KB{})
	sizeSpan  = unsafe.Sizeof(Span{})
	sizeChunk = unsafe.Sizeof(Chunk{})
	sizeLink  = unsafe.Sizeof(Link{})
	sizeEvent = unsafe.Sizeof(Event{})
	sizeAttr  = unsafe.Sizeof(EventAttribute{})
	sizeStr   = unsafe.Sizeof("")
)

// release hands the reader's slabs to the next request. Nothing cut from them may be used after.
func (r *reader) release() {
	r.src, r.n = "", 0
	if r.kvs.capacity() > maxPooledElements || r.kfs.capacity() > maxPooledElements || r.spans.capacity() > maxPooledElements ||
		cap(r.scratchOut) > maxPooledElements {
		return
	}
	r.kvs.reset()
	r.kfs.reset()
	r.spans.reset()
	readers.Put(r)
}
