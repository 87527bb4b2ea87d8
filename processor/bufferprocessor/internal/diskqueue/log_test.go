package diskqueue

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func open(t *testing.T, dir string, mut ...func(*Options)) (*Log, OpenStats) {
	t.Helper()
	o := Options{Dir: dir, CapacityBytes: 1 << 20, SegmentBytes: 4096, Fsync: FsyncNever}
	for _, m := range mut {
		m(&o)
	}
	l, st, err := Open(o)
	require.NoError(t, err)
	return l, st
}

func payload(i int) []byte {
	return []byte(fmt.Sprintf("record-%04d-%s", i, string(make([]byte, 100))))
}

func appendN(t *testing.T, l *Log, from, n int) []Pos {
	t.Helper()
	var ps []Pos
	for i := from; i < from+n; i++ {
		p, claimed, err := l.Append(payload(i), int64(i), time.Unix(0, int64(i)), NoClaim)
		require.NoError(t, err)
		require.False(t, claimed)
		ps = append(ps, p)
	}
	return ps
}

func readAll(t *testing.T, l *Log) []Record {
	t.Helper()
	var out []Record
	for {
		r, ok, err := l.Next()
		require.NoError(t, err)
		if !ok {
			return out
		}
		out = append(out, r)
	}
}

func segFiles(t *testing.T, dir string) []string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(dir, "*"+segSuffix))
	require.NoError(t, err)
	return m
}

func TestAppendReadAckDeletesSegments(t *testing.T) {
	dir := t.TempDir()
	l, _ := open(t, dir)
	appendN(t, l, 0, 100) // ~13 KiB over 4 KiB segments
	assert.Equal(t, int64(100), l.Unread().Records)
	assert.Greater(t, len(segFiles(t, dir)), 3)

	recs := readAll(t, l)
	require.Len(t, recs, 100)
	for i, r := range recs {
		assert.Equal(t, payload(i), r.Payload)
		assert.Equal(t, int64(i), r.Items)
		assert.Equal(t, int64(i), r.Enqueued.UnixNano())
	}
	assert.Zero(t, l.Unread().Records)
	for _, r := range recs {
		require.NoError(t, l.Ack([]Pos{r.Pos}))
	}
	// Only the active segment is left once everything is acknowledged.
	assert.Len(t, segFiles(t, dir), 1)
	assert.Less(t, l.SizeBytes(), int64(4096))
	require.NoError(t, l.Close())
}

func TestReopenReplaysUnacknowledged(t *testing.T) {
	dir := t.TempDir()
	l, _ := open(t, dir)
	appendN(t, l, 0, 10)
	var got []Record
	for range 5 {
		r, ok, err := l.Next()
		require.NoError(t, err)
		require.True(t, ok)
		got = append(got, r)
	}
	require.NoError(t, l.MarkDispatched([]Pos{got[0].Pos, got[1].Pos, got[2].Pos, got[3].Pos, got[4].Pos}))
	require.NoError(t, l.Ack([]Pos{got[0].Pos, got[2].Pos, got[4].Pos}))
	require.NoError(t, l.Close()) // records 1 and 3 were in flight, 5..9 never read

	l, st := open(t, dir)
	defer func() { require.NoError(t, l.Close()) }()
	assert.Equal(t, int64(7), st.Pending.Records)
	assert.Equal(t, int64(2), st.DuplicatesPossible)
	var ids []int
	for _, r := range readAll(t, l) {
		ids = append(ids, int(r.Items))
	}
	assert.Equal(t, []int{1, 3, 5, 6, 7, 8, 9}, ids)
}

