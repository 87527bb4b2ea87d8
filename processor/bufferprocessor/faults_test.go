package bufferprocessor

import (
	"context"
	"os"
	"path/filepath"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/consumer/consumererror"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/tracegate/tracegate/processor/bufferprocessor/internal/diskqueue"
)

// readFailFS fails the next `failures` reads of segment files with EIO.
type readFailFS struct{ failures atomic.Int64 }

func (fs *readFailFS) OpenFile(name string, flag int, perm os.FileMode) (diskqueue.File, error) {
	f, err := diskqueue.OS{}.OpenFile(name, flag, perm)
	if err != nil {
		return nil, err
	}
	return &readFailFile{File: f, fs: fs, segment: filepath.Ext(name) == ".seg"}, nil
}

func (*readFailFS) Remove(name string) error { return os.Remove(name) }

type readFailFile struct {
	diskqueue.File
	fs      *readFailFS
	segment bool
}

func (f *readFailFile) ReadAt(b []byte, off int64) (int, error) {
	if f.segment && f.fs.failures.Add(-1) >= 0 {
		return 0, &os.PathError{Op: "read", Path: "segment", Err: syscall.EIO}
	}
	return f.File.ReadAt(b, off)
}

// TestReadErrorsDoNotStopWorkers: a failed disk read is retried after a pause by the same worker.
// Were the worker to exit, `threads` such errors would leave nobody to deliver, memory would fill
// and every later batch would be refused.
func TestReadErrorsDoNotStopWorkers(t *testing.T) {
	fs := &readFailFS{}
	rec := newRecorder()
	rec.gate = make(chan struct{})
	cfg := diskCfg(t.TempDir(), ModeOverflow, FsyncNever)
	cfg.Threads, cfg.QueueSize, cfg.MaxBatchItems, cfg.MaxBatchWait = 1, 2, 0, 0
	clk := newFakeClock().sharing(&rec.events)
	const pause = 3 * time.Second
	h := start(t, cfg, rec, fs, withClock(clk), func(tm *timing) { tm.readErrorWait = pause })
	const n = 10
	for i := range n { // one in delivery, two in memory, the rest on disk
		require.NoError(t, h.p.ConsumeTraces(context.Background(), makeTraces(i)))
	}
	fs.failures.Store(3) // more than `threads`
	close(rec.gate)
	// Each failed read parks the worker for the pause; the clock moves only past those.
	pauses := 0
	rec.events.waitFor(t, "every span delivered", func() bool {
		for _, d := range clk.timers() {
			assert.Equal(t, pause, d, "the worker waits readErrorWait after a failed read")
			clk.Advance(d)
			pauses++
		}
		return rec.distinct() == n
	})
	h.shutdown(t)
	rec.checkAll(t, rangeIDs(0, n))
	assert.LessOrEqual(t, fs.failures.Load(), int64(-1), "the reads failed before they succeeded")
	assert.Positive(t, pauses, "the worker paused after the failed reads")
}

// TestShutdownDeadlineSavesBatchesWhateverTheError: when shutdown_timeout cancels deliveries, the
// next consumer may answer with a permanent error (an exporter wrapping the cancellation). With
// storage the batch is still saved to disk and delivered after the restart, not dropped.
func TestShutdownDeadlineSavesBatchesWhateverTheError(t *testing.T) {
	dir := t.TempDir()
	cfg := diskCfg(dir, ModeOverflow, FsyncNever)
	cfg.Threads, cfg.ShutdownTimeout = 2, 200*time.Millisecond
	hang := consumerFunc(func(ctx context.Context, _ ptrace.Traces) error { // bench_pipeline_test.go
		<-ctx.Done()
		return consumererror.NewPermanent(ctx.Err())
	})
	h := start(t, cfg, hang, nil)
	for i := range 5 {
		require.NoError(t, h.p.ConsumeTraces(context.Background(), makeTraces(i)))
	}
	require.NoError(t, h.p.Shutdown(context.Background()))
	assert.Zero(t, h.sum(t, "processor_buffer_dropped_spans", ""), "nothing dropped: storage is configured")

	rec := newRecorder()
	h2 := start(t, cfg, rec, nil)
	rec.waitDistinct(t, 5)
	h2.shutdown(t)
	rec.checkAll(t, rangeIDs(0, 5))
}
