package diskqueue // import "github.com/tracegate/tracegate/processor/bufferprocessor/internal/diskqueue"

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
)

// A record on disk is a fixed header followed by the payload:
//
//	offset size field
//	0      4    magic "TGB1" (lets a reader find the next record after a corrupt region)
//	4      4    CRC32C (Castagnoli) over bytes 8..24 of the header and the payload
//	8      4    payload length in bytes (> 0)
//	12     4    span count of the payload (for telemetry without decoding)
//	16     8    enqueue time, Unix nanoseconds (time spent in the buffer survives a restart)
//
// All integers are little endian. The CRC covers the length, so a flipped length bit is detected too.
const (
	headerSize = 24
	magic      = uint32(0x31424754) // "TGB1" little endian
	// MaxRecordBytes bounds one payload: a length field above it is treated as corruption, never
	// as an allocation request, because the bytes on disk are untrusted.
	MaxRecordBytes = 256 << 20
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// ErrCorrupt reports a record whose header or checksum does not verify.
var ErrCorrupt = errors.New("corrupt record")

// header is the decoded fixed part of a record.
type header struct {
	crc      uint32
	length   uint32
	spans    uint32
	unixNano int64
}

// appendRecord appends the encoded record to dst and returns it.
func appendRecord(dst, payload []byte, spans uint32, unixNano int64) []byte {
	h := encodeHeader(payload, spans, unixNano)
	dst = append(dst, h[:]...)
	return append(dst, payload...)
}

// encodeHeader returns the header of the record holding payload.
func encodeHeader(payload []byte, spans uint32, unixNano int64) [headerSize]byte {
	var h [headerSize]byte
	binary.LittleEndian.PutUint32(h[0:4], magic)
	binary.LittleEndian.PutUint32(h[8:12], uint32(len(payload))) //nolint:gosec // bounded by MaxRecordBytes in Append
	binary.LittleEndian.PutUint32(h[12:16], spans)
	binary.LittleEndian.PutUint64(h[16:24], uint64(unixNano)) //nolint:gosec // bit pattern round-trips
	crc := crc32.Update(crc32.Checksum(h[8:24], castagnoli), castagnoli, payload)
	binary.LittleEndian.PutUint32(h[4:8], crc)
	return h
}

// parseHeader decodes a header and checks what can be checked without the payload: the magic,
// a non-zero length and the length bound against the bytes that remain (avail, after the header).
func parseHeader(b []byte, avail int64) (header, error) {
	if len(b) < headerSize {
		return header{}, fmt.Errorf("%w: short header (%d bytes)", ErrCorrupt, len(b))
	}
	if binary.LittleEndian.Uint32(b[0:4]) != magic {
		return header{}, fmt.Errorf("%w: bad magic", ErrCorrupt)
	}
	h := header{
		crc:      binary.LittleEndian.Uint32(b[4:8]),
		length:   binary.LittleEndian.Uint32(b[8:12]),
		spans:    binary.LittleEndian.Uint32(b[12:16]),
		unixNano: int64(binary.LittleEndian.Uint64(b[16:24])), //nolint:gosec // bit pattern round-trips
	}
	if h.length == 0 || h.length > MaxRecordBytes || int64(h.length) > avail {
		return header{}, fmt.Errorf("%w: length %d out of bounds (%d bytes available)", ErrCorrupt, h.length, avail)
	}
	return h, nil
}

// verify checks the payload against the header's CRC.
func (h header) verify(hdr, payload []byte) error {
	crc := crc32.Update(crc32.Checksum(hdr[8:24], castagnoli), castagnoli, payload)
	if crc != h.crc {
		return fmt.Errorf("%w: checksum mismatch", ErrCorrupt)
	}
	return nil
}

// DecodeRecord decodes one record from the start of b and returns its payload (aliasing b), span
// count, enqueue time and total encoded size. Any malformed input yields an error wrapping
// ErrCorrupt, never a panic: the bytes come from disk and are untrusted.
func DecodeRecord(b []byte) (payload []byte, spans uint32, unixNano int64, size int, err error) {
	if len(b) < headerSize {
		return nil, 0, 0, 0, fmt.Errorf("%w: short header (%d bytes)", ErrCorrupt, len(b))
	}
	h, err := parseHeader(b[:headerSize], int64(len(b)-headerSize))
	if err != nil {
		return nil, 0, 0, 0, err
	}
	payload = b[headerSize : headerSize+int(h.length)]
	if err := h.verify(b[:headerSize], payload); err != nil {
		return nil, 0, 0, 0, err
	}
	return payload, h.spans, h.unixNano, headerSize + int(h.length), nil
}

// EncodeRecord returns the on-disk encoding of payload.
func EncodeRecord(payload []byte, spans uint32, unixNano int64) []byte {
	return appendRecord(make([]byte, 0, headerSize+len(payload)), payload, spans, unixNano)
}
