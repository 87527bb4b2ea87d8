package tracelog

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

// fsyncGate stands in for (*os.File).Sync: it counts calls, can hold the first one until
// released, and can fail them.
type fsyncGate struct {
	calls   atomic.Int32
	hold    bool
	entered chan struct{} // closed when the held call starts
	release chan struct{} // closing it lets the held call go on
	err     error         // returned instead of fsyncing, when set
}

func newFsyncGate(hold bool) *fsyncGate {
	return &fsyncGate{hold: hold, entered: make(chan struct{}), release: make(chan struct{})}
}

func (g *fsyncGate) fsync(f *os.File) error {
	if g.calls.Add(1) == 1 && g.hold {
		close(g.entered)
		<-g.release
	}
	if g.err != nil {
		return g.err
	}
	return f.Sync()
}

// openGated opens a log whose fsyncs go through gate, and closes it when the test ends.
func openGated(t *testing.T, opts Options, gate *fsyncGate) *Log {
	t.Helper()
	l, _, err := open(opts, nil, gate.fsync)
	require.NoError(t, err)
	t.Cleanup(func() { _ = l.Close() })
	return l
}

// syncInBackground calls Sync in a goroutine and returns a channel that yields its result.
func syncInBackground(l *Log) <-chan error {
	result := make(chan error, 1)
	go func() { result <- l.Sync(context.Background()) }()
	return result
}

func mustAppend(t *testing.T, l *Log, payload string) SegmentID {
	t.Helper()
	seg, err := l.Append(1, []byte(payload))
	require.NoError(t, err)
	return seg
}

func TestConcurrentAppendSync(t *testing.T) {
	const writers, perWriter = 8, 100
	tests := []struct {
		name         string
		segmentBytes int64
		// Rotation deletes unreferenced segments, so with rotation each writer makes its Append
		// and Ref atomic, as the package documents; Sync stays outside that lock.
		lockAppendAndRef bool
	}{
		{name: "no rotation, appends contend", segmentBytes: 0},
		{name: "rotation under load", segmentBytes: 512, lockAppendAndRef: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			opts := Options{Dir: t.TempDir(), SegmentBytes: tt.segmentBytes, Fsync: FsyncAlways}
			l, _, _ := openCollecting(t, opts)
			var appendAndRef sync.Mutex
			var wg sync.WaitGroup
			for w := range writers {
				wg.Go(func() {
					for i := range perWriter {
						if tt.lockAppendAndRef {
							appendAndRef.Lock()
						}
						seg, err := l.Append(1, fmt.Appendf(nil, "w%d-%03d", w, i))
						l.Ref(seg)
						if tt.lockAppendAndRef {
							appendAndRef.Unlock()
						}
						assert.NoError(t, err)
						assert.NoError(t, l.Sync(t.Context()))
						assert.Positive(t, l.Size())
						assert.Positive(t, l.Segments())
					}
				})
			}
			wg.Wait()
			require.NoError(t, l.Close())

			_, report, got := openCollecting(t, opts)
			assert.Equal(t, writers*perWriter, report.Records)
			assertEachWriterInOrder(t, got, writers, perWriter)
		})
	}
}

// assertEachWriterInOrder checks that replay found every writer's records once, in its order.
func assertEachWriterInOrder(t *testing.T, got []replayed, writers, perWriter int) {
	t.Helper()
	next := make([]int, writers)
	for _, r := range got {
		var w, i int
		_, err := fmt.Sscanf(r.payload, "w%d-%d", &w, &i)
		require.NoError(t, err, r.payload)
		require.Equal(t, next[w], i, "writer %d", w)
		next[w]++
	}
	for w := range writers {
		assert.Equal(t, perWriter, next[w], "writer %d", w)
	}
}

