package tracelog

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

// TestMain fails the package when a test leaves a goroutine behind, such as the FsyncInterval one.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// replayed is one record as the replay callback saw it.
type replayed struct {
	seg     SegmentID
	kind    byte
	payload string
}

// openCollecting opens the log in opts.Dir, returns what replay saw, and closes the log when
// the test ends.
func openCollecting(t *testing.T, opts Options) (*Log, Report, []replayed) {
	t.Helper()
	var got []replayed
	l, report, err := Open(opts, func(seg SegmentID, _ int64, kind byte, payload []byte) error {
		got = append(got, replayed{seg: seg, kind: kind, payload: string(payload)})
		return nil
	})
	require.NoError(t, err)
	t.Cleanup(func() { _ = l.Close() })
	return l, report, got
}

// appendAll appends each payload with kind 1, Refs the segment that took it so that rotation
// keeps it, and returns what a replay of those records must see.
func appendAll(t *testing.T, l *Log, payloads ...string) []replayed {
	t.Helper()
	var want []replayed
	for _, p := range payloads {
		seg, err := l.Append(1, []byte(p))
		require.NoError(t, err)
		l.Ref(seg)
		want = append(want, replayed{seg: seg, kind: 1, payload: p})
	}
	return want
}

// numbered returns n distinct payloads, "record-000" onwards.
func numbered(n int) []string {
	payloads := make([]string, n)
	for i := range payloads {
		payloads[i] = fmt.Sprintf("record-%03d", i)
	}
	return payloads
}

// segmentIDs lists the segment files in dir, in ascending order.
func segmentIDs(t *testing.T, dir string) []SegmentID {
	t.Helper()
	ids, _, err := listSegments(dir)
	require.NoError(t, err)
	return ids
}

// diskBytes is the total size of the segment files in dir.
func diskBytes(t *testing.T, dir string) int64 {
	t.Helper()
	var total int64
	for _, id := range segmentIDs(t, dir) {
		info, err := os.Stat(filepath.Join(dir, segmentName(id)))
		require.NoError(t, err)
		total += info.Size()
	}
	return total
}

// readDir returns every regular file in dir by name, for copying a log's state to damage it.
func readDir(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	files := make(map[string][]byte, len(entries))
	for _, e := range entries {
		if !e.Type().IsRegular() {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		require.NoError(t, err)
		files[e.Name()] = b
	}
	return files
}

// writeDir writes files into a fresh directory and returns it.
func writeDir(t *testing.T, files map[string][]byte) string {
	t.Helper()
	dir := t.TempDir()
	for name, b := range files {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), b, 0o600))
	}
	return dir
}

// segmentBytes encodes a segment file holding the given records, each of kind 1.
func segmentBytes(payloads ...string) []byte {
	b := slices.Clone(segmentHeader[:])
	for _, p := range payloads {
		b = appendRecord(b, 1, len(p), [][]byte{[]byte(p)})
	}
	return b
}

// payloadsOf returns the payloads of the replayed records, in order.
func payloadsOf(records []replayed) []string {
	payloads := make([]string, len(records))
	for i, r := range records {
		payloads[i] = r.payload
	}
	return payloads
}
