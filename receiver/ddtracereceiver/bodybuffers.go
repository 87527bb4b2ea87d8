// Pooled request-body buffers, so steady traffic reads bodies without allocating them anew.

package ddtracereceiver

import (
	"bytes"
	"sync"
)

// maxPooledBuffer keeps huge bodies from pinning memory in the pool.
const maxPooledBuffer = 4 << 20

// bodyBuffers hands out buffers for request bodies and takes them back once the request is done.
type bodyBuffers struct {
	pool sync.Pool
	// maxBody is max_request_body_size: a larger Content-Length is a lie or a 413, not a size to
	// allocate up front.
	maxBody int64
}

// get returns an empty buffer with room for contentLength bytes when that is within the limit.
func (b *bodyBuffers) get(contentLength int64) *bytes.Buffer {
	buf, _ := b.pool.Get().(*bytes.Buffer)
	if buf == nil {
		buf = new(bytes.Buffer)
	}
	buf.Reset()
	if contentLength > 0 && contentLength <= b.maxBody {
		buf.Grow(int(contentLength))
	}
	return buf
}

// put returns buf to the pool unless it grew too large to keep.
func (b *bodyBuffers) put(buf *bytes.Buffer) {
	if buf.Cap() <= maxPooledBuffer {
		b.pool.Put(buf)
	}
}