func TestCorruption(t *testing.T) {
	tests := []struct {
		name    string
		damage  func(t *testing.T, path string, offs []int64)
		want    []int
		corrupt int64
	}{
		{
			name: "torn tail",
			damage: func(t *testing.T, path string, offs []int64) {
				require.NoError(t, os.Truncate(path, offs[2]+headerSize+5))
			},
			want: []int{0, 1}, corrupt: 1,
		},
		{
			name: "garbage tail",
			damage: func(t *testing.T, path string, _ []int64) {
				f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
				require.NoError(t, err)
				_, err = f.Write(make([]byte, 100)) // zeroes, as after a crash with delayed allocation
				require.NoError(t, errors.Join(err, f.Close()))
			},
			want: []int{0, 1, 2}, corrupt: 1,
		},
		{
			name:   "payload bit flip in the middle",
			damage: func(t *testing.T, path string, offs []int64) { flip(t, path, offs[1]+headerSize+3) },
			want:   []int{0, 2}, corrupt: 1,
		},
		{
			name:   "damaged header in the middle",
			damage: func(t *testing.T, path string, offs []int64) { flip(t, path, offs[1]) },
			want:   []int{0, 2}, corrupt: 1,
		},
		{
			name:   "damaged length in the middle",
			damage: func(t *testing.T, path string, offs []int64) { flip(t, path, offs[1]+9) },
			want:   []int{0, 2}, corrupt: 1,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			l, _ := open(t, dir)
			ps := appendN(t, l, 0, 3)
			require.NoError(t, l.Close())
			tt.damage(t, segName(dir, ps[0].Seg), []int64{ps[0].Off, ps[1].Off, ps[2].Off})

			var corrupt atomic.Int64
			l, _ = open(t, dir, func(o *Options) { o.OnCorrupt = func() { corrupt.Add(1) } })
			var ids []int
			for _, r := range readAll(t, l) {
				ids = append(ids, int(r.Items))
			}
			assert.Equal(t, tt.want, ids)
			assert.Equal(t, tt.corrupt, corrupt.Load())
			assert.Equal(t, tt.corrupt, l.corruptSkipped())
			// The log stays usable after the damage.
			appendN(t, l, 10, 1)
			assert.Len(t, readAll(t, l), 1)
			require.NoError(t, l.Close())
		})
	}
}

func flip(t *testing.T, path string, off int64) {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	b[off] ^= 0x40
	require.NoError(t, os.WriteFile(path, b, 0o600))
}

func TestCapacity(t *testing.T) {
	dir := t.TempDir()
	l, _ := open(t, dir, func(o *Options) { o.CapacityBytes = 2000; o.SegmentBytes = 500 })
	defer func() { require.NoError(t, l.Close()) }()
	n := 0
	for ; ; n++ {
		_, _, err := l.Append(payload(n), 1, time.Now(), NoClaim)
		if err != nil {
			require.ErrorIs(t, err, ErrFull)
			break
		}
	}
	assert.Equal(t, 2000/(headerSize+len(payload(0))), n)
	assert.LessOrEqual(t, l.SizeBytes(), int64(2000))

	_, _, err := l.Append(make([]byte, 3000), 1, time.Now(), NoClaim)
	require.ErrorIs(t, err, ErrTooLarge)

	// Delivering the oldest segment's records frees its space.
	recs := readAll(t, l)
	require.NoError(t, l.Ack([]Pos{recs[0].Pos, recs[1].Pos, recs[2].Pos}))
	_, _, err = l.Append(payload(99), 1, time.Now(), NoClaim)
	require.NoError(t, err)
}

func TestDropOldest(t *testing.T) {
	dir := t.TempDir()
	l, _ := open(t, dir, func(o *Options) { o.SegmentBytes = 500 })
	defer func() { require.NoError(t, l.Close()) }()
	appendN(t, l, 0, 7) // segments of 3 records (3*145 bytes)
	dropped, ok, err := l.DropOldest()
	require.NoError(t, err)
	require.True(t, ok)
	assert.Equal(t, int64(3), dropped.Records)
	assert.Equal(t, int64(0+1+2), dropped.Items)
	r, ok, err := l.Next()
	require.NoError(t, err)
	require.True(t, ok)
	assert.Equal(t, int64(3), r.Items)
	assert.Equal(t, int64(3), l.Unread().Records)
	// The active segment is sealed to be dropped.
	for {
		_, ok, err = l.DropOldest()
		require.NoError(t, err)
		if !ok {
			break
		}
	}
	assert.Zero(t, l.Unread().Records)
}

