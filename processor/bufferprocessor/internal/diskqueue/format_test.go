package diskqueue

import (
	"encoding/binary"
	"hash/crc32"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/pdatatest/ptracetest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// The log in testdata/v1 was written by format version 1 (the release before segment headers),
// through the API the buffer processor uses: Open with SegmentBytes 658, then Append of the
// protobuf (ptrace.ProtoMarshaler) of fixtureTraces(3*i, 3), 3 items, enqueued at
// fixtureEnqueued(i), for i = 0..3; Next twice, MarkDispatched of both records read, Ack of the
// first, Close; the LOCK file left out. Three segments: records 0 and 1, record 2, record 3.
// It is never regenerated: it is what a log of that release holds after an upgrade.
const fixtureV1 = "testdata/v1"

// fixtureTraces are the spans of a fixture record: named from, ..., from+n-1, as the buffer
// processor's tests name theirs.
func fixtureTraces(from, n int) ptrace.Traces {
	td := ptrace.NewTraces()
	rs := td.ResourceSpans().AppendEmpty()
	rs.Resource().Attributes().PutStr("service.name", "fixture")
	ss := rs.ScopeSpans().AppendEmpty()
	ss.Scope().SetName("tracegate/fixture")
	for id := from; id < from+n; id++ {
		s := ss.Spans().AppendEmpty()
		s.SetName(strconv.Itoa(id))
		var sid [8]byte
		binary.BigEndian.PutUint64(sid[:], uint64(id)+1)
		s.SetSpanID(sid)
		s.SetTraceID([16]byte{1, sid[0], sid[1], sid[2], sid[3], sid[4], sid[5], sid[6], sid[7]})
		start := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC).Add(time.Duration(id) * time.Millisecond)
		s.SetStartTimestamp(pcommon.NewTimestampFromTime(start))
		s.SetEndTimestamp(pcommon.NewTimestampFromTime(start.Add(time.Millisecond)))
		s.SetKind(ptrace.SpanKindServer)
		s.Attributes().PutStr("http.route", "/fixture")
	}
	return td
}

func fixtureEnqueued(i int) time.Time { return time.Date(2026, 12, 1, 12, 0, i, 0, time.UTC) }

// copyFixture copies the v1 log into a fresh directory (Open writes to it).
func copyFixture(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	require.NoError(t, os.CopyFS(dir, os.DirFS(fixtureV1)))
	return dir
}

// segVersion returns the format a segment file's first bytes announce.
func segVersion(t *testing.T, path string) int {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	sf, err := parseSegmentHeader(b[:min(len(b), maxSegHeaderBytes)])
	require.NoError(t, err)
	return sf.version
}

// checkFixtureRecord asserts that r is fixture record i as it was written.
func checkFixtureRecord(t *testing.T, r Record, i int) {
	t.Helper()
	assert.Equal(t, int64(3), r.Items)
	assert.Equal(t, fixtureEnqueued(i), r.Enqueued.UTC())
	var u ptrace.ProtoUnmarshaler
	td, err := u.UnmarshalTraces(r.Payload)
	require.NoError(t, err)
	require.NoError(t, ptracetest.CompareTraces(fixtureTraces(3*i, 3), td), "record %d", i)
}

// TestReplaysFormatV1: a log written before segment headers replays after the upgrade: every
// record without an ack entry, as written, with its acknowledgements and dispatch marks; once
// delivered, its segments go like any other.
func TestReplaysFormatV1(t *testing.T) {
	dir := copyFixture(t)
	for _, p := range segFiles(t, dir) {
		require.Equal(t, 1, segVersion(t, p), "%s: the fixture is format 1", p)
	}
	l, st := open(t, dir)
	assert.Equal(t, OpenStats{Pending: Counts{Records: 3, Items: 9, Bytes: 329 + 329 + 331}, DuplicatesPossible: 1}, st)
	recs := readAll(t, l)
	require.Len(t, recs, 3, "records 1 to 3: record 0 was acknowledged")
	assert.Equal(t, Pos{Seg: 1, Off: 329}, recs[0].Pos)
	for i, r := range recs {
		checkFixtureRecord(t, r, i+1)
	}
	assert.Zero(t, l.corruptSkipped())
	assert.Equal(t, formatVersion, segVersion(t, ackAllAndReopen(t, l, dir, recs)))
}

