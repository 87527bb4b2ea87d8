package tracelog

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"strconv"
	"strings"
)

// MaxRecordBytes bounds one record's payload, so that replay never allocates more than this for
// one record, whatever a damaged length field says.
const MaxRecordBytes = 64 << 20

const (
	formatVersion     = 1
	segmentHeaderSize = 8
	// recordHeaderSize is the bytes before a record's payload: length, CRC and kind.
	recordHeaderSize  = 9
	segmentNameDigits = 20
	segmentSuffix     = ".tlog"
)

// segmentHeader opens every segment file: the magic says the file is ours, the version how to
// read it. The zero bytes leave room for flags without changing the header's size.
var segmentHeader = [segmentHeaderSize]byte{'T', 'G', 'T', 'L', formatVersion, 0, 0, 0}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// appendRecord appends the encoding of one record to dst, its payload the parts (size bytes in
// all), so that Append can write it with a single write call.
func appendRecord(dst []byte, kind byte, size int, parts [][]byte) []byte {
	start := len(dst)
	dst = binary.LittleEndian.AppendUint32(dst, uint32(size))
	// The CRC is filled in below, once the bytes it covers (kind then payload) are in place.
	dst = append(dst, 0, 0, 0, 0, kind)
	for _, p := range parts {
		dst = append(dst, p...)
	}
	binary.LittleEndian.PutUint32(dst[start+4:], crc32.Checksum(dst[start+8:], castagnoli))
	return dst
}

// recordChecksum is the CRC a record must carry for its kind and payload.
func recordChecksum(kind byte, payload []byte) uint32 {
	kindBytes := [1]byte{kind}
	return crc32.Update(crc32.Checksum(kindBytes[:], castagnoli), castagnoli, payload)
}

// segmentName is the file name of a segment: zero padded, so that names sort like ids.
func segmentName(id SegmentID) string {
	return fmt.Sprintf("%0*d%s", segmentNameDigits, uint64(id), segmentSuffix)
}

// parseSegmentName returns the id a file name stands for, and false for any name segmentName
// cannot produce: those files are not ours and are left alone.
func parseSegmentName(name string) (SegmentID, bool) {
	digits, ok := strings.CutSuffix(name, segmentSuffix)
	if !ok || len(digits) != segmentNameDigits {
		return 0, false
	}
	for _, c := range digits {
		if c < '0' || c > '9' {
			return 0, false
		}
	}
	id, err := strconv.ParseUint(digits, 10, 64)
	if err != nil {
		return 0, false // 20 digits can exceed the uint64 range
	}
	return SegmentID(id), true
}