func TestClaimKeepsOrder(t *testing.T) {
	dir := t.TempDir()
	l, _ := open(t, dir)
	p0, claimed, err := l.Append(payload(0), 0, time.Now(), ClaimIfNext)
	require.NoError(t, err)
	require.True(t, claimed, "nothing unread: claimed")
	appendN(t, l, 1, 1)
	_, claimed, err = l.Append(payload(2), 2, time.Now(), ClaimIfNext)
	require.NoError(t, err)
	require.False(t, claimed, "record 1 is unread: record 2 must wait behind it")
	recs := readAll(t, l)
	require.Len(t, recs, 2)
	assert.Equal(t, int64(1), recs[0].Items)
	require.NoError(t, l.Close())

	// The claimed record was never acknowledged: it is replayed.
	l, st := open(t, dir)
	defer func() { require.NoError(t, l.Close()) }()
	assert.Equal(t, int64(3), st.Pending.Records)
	r, ok, err := l.Next()
	require.NoError(t, err)
	require.True(t, ok)
	assert.Equal(t, p0, r.Pos)
}

func TestSecondOpenIsRefused(t *testing.T) {
	dir := t.TempDir()
	l, _ := open(t, dir)
	_, _, err := Open(Options{Dir: dir, CapacityBytes: 1 << 20})
	require.ErrorIs(t, err, errLocked)
	require.NoError(t, l.Close())
	l, _ = open(t, dir) // released by Close
	require.NoError(t, l.Close())
}

func TestFsyncPolicies(t *testing.T) {
	for _, p := range []FsyncPolicy{FsyncAlways, FsyncInterval, FsyncNever} {
		t.Run(fmt.Sprint(p), func(t *testing.T) {
			dir := t.TempDir()
			l, _ := open(t, dir, func(o *Options) { o.Fsync = p; o.FsyncInterval = time.Millisecond })
			appendN(t, l, 0, 20)
			require.NoError(t, l.Close())
			l, st := open(t, dir)
			assert.Equal(t, int64(20), st.Pending.Records)
			require.NoError(t, l.Close())
		})
	}
}

// noSpaceFS fails writes with ENOSPC once budget bytes have been written, as a full disk does.
type noSpaceFS struct {
	budget atomic.Int64
}

func (fs *noSpaceFS) OpenFile(name string, flag int, perm os.FileMode) (File, error) {
	f, err := OS{}.OpenFile(name, flag, perm)
	if err != nil {
		return nil, err
	}
	return &noSpaceFile{File: f, fs: fs}, nil
}

func (*noSpaceFS) Remove(name string) error { return os.Remove(name) }

type noSpaceFile struct {
	File
	fs *noSpaceFS
}

func (f *noSpaceFile) Write(b []byte) (int, error) {
	if f.fs.budget.Add(-int64(len(b))) < 0 {
		// A partial write, then the error: the log must roll the partial record back.
		n, err := f.File.Write(b[:len(b)/2])
		return n, errors.Join(err, &os.PathError{Op: "write", Path: "x", Err: syscall.ENOSPC})
	}
	return f.File.Write(b)
}

func TestENOSPCIsFull(t *testing.T) {
	dir := t.TempDir()
	fs := &noSpaceFS{}
	fs.budget.Store(1000)
	l, _ := open(t, dir, func(o *Options) { o.FS = fs })
	var n int
	var err error
	for ; n < 100; n++ {
		if _, _, err = l.Append(payload(n), int64(n), time.Now(), NoClaim); err != nil {
			break
		}
	}
	require.ErrorIs(t, err, ErrFull)
	require.ErrorIs(t, err, syscall.ENOSPC)
	fs.budget.Store(1 << 20) // space freed elsewhere
	appendN(t, l, 100, 2)
	var ids []int64
	for _, r := range readAll(t, l) {
		ids = append(ids, r.Items)
	}
	require.Len(t, ids, n+2, "the half-written record was rolled back, nothing corrupt in between")
	assert.Equal(t, int64(100), ids[n])
	assert.Zero(t, l.corruptSkipped())
	require.NoError(t, l.Close())
}

// syncCountingFS counts fsyncs per kind of file (by suffix: segment or ack).
type syncCountingFS struct {
	mu    sync.Mutex
	syncs map[string]int
	order []string // the kinds, in the order they were synced
	holdP time.Duration
}

func (fs *syncCountingFS) OpenFile(name string, flag int, perm os.FileMode) (File, error) {
	f, err := OS{}.OpenFile(name, flag, perm)
	if err != nil {
		return nil, err
	}
	return &syncCountingFile{File: f, fs: fs, kind: filepath.Ext(name)}, nil
}