// ackAllAndReopen acknowledges recs, closes l and opens its directory again: nothing is left to
// deliver, and the delivered segments are gone. It returns the one segment left, the new active.
func ackAllAndReopen(t *testing.T, l *Log, dir string, recs []Record) string {
	t.Helper()
	for _, r := range recs {
		require.NoError(t, l.Ack([]Pos{r.Pos}))
	}
	require.NoError(t, l.Close())
	l, st := open(t, dir)
	assert.Zero(t, st.Pending.Records)
	require.NoError(t, l.Close())
	files := segFiles(t, dir)
	require.Len(t, files, 1, "the delivered segments were deleted")
	return files[0]
}

// TestMixedVersionsReplayInOrder: after an upgrade the log holds the old release's segments
// (version 1) followed by the new one's (version 2); they replay in order, and acknowledgements
// in both kinds hold across a restart.
func TestMixedVersionsReplayInOrder(t *testing.T) {
	dir := copyFixture(t)
	l, _ := open(t, dir, func(o *Options) { o.SegmentBytes = 500 })
	first, ok, err := l.Next()
	require.NoError(t, err)
	require.True(t, ok)
	checkFixtureRecord(t, first, 1)
	require.NoError(t, l.Ack([]Pos{first.Pos}))
	ps := appendN(t, l, 100, 5) // 145 bytes each: 3 per 500-byte segment
	require.Greater(t, ps[4].Seg, ps[0].Seg, "several version 2 segments")
	require.NoError(t, l.Close())

	var versions []int
	for _, p := range segFiles(t, dir) {
		versions = append(versions, segVersion(t, p))
	}
	assert.Equal(t, []int{1, 1, 1, 2, 2}, versions, "the old segments, then the new ones")

	l, st := open(t, dir)
	assert.Equal(t, int64(2+5), st.Pending.Records)
	recs := readAll(t, l)
	require.Len(t, recs, 7)
	checkFixtureRecord(t, recs[0], 2)
	checkFixtureRecord(t, recs[1], 3)
	for i, r := range recs[2:] {
		assert.Equal(t, payload(100+i), r.Payload)
		assert.Equal(t, int64(100+i), r.Items)
		assert.Equal(t, ps[i], r.Pos)
	}
	ackAllAndReopen(t, l, dir, recs)
}

// futureHeader is a segment header of a later version: version 2's fields, a header of length
// bytes, the CRC in its last 4.
func futureHeader(version uint16, length int) []byte {
	h := make([]byte, length)
	binary.LittleEndian.PutUint32(h[0:4], segMagic)
	binary.LittleEndian.PutUint16(h[4:6], version)
	binary.LittleEndian.PutUint16(h[6:8], uint16(length))
	binary.LittleEndian.PutUint32(h[length-4:], crc32.Checksum(h[:length-4], castagnoli))
	return h
}

// TestOpenRefusesALaterVersion: a segment of a version this code does not know (a log written by
// a later release, then a downgrade) makes Open fail, naming the file, the version and the highest
// one supported, and leaves the directory as it was: never read as records, never skipped as
// damage.
func TestOpenRefusesALaterVersion(t *testing.T) {
	for _, length := range []int{segHeaderSize, 40} {
		t.Run(strconv.Itoa(length), func(t *testing.T) {
			dir := copyFixture(t)
			seg := append(futureHeader(99, length), encodeRecord([]byte("from the future"), 1, 1)...)
			path := segName(dir, 4) // after the fixture's three
			require.NoError(t, os.WriteFile(path, seg, 0o600))

			_, _, err := Open(Options{Dir: dir, CapacityBytes: 1 << 20})
			require.ErrorIs(t, err, ErrUnsupportedVersion)
			require.EqualError(t, err, "segment "+path+": unsupported disk buffer format version 99 "+
				"(the highest this release reads is 2): written by a later release, it cannot be read after a downgrade")
			files, err := filepath.Glob(filepath.Join(dir, "*.seg"))
			require.NoError(t, err)
			assert.Len(t, files, 4, "no segment deleted or created")
			l, _, err := Open(Options{Dir: dir, CapacityBytes: 1 << 20})
			require.ErrorIs(t, err, ErrUnsupportedVersion, "the lock was released: Open tried again")
			assert.Nil(t, l)
		})
	}
}

