package diskqueue

import (
	"bytes"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"os"
	"path/filepath"
	"testing"
)

// FuzzDecodeRecord: bytes from disk are untrusted. Decoding must never panic, and whatever it
// accepts must re-encode to exactly the bytes it consumed.
func FuzzDecodeRecord(f *testing.F) {
	f.Add(encodeRecord([]byte("hello"), 1, 42))
	f.Add(encodeRecord(bytes.Repeat([]byte{0xff}, 300), 7, -1))
	f.Add(make([]byte, headerSize))
	f.Add([]byte("TGB1"))
	f.Fuzz(func(t *testing.T, b []byte) {
		p, items, ts, n, err := decodeRecord(b)
		if err != nil {
			return
		}
		if !bytes.Equal(encodeRecord(p, items, ts), b[:n]) {
			t.Fatalf("accepted record does not round-trip")
		}
	})
}

// FuzzSegmentHeader: the first bytes of a segment are untrusted too. Parsing them must never
// panic; a version 2 header it accepts is exactly the one this code writes; version 1 is a record
// magic at offset 0; and only a header whose CRC verifies may claim an unsupported version.
func FuzzSegmentHeader(f *testing.F) {
	rec := encodeRecord([]byte("a"), 1, 1)
	f.Add(append(segmentHeader[:], rec...))
	f.Add(segmentHeader[:5])
	f.Add(rec)
	f.Add([]byte{})
	f.Add(futureHeader(99, segHeaderSize))
	f.Add(futureHeader(3, 64))
	f.Fuzz(func(t *testing.T, b []byte) {
		sf, err := parseSegmentHeader(b)
		if err != nil {
			if !errors.Is(err, ErrUnsupportedVersion) {
				t.Fatalf("not a version error: %v", err)
			}
			length := int(binary.LittleEndian.Uint16(b[6:8]))
			if binary.LittleEndian.Uint16(b[4:6]) <= formatVersion ||
				crc32.Checksum(b[:length-4], castagnoli) != binary.LittleEndian.Uint32(b[length-4:length]) {
				t.Fatal("refused a header that does not verify or claims a supported version")
			}
			return
		}
		switch sf.version {
		case formatVersion:
			if sf.start != segHeaderSize || !bytes.Equal(b[:segHeaderSize], segmentHeader[:]) {
				t.Fatalf("accepted a version 2 header that is not the one written: % x", b[:min(len(b), segHeaderSize)])
			}
		case 1:
			if sf.start != 0 || len(b) < 4 || binary.LittleEndian.Uint32(b) != magic {
				t.Fatal("version 1 without a record at offset 0")
			}
		case 0: // damaged (read from 0) or torn (nothing to read)
			if sf.start != 0 && (sf.start != int64(len(b)) || !bytes.HasPrefix(segmentHeader[:], b)) {
				t.Fatalf("start %d for a damaged header of %d bytes", sf.start, len(b))
			}
		default:
			t.Fatalf("version %d", sf.version)
		}
	})
}

// FuzzSegmentRead writes arbitrary bytes as a segment and as its ack file, and reads the log: the
// reader must terminate without panicking and return only records that are in the segment's bytes
// as written (a checksum that verifies), never bytes it made up or misframed. Open refuses only a
// later format version.
func FuzzSegmentRead(f *testing.F) {
	good := append(encodeRecord([]byte("a"), 1, 1), encodeRecord([]byte("bb"), 2, 2)...)
	v2 := append(segmentHeader[:], good...)
	f.Add(good, []byte{})
	f.Add(v2, encodeAck(segHeaderSize, kindAcked))
	f.Add(append([]byte("TGSG\x02\x00\x0c\x00xxxx"), good...), []byte{}) // a damaged header
	f.Add(append(futureHeader(9, segHeaderSize), good...), []byte{})
	f.Add(append(append([]byte{}, good[:30]...), good...), []byte{})
	f.Add(bytes.Repeat([]byte("TGB1"), 40), []byte{})
	f.Add(good, encodeAck(0, kindAcked))                                            // the first record delivered
	f.Add(good, append(encodeAck(0, kindDispatch), encodeAck(0, kindAcked)[:9]...)) // a torn tail
	f.Fuzz(func(t *testing.T, seg, ack []byte) {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "0000000000000001.seg"), seg, 0o600); err != nil {
			t.Fatal(err)
		}
		if len(ack) > 0 {
			if err := os.WriteFile(ackName(dir, 1), ack, 0o600); err != nil {
				t.Fatal(err)
			}
		}
		l, _, err := Open(Options{Dir: dir, CapacityBytes: 1 << 20, Fsync: FsyncNever})
		if errors.Is(err, ErrUnsupportedVersion) {
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		for i := 0; ; i++ {
			r, ok, err := l.Next()
			if err != nil {
				t.Fatal(err)
			}
			if !ok {
				break
			}
			rec := encodeRecord(r.Payload, uint32(r.Items), r.Enqueued.UnixNano())
			if !bytes.Contains(seg, rec) {
				t.Fatalf("record %d (%d payload bytes) is not in the segment as written", i, len(r.Payload))
			}
			if i > len(seg) {
				t.Fatal("more records than bytes")
			}
		}
	})
}
