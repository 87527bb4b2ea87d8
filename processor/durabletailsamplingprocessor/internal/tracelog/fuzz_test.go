package tracelog

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzReplay opens a log whose only segment holds the fuzzed bytes. Open must not fail, every
// record it replays must be the intact record at the place replay reached (so its CRC passed),
// and the report must account for the rest of the file.
func FuzzReplay(f *testing.F) {
	f.Add(segmentBytes("first", "", strings.Repeat("third", 40)))
	f.Add([]byte{})
	f.Add(segmentHeader[:])
	f.Fuzz(func(t *testing.T, data []byte) {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, segmentName(1)), data, 0o600); err != nil {
			t.Fatal(err)
		}
		replayedEnd := segmentHeaderSize
		l, report, err := Open(Options{Dir: dir}, func(_ SegmentID, _ int64, kind byte, payload []byte) error {
			encoded := appendRecord(nil, kind, len(payload), [][]byte{payload})
			end := replayedEnd + len(encoded)
			if end > len(data) || !bytes.Equal(encoded, data[replayedEnd:end]) {
				t.Fatalf("replayed a record not stored intact at offset %d", replayedEnd)
			}
			replayedEnd = end
			return nil
		})
		if err != nil {
			t.Fatalf("corruption must be reported, not returned: %v", err)
		}
		if err := l.Close(); err != nil {
			t.Fatal(err)
		}
		checkFuzzReport(t, data, report, replayedEnd)
	})
}

// checkFuzzReport checks that the replayed records and the skipped bytes make up the file.
func checkFuzzReport(t *testing.T, data []byte, report Report, replayedEnd int) {
	t.Helper()
	validHeader := len(data) >= segmentHeaderSize && bytes.Equal(data[:segmentHeaderSize], segmentHeader[:])
	var wantSkipped int64
	switch {
	case len(data) == 0:
	case validHeader:
		wantSkipped = int64(len(data) - replayedEnd)
	default:
		wantSkipped = int64(len(data))
	}
	if report.Segments != 1 || report.SkippedBytes != wantSkipped {
		t.Fatalf("report %+v, want 1 segment and %d bytes skipped", report, wantSkipped)
	}
	if (wantSkipped > 0) != (report.CorruptSegments == 1) {
		t.Fatalf("report %+v: corrupt count disagrees with skipped bytes", report)
	}
}
