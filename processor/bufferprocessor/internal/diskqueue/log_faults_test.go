package diskqueue

import (
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// hookFS lets a test stop segment writes and make segment fsyncs fail or stop.
type hookFS struct {
	blockWrites atomic.Bool   // the next segment writes wait for release
	writing     chan struct{} // a segment write is waiting
	release     chan struct{} // let the waiting segment write go on

	failSyncs  atomic.Int64  // the next n segment fsyncs fail with EIO (-1: all)
	blockSyncs atomic.Bool   // segment fsyncs wait for syncRelease
	syncing    chan struct{} // a segment fsync is waiting
	syncGo     chan struct{}
}

func newHookFS() *hookFS {
	return &hookFS{writing: make(chan struct{}, 1), release: make(chan struct{}), syncing: make(chan struct{}, 1), syncGo: make(chan struct{})}
}

func (fs *hookFS) OpenFile(name string, flag int, perm os.FileMode) (File, error) {
	f, err := OS{}.OpenFile(name, flag, perm)
	if err != nil {
		return nil, err
	}
	return &hookFile{File: f, fs: fs, segment: filepath.Ext(name) == segSuffix}, nil
}

func (*hookFS) Remove(name string) error { return os.Remove(name) }

type hookFile struct {
	File
	fs      *hookFS
	segment bool
}

func (f *hookFile) Write(b []byte) (int, error) {
	if f.segment && f.fs.blockWrites.Load() {
		f.fs.writing <- struct{}{}
		<-f.fs.release
	}
	return f.File.Write(b)
}

func (f *hookFile) Sync() error {
	if f.segment && f.fs.blockSyncs.Load() {
		f.fs.syncing <- struct{}{}
		<-f.fs.syncGo
	}
	if n := f.fs.failSyncs.Load(); f.segment && n != 0 {
		if n > 0 {
			f.fs.failSyncs.Add(-1)
		}
		return &os.PathError{Op: "fsync", Path: "segment", Err: syscall.EIO}
	}
	return f.File.Sync()
}

// appendAsync appends record i in a goroutine; its error arrives on the channel.
func appendAsync(l *Log, i int) <-chan error {
	done := make(chan error, 1)
	go func() {
		_, _, err := l.Append(payload(i), int64(i), time.Now(), NoClaim)
		done <- err
	}()
	return done
}

// TestDropOldestWaitsForAnAppendInFlight: an append that did its bookkeeping and is writing must
// not have its segment sealed and passed under it by DropOldest (drop_oldest on a full disk while
// another batch is appended), or its record would land where the reader never goes again: an
// acknowledged batch lost, and an unread count that never returns to zero.
func TestDropOldestWaitsForAnAppendInFlight(t *testing.T) {
	fs := newHookFS()
	l, _ := open(t, t.TempDir(), func(o *Options) { o.FS = fs })
	defer func() { require.NoError(t, l.Close()) }()
	appendN(t, l, 0, 2)
	first, ok, err := l.Next() // in flight: keeps the segment from being deleted
	require.NoError(t, err)
	require.True(t, ok)

	fs.blockWrites.Store(true)
	var releaseOnce sync.Once
	release := func() { releaseOnce.Do(func() { close(fs.release) }) }
	defer release() // on failure too: Close waits for the write
	appended := appendAsync(l, 2)
	<-fs.writing // the append holds its position in the active segment and is writing
	fs.blockWrites.Store(false)

	type dropResult struct {
		c   Counts
		err error
	}
	dropped := make(chan dropResult, 1)
	go func() {
		c, _, err := l.DropOldest()
		dropped <- dropResult{c, err}
	}()
	select {
	case <-dropped:
		release()
		require.NoError(t, <-appended)
		t.Fatal("DropOldest returned while an append was writing into the segment it drops")
	case <-time.After(100 * time.Millisecond):
	}
	release()
	require.NoError(t, <-appended)
	d := <-dropped
	require.NoError(t, d.err)

	// Every record is accounted for: the one in flight, the ones dropped, the ones still readable.
	rest := readAll(t, l)
	assert.Equal(t, int64(2), d.c.Records+int64(len(rest)), "records 1 and 2: dropped or readable")
	assert.Zero(t, l.Unread().Records, "nothing counted as unread that no reader will find")
	require.NoError(t, l.Ack([]Pos{first.Pos}))
}

// TestFailedFsyncFailsEveryWriteItCovered: with FsyncAlways, every append whose record was
// written before a failed fsync completed gets the error, also the ones that waited for another
// append's fsync (group commit). Linux would report the next fsync of the file as a success.
// Appends after the failure succeed once the disk does.
func TestFailedFsyncFailsEveryWriteItCovered(t *testing.T) {
	fs := newHookFS()
	l, _ := open(t, t.TempDir(), func(o *Options) { o.FS = fs; o.Fsync = FsyncAlways })
	defer func() { require.NoError(t, l.Close()) }()
	appendN(t, l, 0, 1)

	fs.blockSyncs.Store(true)
	fs.failSyncs.Store(1) // then the disk "recovers": Linux reports the next fsync as a success
	firstDone := appendAsync(l, 1)
	<-fs.syncing // the first append runs the fsync
	fs.blockSyncs.Store(false)
	secondDone := appendAsync(l, 2)
	require.Eventually(t, func() bool { // the second append wrote and waits for the fsync
		l.mu.Lock()
		defer l.mu.Unlock()
		return l.commit.writeSeq == 3
	}, 5*time.Second, time.Millisecond)
	close(fs.syncGo)
	require.ErrorIs(t, <-firstDone, syscall.EIO)
	require.ErrorIs(t, <-secondDone, syscall.EIO)

	_, _, err := l.Append(payload(3), 3, time.Now(), NoClaim)
	require.NoError(t, err, "a write after the failure, synced by a good fsync")
}

// TestFailedFsyncRunsMergeAndAreBounded: consecutive failures are one range, failures separated
// by successes are kept apart, and a write an fsync covered before an earlier failure was
// forgotten still fails rather than being reported durable.
func TestFailedFsyncRunsMergeAndAreBounded(t *testing.T) {
	fs := newHookFS()
	l, _ := open(t, t.TempDir(), func(o *Options) { o.FS = fs; o.Fsync = FsyncAlways })
	defer func() { require.NoError(t, l.Close()) }()
	fs.failSyncs.Store(-1)
	for i := range 3 {
		_, _, err := l.Append(payload(i), 1, time.Now(), NoClaim)
		require.ErrorIs(t, err, syscall.EIO)
	}
	l.mu.Lock()
	assert.Equal(t, []uint64{0, 3}, []uint64{l.commit.failed[0].from, l.commit.failed[0].to})
	assert.Len(t, l.commit.failed, 1)
	l.mu.Unlock()
	for i := range maxFailedSyncs + 5 {
		fs.failSyncs.Store(0)
		_, _, err := l.Append(payload(i), 1, time.Now(), NoClaim)
		require.NoError(t, err)
		fs.failSyncs.Store(-1)
		_, _, err = l.Append(payload(i), 1, time.Now(), NoClaim)
		require.ErrorIs(t, err, syscall.EIO)
	}
	l.mu.Lock()
	assert.Len(t, l.commit.failed, maxFailedSyncs)
	err := l.commit.failedFor(2)
	l.mu.Unlock()
	require.Error(t, err, "a write of a forgotten failure is not reported durable")
	require.Error(t, l.waitSynced(2))
}

// TestSmallCapacityReclaimsTheActiveSegment: when the active segment holds the log's space and
// everything in it was delivered, the next append frees it instead of finding the log full for
// good (only sealed segments are deleted). The default segment size leaves room for that.
func TestSmallCapacityReclaimsTheActiveSegment(t *testing.T) {
	l, _ := open(t, t.TempDir(), func(o *Options) { o.CapacityBytes = 1000; o.SegmentBytes = 1000 })
	defer func() { require.NoError(t, l.Close()) }()
	var err error
	n := 0
	for ; err == nil; n++ {
		_, _, err = l.Append(payload(n), 1, time.Now(), NoClaim)
	}
	require.ErrorIs(t, err, ErrFull)
	var ps []Pos
	for _, r := range readAll(t, l) {
		ps = append(ps, r.Pos)
	}
	require.Len(t, ps, n-1)
	require.NoError(t, l.Ack(ps))
	for i := range n - 1 {
		_, _, appendErr := l.Append(payload(i), 1, time.Now(), NoClaim)
		require.NoError(t, appendErr, "append %d after everything was delivered", i)
	}

	// Unread records keep their space.
	_, _, err = l.Append(payload(0), 1, time.Now(), NoClaim)
	require.ErrorIs(t, err, ErrFull)

	for _, c := range []struct{ capacity, segment int64 }{
		{1 << 20, 256 << 10},  // a quarter of a small capacity
		{64 << 20, 4 << 20},   // capacity/16
		{2 << 30, 64 << 20},   // at most 64 MiB
		{256 << 20, 16 << 20}, // capacity/16 above 1 MiB
	} {
		l, _ := open(t, t.TempDir(), func(o *Options) { o.CapacityBytes = c.capacity; o.SegmentBytes = 0 })
		assert.Equal(t, c.segment, l.opts.SegmentBytes, "capacity %d", c.capacity)
		require.NoError(t, l.Close())
	}
}

// TestFailedFsyncFailsTheAppendInFlight: an append between its bookkeeping and the end of its
// write while an fsync fails has its bytes in the file that fsync covered: it fails too, though
// its sequence number comes after the fsync completed.
func TestFailedFsyncFailsTheAppendInFlight(t *testing.T) {
	fs := newHookFS()
	l, _ := open(t, t.TempDir(), func(o *Options) { o.FS = fs; o.Fsync = FsyncAlways })
	defer func() { require.NoError(t, l.Close()) }()
	appendN(t, l, 0, 1)

	fs.blockSyncs.Store(true)
	fs.failSyncs.Store(1)
	first := appendAsync(l, 1)
	<-fs.syncing // the first append's fsync is running
	fs.blockSyncs.Store(false)
	fs.blockWrites.Store(true)
	second := appendAsync(l, 2)
	<-fs.writing // the second append did its bookkeeping and is writing
	fs.blockWrites.Store(false)
	close(fs.syncGo) // the fsync fails
	require.ErrorIs(t, <-first, syscall.EIO)
	close(fs.release)
	require.ErrorIs(t, <-second, syscall.EIO, "the append in flight during the failed fsync")

	_, _, err := l.Append(payload(3), 3, time.Now(), NoClaim)
	require.NoError(t, err)
}
