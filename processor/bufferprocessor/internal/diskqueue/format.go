package diskqueue

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
)

// A segment file of format version 2 starts with a segment header, then its records (record.go):
//
//	offset size field
//	0      4    magic "TGSG" (not the record magic "TGB1": the first bytes tell the versions apart)
//	4      2    format version: 2
//	6      2    header length in bytes, CRC included: 12 (the first record starts there)
//	8      4    CRC32C (Castagnoli) of bytes 0..8
//
// All integers are little endian. Version 1 segments (every release before the header) have no
// header: they start with a record, or are empty. Every later version keeps bytes 0..8 as they
// are and ends its header with the CRC of the bytes before it, so a reader can tell a header it
// does not know (refused at Open) from a damaged one (skipped and counted, like a damaged record).
const (
	segMagic = uint32(0x47534754) // "TGSG" little endian
	// formatVersion is the version this code writes, and the highest it reads.
	formatVersion = 2
	segHeaderSize = 12
	// maxSegHeaderBytes bounds the header length a reader looks at, for a later version's header.
	maxSegHeaderBytes = 1 << 10
)

// ErrUnsupportedVersion reports a segment written in a format version newer than this code
// reads: a log written by a later release, after a downgrade.
var ErrUnsupportedVersion = errors.New("unsupported disk buffer format version")

// segmentHeader is the header of every segment this code writes.
var segmentHeader = func() [segHeaderSize]byte {
	var h [segHeaderSize]byte
	binary.LittleEndian.PutUint32(h[0:4], segMagic)
	binary.LittleEndian.PutUint16(h[4:6], formatVersion)
	binary.LittleEndian.PutUint16(h[6:8], segHeaderSize)
	binary.LittleEndian.PutUint32(h[8:12], crc32.Checksum(h[0:8], castagnoli))
	return h
}()

// segFormat is what the first bytes of a segment file say.
type segFormat struct {
	version int   // 1 or 2; 0 when the header is damaged or the file empty
	start   int64 // offset of the first record
}

// parseSegmentHeader reads the format of a segment from its first bytes b (at most
// maxSegHeaderBytes of them, all of them when the file is shorter). A damaged start is not an
// error: it is read from offset 0 as records, where the reader finds the damage, counts it and
// resynchronises on the first record header, as it does after any damaged record. Only a header
// that verifies and claims a version above formatVersion is an error (ErrUnsupportedVersion).
func parseSegmentHeader(b []byte) (segFormat, error) {
	switch {
	case len(b) >= 4 && binary.LittleEndian.Uint32(b[0:4]) == magic:
		return segFormat{version: 1}, nil
	case len(b) < segHeaderSize && bytes.HasPrefix(segmentHeader[:], b):
		// A header torn by a crash while its segment was created (an empty file too): no record
		// was written behind it.
		return segFormat{start: int64(len(b))}, nil
	case len(b) < segHeaderSize || binary.LittleEndian.Uint32(b[0:4]) != segMagic:
		return segFormat{}, nil // damaged
	}
	version := int(binary.LittleEndian.Uint16(b[4:6]))
	length := int(binary.LittleEndian.Uint16(b[6:8]))
	if length < segHeaderSize || length > len(b) ||
		crc32.Checksum(b[:length-4], castagnoli) != binary.LittleEndian.Uint32(b[length-4:length]) {
		return segFormat{}, nil // damaged
	}
	if version > formatVersion {
		return segFormat{}, fmt.Errorf("%w %d (the highest this release reads is %d)", ErrUnsupportedVersion, version, formatVersion)
	}
	if version != formatVersion || length != segHeaderSize {
		return segFormat{}, nil // no version 1 header exists, and version 2's is 12 bytes
	}
	return segFormat{version: formatVersion, start: segHeaderSize}, nil
}

// readSegmentFormat reads the header of the segment f of size bytes, named name for the error.
func readSegmentFormat(f File, size int64, name string) (segFormat, error) {
	b := make([]byte, min(size, maxSegHeaderBytes))
	if _, err := f.ReadAt(b, 0); err != nil && !errors.Is(err, io.EOF) {
		return segFormat{}, fmt.Errorf("read segment header of %s: %w", name, err)
	}
	sf, err := parseSegmentHeader(b)
	if err != nil {
		return segFormat{}, fmt.Errorf("segment %s: %w: written by a later release, it cannot be read after a downgrade", name, err)
	}
	return sf, nil
}
