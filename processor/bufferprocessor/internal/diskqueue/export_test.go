package diskqueue

import "fmt"

// What only the tests need from the log.

// corruptSkipped returns the number of damaged regions readers skipped since Open.
func (l *Log) corruptSkipped() int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.corrupt
}

// encodeRecord returns the on-disk encoding of payload.
func encodeRecord(payload []byte, items uint32, unixNano int64) []byte {
	return appendRecord(make([]byte, 0, headerSize+len(payload)), payload, items, unixNano)
}

// decodeRecord decodes one record from the start of b and returns its payload (aliasing b), item
// count, enqueue time and total encoded size. Any malformed input yields an error wrapping
// errCorrupt, never a panic: the bytes come from disk and are untrusted.
func decodeRecord(b []byte) (payload []byte, items uint32, unixNano int64, size int, err error) {
	if len(b) < headerSize {
		return nil, 0, 0, 0, fmt.Errorf("%w: short header (%d bytes)", errCorrupt, len(b))
	}
	h, err := parseHeader(b[:headerSize], int64(len(b)-headerSize))
	if err != nil {
		return nil, 0, 0, 0, err
	}
	payload = b[headerSize : headerSize+int(h.length)]
	if err := h.verify(b[:headerSize], payload); err != nil {
		return nil, 0, 0, 0, err
	}
	return payload, h.items, h.unixNano, headerSize + int(h.length), nil
}
