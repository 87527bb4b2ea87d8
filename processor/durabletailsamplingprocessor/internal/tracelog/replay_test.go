package tracelog

import (
	"cmp"
	"encoding/binary"
	"errors"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestRoundTripAcrossRotations(t *testing.T) {
	payloads := numbered(40)
	// An empty payload, and one larger than the small segment sizes below, must pass too.
	payloads = slices.Insert(payloads, 10, "", strings.Repeat("x", 300))
	tests := []struct {
		name         string
		segmentBytes int64
		fsync        FsyncMode
	}{
		{name: "one record per segment", segmentBytes: 1, fsync: FsyncNever},
		{name: "three records per segment", segmentBytes: segmentHeaderSize + 3*(recordHeaderSize+10), fsync: FsyncAlways},
		{name: "a few records per segment", segmentBytes: 100, fsync: FsyncInterval},
		{name: "default size, no rotation", fsync: FsyncAlways},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			opts := Options{Dir: t.TempDir(), SegmentBytes: tt.segmentBytes, Fsync: tt.fsync}
			l, _, got := openCollecting(t, opts)
			require.Empty(t, got)
			want := appendAll(t, l, payloads...)
			require.NoError(t, l.Sync(t.Context()))
			require.NoError(t, l.Close())
			files := segmentIDs(t, opts.Dir)
			assertSegmentSizes(t, opts, want)

			_, report, got := openCollecting(t, opts)
			assert.Equal(t, want, got)
			assert.True(t, slices.IsSortedFunc(got, func(a, b replayed) int { return cmp.Compare(a.seg, b.seg) }))
			assert.Equal(t, Report{Segments: len(files), Records: len(payloads)}, report)
		})
	}
}

// assertSegmentSizes checks that rotation kept each segment within its size, unless the
// segment holds a single record which alone is larger.
func assertSegmentSizes(t *testing.T, opts Options, records []replayed) {
	t.Helper()
	limit := opts.SegmentBytes
	if limit == 0 {
		limit = defaultSegmentBytes
	}
	perSegment := map[SegmentID]int{}
	for _, r := range records {
		perSegment[r.seg]++
	}
	for seg, n := range perSegment {
		info, err := os.Stat(filepath.Join(opts.Dir, segmentName(seg)))
		require.NoError(t, err)
		if n > 1 {
			assert.LessOrEqual(t, info.Size(), limit, "segment %d", seg)
		}
	}
}

func TestTornTail(t *testing.T) {
	// Two segments; the last one holds three records and is cut inside its last one.
	dir := t.TempDir()
	opts := Options{Dir: dir, SegmentBytes: segmentHeaderSize + 3*(recordHeaderSize+10)}
	l, _, _ := openCollecting(t, opts)
	want := appendAll(t, l, numbered(6)...)
	require.NoError(t, l.Close())
	files := readDir(t, dir)
	lastName := segmentName(want[len(want)-1].seg)
	last := files[lastName]
	lastStart := len(last) - (recordHeaderSize + len(want[len(want)-1].payload))

	for cut := lastStart; cut < len(last); cut++ {
		damaged := maps.Clone(files)
		damaged[lastName] = last[:cut]
		_, report, got := openCollecting(t, Options{Dir: writeDir(t, damaged)})
		require.Equal(t, want[:len(want)-1], got, "cut at %d", cut)
		wantReport := Report{Segments: 2, Records: len(want) - 1}
		if cut > lastStart {
			wantReport.CorruptSegments, wantReport.SkippedBytes = 1, int64(cut-lastStart)
		}
		require.Equal(t, wantReport, report, "cut at %d", cut)
	}
}

func TestDamagedRecord(t *testing.T) {
	first := segmentBytes("aaa", "bbb", "ccc")
	second := segmentBytes("ddd", "eee")
	middle := segmentHeaderSize + recordHeaderSize + 3 // where record "bbb" starts
	tests := []struct {
		name   string
		damage func(b []byte)
	}{
		{name: "payload byte flipped", damage: func(b []byte) { b[middle+recordHeaderSize+1] ^= 0x40 }},
		{name: "checksum byte flipped", damage: func(b []byte) { b[middle+5] ^= 0x01 }},
		{name: "kind changed", damage: func(b []byte) { b[middle+8] = 2 }},
		{name: "kind zero", damage: func(b []byte) { b[middle+8] = 0 }},
		{name: "length beyond the file", damage: func(b []byte) { b[middle] = 200 }},
		{name: "length above the maximum", damage: func(b []byte) {
			binary.LittleEndian.PutUint32(b[middle:], MaxRecordBytes+1)
		}},
		{name: "length shortened", damage: func(b []byte) { b[middle] = 2 }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			damaged := slices.Clone(first)
			tt.damage(damaged)
			dir := writeDir(t, map[string][]byte{segmentName(1): damaged, segmentName(2): second})
			_, report, got := openCollecting(t, Options{Dir: dir})
			assert.Equal(t, []string{"aaa", "ddd", "eee"}, payloadsOf(got))
			assert.Equal(t, Report{
				Segments: 2, Records: 3, CorruptSegments: 1, SkippedBytes: int64(len(first) - middle),
			}, report)
		})
	}
}