func TestGroupCommit(t *testing.T) {
	gate := newFsyncGate(true)
	l := openGated(t, Options{Dir: t.TempDir(), Fsync: FsyncAlways}, gate)
	mustAppend(t, l, "first")
	leader := syncInBackground(l)
	<-gate.entered // the first round covers only the first record

	for i := range 4 {
		mustAppend(t, l, fmt.Sprint("later ", i))
	}
	var followers []<-chan error
	for range 4 {
		followers = append(followers, syncInBackground(l))
	}
	close(gate.release)
	require.NoError(t, <-leader)
	for _, f := range followers {
		require.NoError(t, <-f)
	}
	// One round for the first record, one shared by the four followers.
	assert.Equal(t, int32(2), gate.calls.Load())
}

func TestSyncWaitEndsWithContext(t *testing.T) {
	gate := newFsyncGate(true)
	l := openGated(t, Options{Dir: t.TempDir(), Fsync: FsyncAlways}, gate)
	mustAppend(t, l, "a")
	leader := syncInBackground(l)
	<-gate.entered

	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	require.ErrorIs(t, l.Sync(ctx), context.Canceled)
	close(gate.release)
	require.NoError(t, <-leader)
}

func TestSyncRacingRotation(t *testing.T) {
	gate := newFsyncGate(true)
	l := openGated(t, Options{Dir: t.TempDir(), SegmentBytes: 1, Fsync: FsyncAlways}, gate)
	l.Ref(mustAppend(t, l, "a"))
	leader := syncInBackground(l)
	<-gate.entered // holds the first segment's file

	// Rotation fsyncs and closes that file while the round still holds it.
	require.Equal(t, SegmentID(2), mustAppend(t, l, "b"))
	close(gate.release)
	require.NoError(t, <-leader, "the rotation's fsync covered the round's records")
	require.NoError(t, l.Sync(t.Context()))
	assert.Equal(t, int32(3), gate.calls.Load())
}

func TestFsyncFailureIsSticky(t *testing.T) {
	errDisk := errors.New("disk on fire")
	tests := []struct {
		name string
		mode FsyncMode
	}{
		{name: "always", mode: FsyncAlways},
		{name: "interval", mode: FsyncInterval},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			gate := newFsyncGate(false)
			gate.err = errDisk
			opts := Options{Dir: t.TempDir(), Fsync: tt.mode, FsyncInterval: time.Millisecond}
			l := openGated(t, opts, gate)
			mustAppend(t, l, "a")
			require.Eventually(t, func() bool { return errors.Is(l.Sync(t.Context()), errDisk) },
				5*time.Second, time.Millisecond)
			mustAppend(t, l, "b")
			require.ErrorIs(t, l.Sync(t.Context()), errDisk, "still failing")
			require.ErrorIs(t, l.Close(), errDisk)
		})
	}
}

func TestFsyncNeverSyncs(t *testing.T) {
	gate := newFsyncGate(false)
	l := openGated(t, Options{Dir: t.TempDir(), SegmentBytes: 1, Fsync: FsyncNever}, gate)
	for _, p := range numbered(3) {
		l.Ref(mustAppend(t, l, p))
	}
	require.NoError(t, l.Sync(t.Context()))
	require.NoError(t, l.Close())
	assert.Zero(t, gate.calls.Load(), "neither Sync, rotation nor Close fsyncs")
}

func TestFsyncInterval(t *testing.T) {
	gate := newFsyncGate(true)
	l := openGated(t, Options{Dir: t.TempDir(), Fsync: FsyncInterval, FsyncInterval: time.Millisecond}, gate)
	time.Sleep(20 * time.Millisecond)
	assert.Zero(t, gate.calls.Load(), "nothing written, nothing to fsync")

	mustAppend(t, l, "a")
	<-gate.entered // the background fsync started, and is held
	require.NoError(t, l.Sync(t.Context()), "Sync does not wait for the background fsync")
	close(gate.release)
	require.Eventually(t, func() bool {
		l.sync.mu.Lock()
		defer l.sync.mu.Unlock()
		return l.sync.synced == 1
	}, 5*time.Second, time.Millisecond)

	require.NoError(t, l.Close())
	goleak.VerifyNone(t)
}