// TestDamagedSegmentHeader: a header that does not verify is damage, not a version: the reader
// counts it and finds the records behind it.
func TestDamagedSegmentHeader(t *testing.T) {
	for name, off := range map[string]int64{"magic": 1, "version": 4, "length": 6, "crc": 9} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			l, _ := open(t, dir)
			ps := appendN(t, l, 0, 3)
			require.NoError(t, l.Close())
			require.Equal(t, int64(segHeaderSize), ps[0].Off)
			flip(t, segName(dir, ps[0].Seg), off)

			l, st := open(t, dir)
			defer func() { require.NoError(t, l.Close()) }()
			assert.Equal(t, int64(1), st.Corrupt)
			assert.Equal(t, int64(3), st.Pending.Records)
			recs := readAll(t, l)
			require.Len(t, recs, 3)
			for i, r := range recs {
				assert.Equal(t, ps[i], r.Pos)
			}
			assert.Equal(t, int64(1), l.corruptSkipped())
		})
	}
}

func TestParseSegmentHeader(t *testing.T) {
	rec := encodeRecord([]byte("x"), 1, 1)
	v2 := segmentHeader[:]
	with := func(b []byte, off int, v byte) []byte {
		b = append([]byte{}, b...)
		b[off] = v
		return b
	}
	tests := []struct {
		name string
		b    []byte
		want segFormat
		err  string
	}{
		{"version 1: a record first", rec, segFormat{version: 1}, ""},
		{"version 1: a torn record", rec[:5], segFormat{version: 1}, ""},
		{"empty", nil, segFormat{}, ""},
		{"torn header", v2[:7], segFormat{start: 7}, ""},
		{"torn header, magic only", v2[:3], segFormat{start: 3}, ""},
		{"version 2", append(append([]byte{}, v2...), rec...), segFormat{version: 2, start: segHeaderSize}, ""},
		{"version 2, no record", v2, segFormat{version: 2, start: segHeaderSize}, ""},
		{"garbage", []byte("not a segment at all"), segFormat{}, ""},
		{"short garbage", []byte("TGSX"), segFormat{}, ""},
		{"bad crc", with(v2, 11, 0), segFormat{}, ""},
		{"length below the CRC", with(v2, 6, 2), segFormat{}, ""},
		{"length beyond the bytes", futureHeader(2, 40)[:30], segFormat{}, ""},
		{"version 2, longer header", futureHeader(2, 16), segFormat{}, ""},
		{"version 1 header", futureHeader(1, segHeaderSize), segFormat{}, ""},
		{"version 3", futureHeader(3, segHeaderSize), segFormat{}, "unsupported disk buffer format version 3 (the highest this release reads is 2)"},
		{"version 65535, longer header", futureHeader(65535, 64), segFormat{}, "unsupported disk buffer format version 65535 (the highest this release reads is 2)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseSegmentHeader(tt.b)
			if tt.err != "" {
				require.EqualError(t, err, tt.err)
				require.ErrorIs(t, err, ErrUnsupportedVersion)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}

// TestSegmentHeaderBytes: the header as the documentation gives it, byte for byte.
func TestSegmentHeaderBytes(t *testing.T) {
	assert.Equal(t, "TGSG\x02\x00\x0c\x00", string(segmentHeader[:8]))
	assert.Equal(t, crc32.Checksum([]byte("TGSG\x02\x00\x0c\x00"), castagnoli), binary.LittleEndian.Uint32(segmentHeader[8:]))
}