func (*syncCountingFS) Remove(name string) error { return os.Remove(name) }

func (fs *syncCountingFS) count(kind string) int {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	return fs.syncs[kind]
}

type syncCountingFile struct {
	File
	fs   *syncCountingFS
	kind string
}

func (f *syncCountingFile) Sync() error {
	f.fs.mu.Lock()
	f.fs.syncs[f.kind]++
	f.fs.order = append(f.fs.order, f.kind)
	hold := f.fs.holdP
	f.fs.mu.Unlock()
	if hold > 0 {
		// An fsync syscall keeps its P until it returns or the runtime's monitor takes the P away
		// (tens of microseconds later at best). This one keeps it throughout: the worst case.
		spin(hold)
		return nil
	}
	return f.File.Sync()
}

// spin keeps the goroutine (and its P) busy for d without a point where the scheduler could switch.
func spin(d time.Duration) {
	for start := time.Now(); ; {
		if time.Since(start) >= d {
			return
		}
	}
}

// TestFsyncAlwaysGroupsConcurrentAppends: appends that run while a group commit's leader is about
// to fsync share its fsync, also with one P, where the fsync itself keeps every other append from
// running (before the leader yielded first, each of these appends paid an fsync of its own).
func TestFsyncAlwaysGroupsConcurrentAppends(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	fs := &syncCountingFS{syncs: map[string]int{}, holdP: 300 * time.Microsecond}
	l, _ := open(t, t.TempDir(), func(o *Options) {
		o.Fsync = FsyncAlways
		o.FS = fs
		o.AckSyncInterval = time.Hour
		o.SegmentBytes = 1 << 20
	})
	const appends = 64
	start := make(chan struct{})
	errs := make(chan error, appends)
	for i := range appends {
		go func() {
			<-start
			spin(50 * time.Microsecond) // a request being decoded before its append
			_, _, err := l.Append(payload(i), 1, time.Now(), NoClaim)
			errs <- err
		}()
	}
	close(start)
	for range appends {
		require.NoError(t, <-errs)
	}
	syncs := fs.count(segSuffix)
	assert.LessOrEqual(t, syncs, appends/8, "%d appends needed %d fsyncs", appends, syncs)
	assert.Equal(t, int64(appends), l.Unread().Records, "every append was written")
	require.NoError(t, l.Close())
}

// TestFsyncAlwaysLeavesAcksOutOfTheWritePath: with FsyncAlways every Append waits for the segment's
// fsync, but not for the ack file's (at most once per AckSyncInterval): a lost ack entry only means a
// duplicate. Close syncs the acks.
func TestFsyncAlwaysLeavesAcksOutOfTheWritePath(t *testing.T) {
	dir := t.TempDir()
	fs := &syncCountingFS{syncs: map[string]int{}}
	l, _ := open(t, dir, func(o *Options) { o.Fsync = FsyncAlways; o.FS = fs; o.AckSyncInterval = time.Hour })
	appendN(t, l, 0, 1) // the first sync includes the (not yet existing) acks: the clock starts
	rec, ok, err := l.Next()
	require.NoError(t, err)
	require.True(t, ok)
	require.NoError(t, l.Ack([]Pos{rec.Pos}))
	appendN(t, l, 1, 3)
	assert.Equal(t, 4, fs.count(segSuffix), "one segment fsync per Append")
	assert.Equal(t, 0, fs.count(ackSuffix), "the ack file is not synced in the write path within AckSyncInterval")
	require.NoError(t, l.Close())
	assert.Equal(t, 1, fs.count(ackSuffix), "Close syncs the ack file")

	l, st := open(t, dir)
	assert.Equal(t, int64(3), st.Pending.Records, "the acknowledged record stays acknowledged")
	require.NoError(t, l.Close())
}

