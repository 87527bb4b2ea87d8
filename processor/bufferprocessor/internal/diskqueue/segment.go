package diskqueue

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

const (
	segSuffix = ".seg"
	ackSuffix = ".ack"
	// ackEntrySize: offset (8), kind (1), padding (3), CRC32C of the first 12 bytes (4). Fixed size,
	// so a torn entry at the end of the file is recognized and ignored.
	ackEntrySize = 16
	kindAcked    = byte('A')
	kindDispatch = byte('D')
	resyncChunk  = 64 << 10
)

// Counts are records, items and encoded bytes.
type Counts struct {
	Records int64
	Items   int64
	Bytes   int64
}

func (c *Counts) add(records, items, bytes int64) {
	c.Records += records
	c.Items += items
	c.Bytes += bytes
}

// sub subtracts and clamps at zero: counts from a header-only scan can overestimate what a
// verifying read later finds in a damaged segment.
func (c *Counts) sub(records, items, bytes int64) {
	c.Records = max(0, c.Records-records)
	c.Items = max(0, c.Items-items)
	c.Bytes = max(0, c.Bytes-bytes)
}

// segment is one append-only file of records plus its ack file.
type segment struct {
	id     uint64
	f      File
	start  int64 // offset of the first record: after the segment header (format.go), 0 in version 1
	size   int64 // end of the last complete record; readers never go past it
	sealed bool  // no more appends
	passed bool  // the reader has moved past its end
	dirty  bool  // written since the last fsync

	outstanding int    // records handed out (read or claimed) and not yet acknowledged
	unread      Counts // records not yet read

	// Only for segments found at Open: records acknowledged before the restart (skipped) and records
	// handed to a worker before the restart without an acknowledgement (possible duplicates).
	skip       map[int64]struct{}
	dispatched map[int64]struct{}

	ack      File // opened lazily on the first ack entry
	ackDirty bool
}

func segName(dir string, id uint64) string {
	return filepath.Join(dir, fmt.Sprintf("%016x%s", id, segSuffix))
}

func ackName(dir string, id uint64) string {
	return filepath.Join(dir, fmt.Sprintf("%016x%s", id, ackSuffix))
}

// parseID returns the segment id of a file name like 00000000000000a1.seg.
func parseID(name, suffix string) (uint64, bool) {
	if !strings.HasSuffix(name, suffix) || len(name) != 16+len(suffix) {
		return 0, false
	}
	id, err := strconv.ParseUint(strings.TrimSuffix(name, suffix), 16, 64)
	return id, err == nil
}

func encodeAck(off int64, kind byte) []byte {
	var b [ackEntrySize]byte
	binary.LittleEndian.PutUint64(b[0:8], uint64(off))
	b[8] = kind
	binary.LittleEndian.PutUint32(b[12:16], crc32.Checksum(b[0:12], castagnoli))
	return b[:]
}

// loadAcks reads an ack file. Entries that do not verify (a torn tail after a crash) are ignored:
// the worst outcome is a replayed record, never a lost one.
func loadAcks(path string) (acked, dispatched map[int64]struct{}, err error) {
	acked, dispatched = map[int64]struct{}{}, map[int64]struct{}{}
	b, err := os.ReadFile(path) //nolint:gosec // path built from the configured directory
	if errors.Is(err, os.ErrNotExist) {
		return acked, dispatched, nil
	}
	if err != nil {
		return nil, nil, fmt.Errorf("read ack file: %w", err)
	}
	for len(b) >= ackEntrySize {
		e := b[:ackEntrySize]
		b = b[ackEntrySize:]
		if crc32.Checksum(e[0:12], castagnoli) != binary.LittleEndian.Uint32(e[12:16]) {
			continue
		}
		off := int64(binary.LittleEndian.Uint64(e[0:8]))
		switch e[8] {
		case kindAcked:
			acked[off] = struct{}{}
		case kindDispatch:
			dispatched[off] = struct{}{}
		}
	}
	return acked, dispatched, nil
}

// readResult is one step of reading a segment.
type readResult struct {
	hdr     header
	payload []byte
	next    int64 // offset of the following record (or of the next plausible header)
	corrupt bool  // the bytes from the offset to next did not hold a valid record
	counted bool  // corrupt, but the header was plausible, so a header scan counted it
}

// readMode is how much readAt reads and checks.
type readMode uint8

const (
	// readHeaderOnly reads the header only (the Open scan).
	readHeaderOnly readMode = iota
	// readVerify reads the payload too and checks it.
	readVerify
	// readAcked is readVerify for a record delivered before the restart: if it is damaged, its
	// length is not trusted even when it leads to another header (its data is not needed, and a
	// damaged length may reach over records still to deliver).
	readAcked
)

// readAt reads the record at off, which must be below end, as mode says.
func readAt(f File, off, end int64, mode readMode) (readResult, error) {
	if end-off < headerSize {
		return readResult{next: end, corrupt: true}, nil
	}
	var hb [headerSize]byte
	if _, err := f.ReadAt(hb[:], off); err != nil {
		return readResult{}, fmt.Errorf("read record header at %d: %w", off, err)
	}
	h, err := parseHeader(hb[:], end-off-headerSize)
	if err != nil {
		next, rerr := resync(f, off+1, end)
		return readResult{next: next, corrupt: true}, rerr
	}
	next := off + headerSize + int64(h.length)
	if mode == readHeaderOnly {
		return readResult{hdr: h, next: next}, nil
	}
	payload := make([]byte, h.length)
	if _, rerr := f.ReadAt(payload, off+headerSize); rerr != nil && !errors.Is(rerr, io.EOF) {
		return readResult{}, fmt.Errorf("read record payload at %d: %w", off, rerr)
	}
	if h.verify(hb[:], payload) != nil {
		// A bad checksum under a plausible header is usually a damaged payload: if the length leads
		// to another header (or the end), trust it; otherwise search for the next record.
		if mode == readAcked || !plausibleAt(f, next, end) {
			if next, err = resync(f, off+1, end); err != nil {
				return readResult{}, err
			}
		}
		return readResult{hdr: h, next: next, corrupt: true, counted: true}, nil
	}
	return readResult{hdr: h, payload: payload, next: next}, nil
}

// plausibleAt reports whether off is the end of the data or starts a plausible header.
func plausibleAt(f File, off, end int64) bool {
	if off == end {
		return true
	}
	if end-off < headerSize {
		return false
	}
	var hb [headerSize]byte
	if _, err := f.ReadAt(hb[:], off); err != nil {
		return false
	}
	_, err := parseHeader(hb[:], end-off-headerSize)
	return err == nil
}

// resync searches [from, end) for the next plausible header and returns its offset, or end.
func resync(f File, from, end int64) (int64, error) {
	var m [4]byte
	binary.LittleEndian.PutUint32(m[:], magic)
	buf := make([]byte, resyncChunk)
	for pos := from; pos < end; {
		n := int(min(int64(len(buf)), end-pos))
		if _, err := f.ReadAt(buf[:n], pos); err != nil && !errors.Is(err, io.EOF) {
			return 0, fmt.Errorf("resync read at %d: %w", pos, err)
		}
		chunk := buf[:n]
		for i := 0; ; {
			j := bytes.Index(chunk[i:], m[:])
			if j < 0 {
				break
			}
			cand := pos + int64(i+j)
			if plausibleAt(f, cand, end) {
				return cand, nil
			}
			i += j + 1
		}
		if n < len(m) {
			break
		}
		// Overlap by len(magic)-1 so a magic split across chunks is found.
		pos += int64(n - len(m) + 1)
	}
	return end, nil
}