func TestDamagedSegmentHeader(t *testing.T) {
	good := segmentBytes("aaa")
	tests := []struct {
		name        string
		content     []byte
		wantCorrupt bool
	}{
		{name: "other magic", content: append([]byte("XGTL\x01\x00\x00\x00"), good[segmentHeaderSize:]...), wantCorrupt: true},
		{name: "other version", content: append([]byte("TGTL\x02\x00\x00\x00"), good[segmentHeaderSize:]...), wantCorrupt: true},
		{name: "short header", content: good[:5], wantCorrupt: true},
		{name: "empty file", content: []byte{}, wantCorrupt: false},
		{name: "header only", content: good[:segmentHeaderSize], wantCorrupt: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := writeDir(t, map[string][]byte{segmentName(1): tt.content, segmentName(2): good})
			l, report, got := openCollecting(t, Options{Dir: dir})
			assert.Equal(t, []replayed{{seg: 2, kind: 1, payload: "aaa"}}, got)
			want := Report{Segments: 2, Records: 1}
			if tt.wantCorrupt {
				want.CorruptSegments, want.SkippedBytes = 1, int64(len(tt.content))
			}
			assert.Equal(t, want, report)
			// Open keeps the file; nobody references it, so ReleaseUnreferenced deletes it.
			assert.Equal(t, []SegmentID{1, 2, 3}, segmentIDs(t, dir))
			l.Ref(2)
			l.ReleaseUnreferenced()
			assert.Equal(t, []SegmentID{2, 3}, segmentIDs(t, dir))
		})
	}
}

func TestForeignFilesLeftAlone(t *testing.T) {
	dir := writeDir(t, map[string][]byte{
		"notes.txt":                     []byte("not ours"),
		"1.tlog":                        segmentBytes("unpadded name"),
		segmentName(4) + ".tmp":         segmentBytes("other suffix"),
		"99999999999999999999.tlog":     segmentBytes("beyond uint64"),
		"0000000000000000000a.tlog":     segmentBytes("not digits"),
		segmentName(2):                  segmentBytes("ours"),
		strings.ToUpper(segmentName(3)): segmentBytes("upper case"),
	})
	require.NoError(t, os.Mkdir(filepath.Join(dir, segmentName(7)), 0o750))
	before := readDir(t, dir)

	l, report, got := openCollecting(t, Options{Dir: dir})
	assert.Equal(t, []string{"ours"}, payloadsOf(got))
	assert.Equal(t, 1, report.Segments)
	// The directory named like segment 7 is skipped, yet the new segment's id passes it.
	seg, err := l.Append(1, []byte("new"))
	require.NoError(t, err)
	assert.Equal(t, SegmentID(8), seg)

	l.ReleaseUnreferenced()
	after := readDir(t, dir)
	for name, b := range before {
		if name != segmentName(2) {
			assert.Equal(t, b, after[name], name)
		}
	}
	assert.NotContains(t, after, segmentName(2))
}

func TestReplayErrorAbortsOpen(t *testing.T) {
	dir := writeDir(t, map[string][]byte{segmentName(1): segmentBytes("aaa", "bbb")})
	errStop := errors.New("stop here")
	var seen []string
	l, report, err := Open(Options{Dir: dir}, func(_ SegmentID, _ int64, _ byte, payload []byte) error {
		seen = append(seen, string(payload))
		return errStop
	})
	require.ErrorIs(t, err, errStop)
	assert.Nil(t, l)
	assert.Equal(t, []string{"aaa"}, seen)
	assert.Equal(t, 0, report.Records)
	// No new segment was started, and the old one is intact.
	assert.Equal(t, []SegmentID{1}, segmentIDs(t, dir))
}

func TestOpenWithoutReplayCallback(t *testing.T) {
	dir := writeDir(t, map[string][]byte{segmentName(1): segmentBytes("aaa", "bbb")})
	l, report, err := Open(Options{Dir: dir}, nil)
	require.NoError(t, err)
	assert.Equal(t, 2, report.Records)
	require.NoError(t, l.Close())
}

func TestOpenRejectsBadOptions(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name string
		opts Options
	}{
		{name: "no directory", opts: Options{}},
		{name: "negative segment size", opts: Options{Dir: dir, SegmentBytes: -1}},
		{name: "unknown fsync mode", opts: Options{Dir: dir, Fsync: FsyncAlways + 1}},
		{name: "negative interval", opts: Options{Dir: dir, Fsync: FsyncInterval, FsyncInterval: -1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l, _, err := Open(tt.opts, nil)
			require.Error(t, err)
			assert.Nil(t, l)
		})
	}
}

func TestOpenCreatesDirectory(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "a", "b")
	l, _, _ := openCollecting(t, Options{Dir: dir})
	info, err := os.Stat(dir)
	require.NoError(t, err)
	assert.True(t, info.IsDir())
	assert.Equal(t, []SegmentID{1}, segmentIDs(t, dir))
	assert.Equal(t, int64(segmentHeaderSize), l.Size())
}

func TestAppendRejects(t *testing.T) {
	l, _, _ := openCollecting(t, Options{Dir: t.TempDir()})
	_, err := l.Append(0, []byte("kind zero"))
	require.Error(t, err)
	_, err = l.Append(1, make([]byte, MaxRecordBytes+1))
	require.Error(t, err)
	assert.Equal(t, int64(segmentHeaderSize), l.Size(), "a refused record writes nothing")

	require.NoError(t, l.Close())
	_, err = l.Append(1, []byte("after close"))
	require.ErrorIs(t, err, os.ErrClosed)
	require.NoError(t, l.Close(), "Close twice")
}