// TestFsyncAlwaysSyncsAcksWithoutAppends: when no append runs (a backlog drained while clients
// are idle), the acks are still fsynced every AckSyncInterval, not left to the kernel's writeback.
func TestFsyncAlwaysSyncsAcksWithoutAppends(t *testing.T) {
	fs := &syncCountingFS{syncs: map[string]int{}}
	l, _ := open(t, t.TempDir(), func(o *Options) { o.Fsync = FsyncAlways; o.FS = fs; o.AckSyncInterval = 10 * time.Millisecond })
	defer func() { require.NoError(t, l.Close()) }()
	appendN(t, l, 0, 1)
	rec, ok, err := l.Next()
	require.NoError(t, err)
	require.True(t, ok)
	require.NoError(t, l.Ack([]Pos{rec.Pos}))
	// No append from here on. 10 s is a liveness bound, a thousand intervals.
	require.Eventually(t, func() bool { return fs.count(ackSuffix) > 0 }, 10*time.Second, time.Millisecond,
		"the ack file was never fsynced")
}

// TestSegmentsAreSyncedBeforeAcks: an fsync round makes every segment durable before any ack
// file. A shutdown saves the rest of a delivery as a new record in the active segment and acks
// the old record in an older one; if that ack became durable first, a power failure in between
// would leave neither copy.
func TestSegmentsAreSyncedBeforeAcks(t *testing.T) {
	fs := &syncCountingFS{syncs: map[string]int{}}
	l, _ := open(t, t.TempDir(), func(o *Options) { o.FS = fs }) // FsyncNever: only Close syncs
	ps := appendN(t, l, 0, 40)                                   // 4 KiB segments: several
	require.Greater(t, ps[len(ps)-1].Seg, ps[0].Seg)
	var first Record
	for i := range 2 {
		r, ok, err := l.Next()
		require.NoError(t, err)
		require.True(t, ok)
		if i == 0 {
			first = r
		}
	}
	// The rewrite: the new copy in the active segment, then the ack of the old one.
	_, _, err := l.Append(first.Payload, first.Items, first.Enqueued, NoClaim)
	require.NoError(t, err)
	require.NoError(t, l.Ack([]Pos{first.Pos}))
	require.NoError(t, l.Close())
	fs.mu.Lock()
	defer fs.mu.Unlock()
	firstAck := slices.Index(fs.order, ackSuffix)
	require.GreaterOrEqual(t, firstAck, 0, "the ack was synced")
	assert.NotContains(t, fs.order[firstAck:], segSuffix, "a segment synced after an ack file: %v", fs.order)
}

// TestDamagedLengthDoesNotHideRecords: a damaged length that still looks plausible makes the Open
// scan jump over valid records, which the reader then finds by resynchronising. The unread count
// is then too low; neither the workers (HasUnread) nor a claiming append may rely on it, or the
// records behind would never be read: lost without a count.
func TestDamagedLengthDoesNotHideRecords(t *testing.T) {
	dir := t.TempDir()
	l, _ := open(t, dir)
	ps := appendN(t, l, 0, 10)
	require.NoError(t, l.Close())
	recSize := ps[2].Off - ps[1].Off
	// Record 1 now claims to reach into the middle of record 4: a header the scan trusts, a length
	// that leads to no header, so the reader resynchronises and finds records 2 to 9.
	path := segName(dir, ps[0].Seg)
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	length := binary.LittleEndian.Uint32(b[ps[1].Off+8:])
	binary.LittleEndian.PutUint32(b[ps[1].Off+8:], length+uint32(3*recSize)+7)
	require.NoError(t, os.WriteFile(path, b, 0o600))

	l, st := open(t, dir)
	defer func() { require.NoError(t, l.Close()) }()
	require.Less(t, st.Pending.Records, int64(9), "the scan skipped records (else this test tests nothing)")
	var ids []int
	for range 6 { // 0, 2, 3, 4, 5, 6: more than the scan counted
		r, ok, nextErr := l.Next()
		require.NoError(t, nextErr)
		require.True(t, ok)
		ids = append(ids, int(r.Items))
	}
	assert.Zero(t, l.Unread().Records, "the count ran out before the records did")
	assert.True(t, l.HasUnread(), "records 7 to 9 are still to be read")
	// A write_ahead append that claims its record would pass the reader over 7 to 9.
	_, claimed, err := l.Append(payload(10), 10, time.Unix(0, 10), ClaimIfNext)
	require.NoError(t, err)
	assert.False(t, claimed, "claimed with records unread before it")
	for _, r := range readAll(t, l) {
		ids = append(ids, int(r.Items))
	}
	assert.Equal(t, []int{0, 2, 3, 4, 5, 6, 7, 8, 9, 10}, ids)
	assert.False(t, l.HasUnread())
}

