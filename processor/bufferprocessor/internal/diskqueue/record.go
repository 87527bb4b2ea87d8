package diskqueue

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
)

// A record on disk (in every format version so far; in a segment, after its header: format.go) is
// a fixed header followed by the payload:
//
//	offset size field
//	0      4    magic "TGB1" (lets a reader find the next record after a corrupt region)
//	4      4    CRC32C (Castagnoli) over bytes 8..24 of the header and the payload
//	8      4    payload length in bytes (> 0)
//	12     4    item count of the payload: spans, log records or metric data points, per the
//	            log's signal (for telemetry without decoding)
//	16     8    enqueue time, Unix nanoseconds (time spent in the buffer survives a restart)
//
// All integers are little endian. The CRC covers the length, so a flipped length bit is detected too.
const (
	headerSize = 24
	magic      = uint32(0x31424754) // "TGB1" little endian
	// maxRecordBytes bounds one payload: a length field above it is treated as corruption, never
	// as an allocation request, because the bytes on disk are untrusted.
	maxRecordBytes = 256 << 20
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// errCorrupt reports a record whose header or checksum does not verify.
var errCorrupt = errors.New("corrupt record")

// header is the decoded fixed part of a record.
type header struct {
	crc      uint32
	length   uint32
	items    uint32
	unixNano int64
}

// appendRecord appends the encoded record to dst and returns it.
func appendRecord(dst, payload []byte, items uint32, unixNano int64) []byte {
	h := encodeHeader(payload, items, unixNano)
	dst = append(dst, h[:]...)
	return append(dst, payload...)
}

// encodeHeader returns the header of the record holding payload.
func encodeHeader(payload []byte, items uint32, unixNano int64) [headerSize]byte {
	var h [headerSize]byte
	binary.LittleEndian.PutUint32(h[0:4], magic)
	binary.LittleEndian.PutUint32(h[8:12], uint32(len(payload)))
	binary.LittleEndian.PutUint32(h[12:16], items)
	binary.LittleEndian.PutUint64(h[16:24], uint64(unixNano))
	crc := crc32.Update(crc32.Checksum(h[8:24], castagnoli), castagnoli, payload)
	binary.LittleEndian.PutUint32(h[4:8], crc)
	return h
}

// parseHeader decodes a header and checks what can be checked without the payload: the magic,
// a non-zero length and the length bound against the bytes that remain (avail, after the header).
func parseHeader(b []byte, avail int64) (header, error) {
	if len(b) < headerSize {
		return header{}, fmt.Errorf("%w: short header (%d bytes)", errCorrupt, len(b))
	}
	if binary.LittleEndian.Uint32(b[0:4]) != magic {
		return header{}, fmt.Errorf("%w: bad magic", errCorrupt)
	}
	h := header{
		crc:      binary.LittleEndian.Uint32(b[4:8]),
		length:   binary.LittleEndian.Uint32(b[8:12]),
		items:    binary.LittleEndian.Uint32(b[12:16]),
		unixNano: int64(binary.LittleEndian.Uint64(b[16:24])),
	}
	if h.length == 0 || h.length > maxRecordBytes || int64(h.length) > avail {
		return header{}, fmt.Errorf("%w: length %d out of bounds (%d bytes available)", errCorrupt, h.length, avail)
	}
	return h, nil
}

// verify checks the payload against the header's CRC.
func (h header) verify(hdr, payload []byte) error {
	crc := crc32.Update(crc32.Checksum(hdr[8:24], castagnoli), castagnoli, payload)
	if crc != h.crc {
		return fmt.Errorf("%w: checksum mismatch", errCorrupt)
	}
	return nil
}
