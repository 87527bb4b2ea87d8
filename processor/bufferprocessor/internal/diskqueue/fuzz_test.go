package diskqueue

import (
	"bytes"
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
		p, spans, ts, n, err := decodeRecord(b)
		if err != nil {
			return
		}
		if !bytes.Equal(encodeRecord(p, spans, ts), b[:n]) {
			t.Fatalf("accepted record does not round-trip")
		}
	})
}

// FuzzSegmentRead writes arbitrary bytes as a segment and as its ack file, and reads the log: the
// reader must terminate without panicking and return only records that are in the segment's bytes
// as written (a checksum that verifies), never bytes it made up or misframed.
func FuzzSegmentRead(f *testing.F) {
	good := append(encodeRecord([]byte("a"), 1, 1), encodeRecord([]byte("bb"), 2, 2)...)
	f.Add(good, []byte{})
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
			rec := encodeRecord(r.Payload, uint32(r.Spans), r.Enqueued.UnixNano())
			if !bytes.Contains(seg, rec) {
				t.Fatalf("record %d (%d payload bytes) is not in the segment as written", i, len(r.Payload))
			}
			if i > len(seg) {
				t.Fatal("more records than bytes")
			}
		}
	})
}