// TestOpenDeletesSegmentsWithNothingToDeliver: each Open creates an active segment; one that
// stayed empty, or whose records were all acknowledged, is deleted at the next Open instead of
// piling up (a crash-looping collector restarts many times without writing).
func TestOpenDeletesSegmentsWithNothingToDeliver(t *testing.T) {
	dir := t.TempDir()
	for range 5 {
		l, _ := open(t, dir)
		require.NoError(t, l.Close())
	}
	assert.Len(t, segFiles(t, dir), 1, "empty segments piled up")

	l, _ := open(t, dir)
	ps := appendN(t, l, 0, 3)
	for _, r := range readAll(t, l) {
		require.NoError(t, l.Ack([]Pos{r.Pos}))
	}
	appendN(t, l, 3, 1) // not acknowledged: its segment stays
	require.NoError(t, l.Close())
	l, st := open(t, dir)
	assert.Equal(t, int64(1), st.Pending.Records)
	recs := readAll(t, l)
	require.Len(t, recs, 1)
	assert.Equal(t, int64(3), recs[0].Items)
	require.NoError(t, l.Close())
	assert.Equal(t, ps[0].Seg, ps[2].Seg)
	assert.Len(t, segFiles(t, dir), 2, "the record's segment and the new active one")
}

// TestOpenKeepsASegmentItCannotProve: a segment whose records the header scan saw all
// acknowledged is deleted at Open only if a checksummed read agrees. Here an acknowledged
// record's length was damaged to reach the next record's header, hiding an unacknowledged one
// from the scan; the segment stays, the reader does not trust that length (the record was
// delivered, its data is not needed) and finds the hidden record, and the damage is counted.
func TestOpenKeepsASegmentItCannotProve(t *testing.T) {
	dir := t.TempDir()
	l, _ := open(t, dir)
	ps := appendN(t, l, 0, 3)
	recs := readAll(t, l)
	require.Len(t, recs, 3)
	require.NoError(t, l.Ack([]Pos{recs[0].Pos, recs[2].Pos})) // record 1 is still to deliver
	require.NoError(t, l.Close())
	path := segName(dir, ps[0].Seg)
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	length := binary.LittleEndian.Uint32(b[ps[0].Off+8:])
	binary.LittleEndian.PutUint32(b[ps[0].Off+8:], length+uint32(ps[2].Off-ps[1].Off))
	require.NoError(t, os.WriteFile(path, b, 0o600))

	l, st := open(t, dir)
	defer func() { require.NoError(t, l.Close()) }()
	require.Zero(t, st.Pending.Records, "the scan sees nothing to deliver (else this tests nothing)")
	_, err = os.Stat(path)
	require.NoError(t, err, "the segment was deleted with an unacknowledged record in it")
	got := readAll(t, l)
	require.Len(t, got, 1, "the unacknowledged record is read: the damaged length of a delivered record is not trusted")
	assert.Equal(t, int64(1), got[0].Items)
	assert.Equal(t, int64(1), l.corruptSkipped(), "the damage is counted")
}

// TestSealedSegmentReadToItsEndIsPassed: after a restart the reader starts in the old, sealed
// segment. Once its last record is read, HasUnread still reports work, so that the workers call
// Next, which passes the segment; acknowledged, it is then deleted (before, it stayed until the
// next append, forever on a log that memory keeps up with).
func TestSealedSegmentReadToItsEndIsPassed(t *testing.T) {
	dir := t.TempDir()
	l, _ := open(t, dir)
	appendN(t, l, 0, 3)
	require.NoError(t, l.Close())
	l, _ = open(t, dir)
	defer func() { require.NoError(t, l.Close()) }()
	var ps []Pos
	for range 3 {
		r, ok, err := l.Next()
		require.NoError(t, err)
		require.True(t, ok)
		ps = append(ps, r.Pos)
	}
	require.True(t, l.HasUnread(), "the sealed segment is still to be passed")
	_, ok, err := l.Next()
	require.NoError(t, err)
	require.False(t, ok)
	assert.False(t, l.HasUnread())
	require.NoError(t, l.Ack(ps))
	assert.Len(t, segFiles(t, dir), 1, "the old segment was deleted once passed and acknowledged")
}
