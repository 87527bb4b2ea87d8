package tracelog

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"slices"
)

// Report says what Open found in the segments it replayed.
type Report struct {
	Segments        int   // segment files found, damaged and empty ones included
	Records         int   // intact records handed to the replay callback
	CorruptSegments int   // segments with a bad header or a record that failed its checks
	SkippedBytes    int64 // bytes of those segments not replayed, from the damage to the end
}

// replayFunc receives each intact record during Open. The payload is the callback's to keep.
type replayFunc = func(seg SegmentID, at int64, kind byte, payload []byte) error

// replayReadBytes is the read buffer for replay: large enough to make few read calls, small
// enough not to matter next to one record.
const replayReadBytes = 256 << 10

// segmentScan is what replaying one segment found.
type segmentScan struct {
	size    int64 // the file's size, all of it on disk until the segment is deleted
	records int
	skipped int64 // bytes from the bad header or first damaged record to the end
}

// record is one decoded record.
type record struct {
	kind    byte
	payload []byte
}

// listSegments returns the ids of the segment files in dir in ascending order, and the highest
// id that any entry named like a segment uses, so that a new segment never collides with one.
func listSegments(dir string) (ids []SegmentID, highest SegmentID, err error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, 0, fmt.Errorf("tracelog: list %q: %w", dir, err)
	}
	for _, entry := range entries {
		id, ok := parseSegmentName(entry.Name())
		if !ok {
			continue
		}
		highest = max(highest, id)
		// A directory or a link with a segment's name is not a file we wrote: leave it alone.
		if entry.Type().IsRegular() {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	return ids, highest, nil
}

// replaySegment hands each intact record of one segment to replay, stopping at the first
// damaged one. Damage is reported in the scan; errors are reading failures and replay's own.
func replaySegment(path string, id SegmentID, replay replayFunc) (segmentScan, error) {
	f, err := os.Open(path) //nolint:gosec // the path is a segment name inside the configured directory
	if err != nil {
		return segmentScan{}, fmt.Errorf("tracelog: open segment %d: %w", id, err)
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return segmentScan{}, fmt.Errorf("tracelog: stat segment %d: %w", id, err)
	}
	scan := segmentScan{size: info.Size()}
	if scan.size == 0 {
		return scan, nil // created, then a crash before its header: it never held a record
	}
	r := bufio.NewReaderSize(f, replayReadBytes)
	if ok, err := readSegmentHeader(r, scan.size); err != nil || !ok {
		scan.skipped = scan.size
		return scan, wrapReadError(id, err)
	}
	for offset := int64(segmentHeaderSize); offset < scan.size; {
		rec, ok, err := readRecord(r, scan.size-offset)
		if err != nil {
			return scan, wrapReadError(id, err)
		}
		if !ok {
			scan.skipped = scan.size - offset
			break
		}
		if replay != nil {
			if err := replay(id, offset+recordHeaderSize, rec.kind, rec.payload); err != nil {
				return scan, fmt.Errorf("tracelog: replay segment %d: %w", id, err)
			}
		}
		scan.records++
		offset += recordHeaderSize + int64(len(rec.payload))
	}
	return scan, nil
}

// readSegmentHeader says whether the file starts with the header this code writes.
func readSegmentHeader(r io.Reader, size int64) (bool, error) {
	if size < segmentHeaderSize {
		return false, nil
	}
	var header [segmentHeaderSize]byte
	if _, err := io.ReadFull(r, header[:]); err != nil {
		return false, err
	}
	return header == segmentHeader, nil
}

// readRecord reads the next record, of which remaining bytes are left in the file. It returns
// false for a record that fails a check: every check that bounds the allocation comes first.
func readRecord(r io.Reader, remaining int64) (record, bool, error) {
	if remaining < recordHeaderSize {
		return record{}, false, nil
	}
	var header [recordHeaderSize]byte
	if _, err := io.ReadFull(r, header[:]); err != nil {
		return record{}, false, err
	}
	length := binary.LittleEndian.Uint32(header[0:4])
	kind := header[8]
	if kind == 0 || length > MaxRecordBytes || int64(length) > remaining-recordHeaderSize {
		return record{}, false, nil
	}
	// A fresh slice per record, so that the callback may keep it.
	payload := make([]byte, length)
	if _, err := io.ReadFull(r, payload); err != nil {
		return record{}, false, err
	}
	if recordChecksum(kind, payload) != binary.LittleEndian.Uint32(header[4:8]) {
		return record{}, false, nil
	}
	return record{kind: kind, payload: payload}, true, nil
}

// wrapReadError names the segment a read failed in; the file shrinking under replay counts.
func wrapReadError(id SegmentID, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("tracelog: read segment %d: %w", id, err)
}
