package bufferprocessor

import (
	"context"
	"errors"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer/consumererror"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/processor/processortest"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/tracegate/tracegate/processor/bufferprocessor/internal/diskqueue"
)

func TestRetryableErrorsAreRetriedUntilAccepted(t *testing.T) {
	rec := newRecorder()
	rec.failFn = func(call int) error {
		if call <= 3 {
			return errDown
		}
		return nil
	}
	h := start(t, memCfg(), rec, nil)
	require.NoError(t, h.p.ConsumeTraces(context.Background(), makeTraces(1, 2, 3)))
	rec.waitDistinct(t, 3)
	h.shutdown(t)
	assert.Zero(t, rec.checkAll(t, []int{1, 2, 3}))
	assert.Equal(t, int64(3), h.sum(t, "processor_buffer_retries", ""))
	assert.Equal(t, int64(3), h.sum(t, "processor_buffer_enqueued_spans", ""))
	assert.Equal(t, int64(3), h.sum(t, "processor_buffer_delivered_spans", ""))
	m, err := h.tel.GetMetric("otelcol_processor_buffer_time")
	require.NoError(t, err)
	assert.NotEmpty(t, m.Data)
}

func TestDeliveryGivesUp(t *testing.T) {
	tests := []struct {
		name   string
		err    error
		mut    func(*Config)
		reason string
		calls  int64 // attempts
	}{
		{name: "permanent error", err: consumererror.NewPermanent(errors.New("mapping conflict")), reason: reasonPermanent, calls: 1},
		{
			// The retry after max_elapsed is the last: the first attempt, then one retry.
			name: "max_elapsed", err: errDown, reason: reasonExhausted, calls: 2,
			mut: func(c *Config) { c.Retry.MaxElapsed = 20 * time.Millisecond },
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := newRecorder()
			rec.failFn = func(int) error { return tt.err }
			cfg := memCfg()
			cfg.Threads = 1
			if tt.mut != nil {
				tt.mut(cfg)
			}
			clk := newFakeClock()
			h := start(t, cfg, rec, nil, withClock(clk))
			require.NoError(t, h.p.ConsumeTraces(context.Background(), makeTraces(1, 2)))
			if cfg.Retry.MaxElapsed > 0 {
				clk.waitTimers(t, 1) // the first attempt failed; the retry waits its backoff
				clk.Advance(cfg.Retry.MaxElapsed)
			}
			// Without storage, Shutdown lets the worker finish the delivery: give up and count it.
			h.shutdown(t)
			assert.Equal(t, int64(2), h.sum(t, "processor_buffer_dropped_spans", tt.reason))
			assert.Equal(t, tt.calls, rec.n.Load())
			assert.Zero(t, rec.distinct())
			_, err := h.tel.GetMetric("otelcol_processor_buffer_time")
			assert.Error(t, err, "processor_buffer_time is the time to acceptance: none was accepted")
		})
	}
}

// TestAtLeastOnceConcurrent: many producers, a flaky next consumer, every mode. Every acknowledged
// span must arrive; without a restart, none twice.
func TestAtLeastOnceConcurrent(t *testing.T) {
	modes := []struct {
		name string
		cfg  func(dir string) *Config
	}{
		{"memory", func(string) *Config { return memCfg() }},
		{"overflow", func(dir string) *Config {
			c := diskCfg(dir, ModeOverflow, FsyncInterval)
			c.QueueSize = 4 // most batches overflow to disk
			return c
		}},
		{"write_ahead interval", func(dir string) *Config { return diskCfg(dir, ModeWriteAhead, FsyncInterval) }},
		{"write_ahead always merged", func(dir string) *Config {
			c := diskCfg(dir, ModeWriteAhead, FsyncAlways)
			c.QueueSize, c.MaxBatchItems = 8, 25
			return c
		}},
	}
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			rec := newRecorder()
			var mu sync.Mutex
			rng := rand.New(rand.NewPCG(1, 2))
			rec.failFn = func(int) error {
				mu.Lock()
				defer mu.Unlock()
				if rng.IntN(10) < 3 {
					return errDown
				}
				return nil
			}
			cfg := m.cfg(t.TempDir())
			cfg.Threads = 4
			h := start(t, cfg, rec, nil)
			const producers, batches, per = 6, 60, 5
			var wg sync.WaitGroup
			for p := range producers {
				wg.Go(func() {
					for b := range batches {
						ids := rangeIDs((p*batches+b)*per, per)
						for {
							delivered := rec.events.next()
							err := h.p.ConsumeTraces(context.Background(), makeTraces(ids...))
							if err == nil {
								break
							}
							assert.False(t, consumererror.IsPermanent(err), "%v", err)
							select {
							case <-delivered: // the client sends again once a delivery may have made room
							case <-time.After(livenessBound):
								assert.Fail(t, "refused, and no delivery made room")
								return
							}
						}
					}
				})
			}
			wg.Wait()
			total := producers * batches * per
			rec.waitDistinct(t, total)
			h.shutdown(t)
			assert.Zero(t, rec.checkAll(t, rangeIDs(0, total)), "duplicates without a restart")
			assert.Equal(t, int64(total), h.sum(t, "processor_buffer_delivered_spans", ""))
			if cfg.MaxBatchItems > 0 {
				rec.mu.Lock()
				for _, n := range rec.calls {
					assert.LessOrEqual(t, n, cfg.MaxBatchItems)
				}
				assert.Less(t, len(rec.calls), producers*batches, "batches were merged")
				rec.mu.Unlock()
			}
		})
	}
}

// TestReplayAfterRestart: the next consumer is down, the processor shuts down, a new one opens
// the same directory and delivers everything that was acknowledged.
func TestReplayAfterRestart(t *testing.T) {
	for _, mode := range []string{ModeOverflow, ModeWriteAhead} {
		t.Run(mode, func(t *testing.T) {
			dir := t.TempDir()
			down := newRecorder()
			down.failFn = func(int) error { return errDown }
			cfg := diskCfg(dir, mode, FsyncInterval)
			cfg.QueueSize = 5
			h := start(t, cfg, down, nil)
			const n = 40
			for i := range n {
				require.NoError(t, h.p.ConsumeTraces(context.Background(), makeTraces(i)))
			}
			h.shutdown(t)
			assert.Zero(t, h.sum(t, "processor_buffer_dropped_spans", ""), "shutdown saved everything")

			up := newRecorder()
			h2 := start(t, diskCfg(dir, mode, FsyncInterval), up, nil)
			up.waitDistinct(t, n)
			h2.shutdown(t)
			up.checkAll(t, rangeIDs(0, n))
			assert.Positive(t, h2.sum(t, "processor_buffer_replayed_batches", ""))
		})
	}
}

// TestReplayUsesAllThreads: records found on disk at Start are delivered by every worker at once
// (Datakit drains its disk with one goroutine): with a next consumer that holds each delivery,
// `threads` deliveries are in flight together, and never more at any moment of the replay.
func TestReplayUsesAllThreads(t *testing.T) {
	const threads, records = 4, 12
	dir := t.TempDir()
	l, _, err := diskqueue.Open(diskqueue.Options{Dir: dir, CapacityBytes: 64 << 20, Fsync: diskqueue.FsyncNever})
	require.NoError(t, err)
	var m ptrace.ProtoMarshaler
	for i := range records {
		payload, err := m.MarshalTraces(makeTraces(i))
		require.NoError(t, err)
		_, _, err = l.Append(payload, 1, time.Now(), diskqueue.NoClaim)
		require.NoError(t, err)
	}
	require.NoError(t, l.Close())

	rec := newRecorder()
	rec.gate = make(chan struct{})
	cfg := diskCfg(dir, ModeWriteAhead, FsyncInterval)
	cfg.Threads = threads
	h := start(t, cfg, rec, nil)
	rec.events.waitFor(t, "every worker delivering a replayed record", func() bool { return rec.inCall.Load() == threads })
	close(rec.gate)
	rec.waitDistinct(t, records)
	h.shutdown(t)
	rec.checkAll(t, rangeIDs(0, records))
	assert.EqualValues(t, threads, rec.maxInCall.Load(), "deliveries in flight at once")
}

func TestFullRefusesWithRetryableStatus(t *testing.T) {
	tests := []struct {
		name string
		cfg  func(dir string) *Config
		fs   func() *noSpaceFS
	}{
		{"memory", func(string) *Config { return memCfg() }, nil},
		{"disk capacity", func(dir string) *Config {
			c := diskCfg(dir, ModeOverflow, FsyncNever)
			c.Storage.Get().CapacityMiB = 1
			return c
		}, nil},
		{"ENOSPC", func(dir string) *Config { return diskCfg(dir, ModeWriteAhead, FsyncNever) }, func() *noSpaceFS {
			fs := &noSpaceFS{}
			fs.budget.Store(256 << 10)
			return fs
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := newRecorder()
			rec.gate = make(chan struct{}) // Elasticsearch hangs
			cfg := tt.cfg(t.TempDir())
			cfg.Threads, cfg.QueueSize = 1, 3
			var h *harness
			if tt.fs != nil {
				h = start(t, cfg, rec, tt.fs())
			} else {
				h = start(t, cfg, rec, nil)
			}
			const per = 2000 // ~20 KB per batch
			var err error
			accepted := 0
			for ; accepted < 1000; accepted++ {
				if err = h.p.ConsumeTraces(context.Background(), makeTraces(rangeIDs(accepted*per, per)...)); err != nil {
					break
				}
			}
			require.Error(t, err)
			assert.Positive(t, accepted)
			require.ErrorIs(t, err, ErrFull)
			assert.False(t, consumererror.IsPermanent(err))
			assert.Equal(t, codes.ResourceExhausted, status.Code(err), "receivers answer RESOURCE_EXHAUSTED / HTTP 429")
			assertRetryInfo(t, err)
			assert.Equal(t, int64(per), h.sum(t, "processor_buffer_refused_spans", ""))
			close(rec.gate)
			rec.waitDistinct(t, accepted*per)
			h.shutdown(t)
			rec.checkAll(t, rangeIDs(0, accepted*per))
		})
	}
}

func TestDropOldest(t *testing.T) {
	tests := []struct {
		name string
		cfg  func(dir string) *Config
	}{
		{"memory", func(string) *Config { return memCfg() }},
		{"overflow", func(dir string) *Config {
			c := diskCfg(dir, ModeOverflow, FsyncNever)
			c.Storage.Get().CapacityMiB = 1
			return c
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := newRecorder()
			rec.gate = make(chan struct{})
			cfg := tt.cfg(t.TempDir())
			cfg.Threads, cfg.QueueSize, cfg.WhenFull = 1, 3, WhenFullDropOldest
			h := start(t, cfg, rec, nil)
			const n, per = 150, 2000
			for i := range n {
				require.NoError(t, h.p.ConsumeTraces(context.Background(), makeTraces(rangeIDs(i*per, per)...)))
			}
			dropped := h.sum(t, "processor_buffer_dropped_spans", reasonFull)
			assert.Positive(t, dropped)
			close(rec.gate)
			// The newest batch survives; the dropped ones never arrive.
			rec.waitDistinct(t, n*per-int(dropped))
			h.shutdown(t)
			rec.checkAll(t, rangeIDs((n-1)*per, per))
			assert.Equal(t, int64(n*per), int64(rec.distinct())+dropped)
		})
	}
}

// TestDropOldestPlacesASerializedBatchOnce: in overflow mode with drop_oldest, a batch that finds
// memory and the disk log full, while every record on disk is in a delivery being retried, takes
// the place of the oldest batch in memory: once, also when it is queued serialized because the
// circuit breaker is open, and ConsumeTraces returns.
func TestDropOldestPlacesASerializedBatchOnce(t *testing.T) {
	dir := t.TempDir()
	l, _, err := diskqueue.Open(diskqueue.Options{Dir: dir, CapacityBytes: 1 << 20, Fsync: diskqueue.FsyncNever})
	require.NoError(t, err)
	var m ptrace.ProtoMarshaler
	next := 0                           // the next span id
	for _, per := range []int{100, 1} { // to the brim: no record of two spans fits after
		for {
			payload, err := m.MarshalTraces(makeTraces(rangeIDs(next, per)...))
			require.NoError(t, err)
			if _, _, err = l.Append(payload, int64(per), time.Now(), diskqueue.NoClaim); errors.Is(err, diskqueue.ErrFull) {
				break
			}
			require.NoError(t, err)
			next += per
		}
	}
	require.NoError(t, l.Close())

	cfg := diskCfg(dir, ModeOverflow, FsyncNever)
	cfg.Storage.Get().CapacityMiB = 1
	cfg.Threads, cfg.QueueSize, cfg.MaxBatchItems, cfg.WhenFull = 1, 2, 1_000_000, WhenFullDropOldest
	rec := newRecorder()
	var down atomic.Bool
	down.Store(true)
	rec.failFn = func(int) error {
		if down.Load() {
			return errDown
		}
		return nil
	}
	clk := newFakeClock()
	h := start(t, cfg, rec, nil, withClock(clk))
	// The worker takes every record into one delivery, which fails: the breaker opens.
	clk.waitTimers(t, 1)
	require.True(t, h.p.q.breakerOpen.Load())
	require.Equal(t, []int{next}, rec.attemptSizes())

	base := next
	require.NoError(t, h.p.ConsumeTraces(context.Background(), makeTraces(base, base+1)))   // dropped below
	require.NoError(t, h.p.ConsumeTraces(context.Background(), makeTraces(base+2, base+3))) // memory is full
	held := make(chan error, 1)
	go func() { held <- h.p.ConsumeTraces(context.Background(), makeTraces(base+4, base+5)) }()
	select {
	case err := <-held:
		require.NoError(t, err)
	case <-time.After(livenessBound):
		t.Fatal("ConsumeTraces did not return")
	}
	assert.Equal(t, int64(2), h.sum(t, "processor_buffer_dropped_spans", reasonFull), "the oldest batch")
	batches, _, _ := h.p.q.memStats()
	assert.Equal(t, int64(2), batches)
	_, serialized := queuedForms(h.p.q)
	assert.Equal(t, 2, serialized)

	down.Store(false)
	clk.Advance(time.Second) // the retry's probe succeeds
	want := append(rangeIDs(0, base), base+2, base+3, base+4, base+5)
	rec.waitDistinct(t, len(want))
	h.shutdown(t)
	assert.Zero(t, rec.checkAll(t, want), "delivered twice")
	assert.Equal(t, len(want), rec.distinct(), "the dropped batch never arrives")
}

func TestShutdownDeadlineWithoutStorage(t *testing.T) {
	rec := newRecorder()
	rec.gate = make(chan struct{}) // never opened: deliveries hang until cancelled
	cfg := memCfg()
	cfg.Threads = 2
	h := start(t, cfg, rec, nil)
	for i := range 5 {
		require.NoError(t, h.p.ConsumeTraces(context.Background(), makeTraces(i)))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	require.NoError(t, shutdownReturns(ctx, t, h))
	assert.Equal(t, int64(5), h.sum(t, "processor_buffer_dropped_spans", reasonShutdown))
	err := h.p.ConsumeTraces(context.Background(), makeTraces(9))
	require.ErrorIs(t, err, ErrShuttingDown)
	assert.Equal(t, codes.Unavailable, status.Code(err))
}

func TestShutdownDrainsWithoutStorage(t *testing.T) {
	rec := newRecorder()
	rec.failFn = func(call int) error {
		if call%2 == 1 {
			return errDown
		}
		return nil
	}
	h := start(t, memCfg(), rec, nil)
	for i := range 50 {
		require.NoError(t, h.p.ConsumeTraces(context.Background(), makeTraces(i)))
	}
	h.shutdown(t) // no wait before: shutdown itself must drain
	rec.checkAll(t, rangeIDs(0, 50))
}

func TestTwoInstancesCannotShareADirectory(t *testing.T) {
	dir := t.TempDir()
	h := start(t, diskCfg(dir, ModeOverflow, FsyncNever), newRecorder(), nil)
	p2, err := NewFactory().CreateTraces(context.Background(), processortest.NewNopSettings(NewFactory().Type()), diskCfg(dir, ModeOverflow, FsyncNever), newRecorder())
	require.NoError(t, err)
	err = p2.Start(context.Background(), componenttest.NewNopHost())
	require.Error(t, err)
	assert.Contains(t, err.Error(), "directory is in use by another buffer")
	require.NoError(t, p2.Shutdown(context.Background()))
	h.shutdown(t)
}

// TestVerifyShutdown: without storage, Shutdown delivers everything it holds. (With storage it
// persists instead of draining, which TestReplayAfterRestart covers; VerifyShutdown would fail it
// by design.)
func TestVerifyShutdown(t *testing.T) {
	processortest.VerifyShutdown(t, NewFactory(), memCfg())
}

func TestNotStarted(t *testing.T) {
	p, err := NewFactory().CreateTraces(context.Background(), processortest.NewNopSettings(NewFactory().Type()), memCfg(), newRecorder())
	require.NoError(t, err)
	require.ErrorIs(t, p.ConsumeTraces(context.Background(), makeTraces(1)), ErrShuttingDown)
	assert.True(t, p.Capabilities().MutatesData)
	require.NoError(t, p.Shutdown(context.Background()))
}

func TestEmptyBatchIsAccepted(t *testing.T) {
	rec := newRecorder()
	h := start(t, memCfg(), rec, nil)
	require.NoError(t, h.p.ConsumeTraces(context.Background(), makeTraces()))
	h.shutdown(t)
	assert.Zero(t, rec.n.Load())
}

// assertRetryInfo checks that a RESOURCE_EXHAUSTED refusal tells gRPC clients when to retry:
// without RetryInfo, OTLP/gRPC clients (the otlp_grpc exporter of an agent collector among them)
// treat RESOURCE_EXHAUSTED as permanent and drop the data.
func assertRetryInfo(t *testing.T, err error) {
	t.Helper()
	st, ok := status.FromError(err)
	require.True(t, ok)
	var delay time.Duration
	for _, d := range st.Details() {
		if ri, ok := d.(*errdetails.RetryInfo); ok {
			delay = ri.GetRetryDelay().AsDuration()
		}
	}
	assert.Positive(t, delay, "RESOURCE_EXHAUSTED without a RetryInfo delay")
}

// TestShutdownSavesMemoryToAFullDisk: in overflow mode with Elasticsearch down long enough that
// the disk log is full, the memory queue is still written to disk at shutdown (beyond the
// capacity) and delivered after the restart, instead of lost (the README's promise for a clean
// shutdown).
func TestShutdownSavesMemoryToAFullDisk(t *testing.T) {
	dir := t.TempDir()
	down := newRecorder()
	down.failFn = func(int) error { return errDown }
	cfg := diskCfg(dir, ModeOverflow, FsyncNever)
	cfg.Storage.Get().CapacityMiB = 1
	cfg.Threads, cfg.QueueSize = 1, 3
	h := start(t, cfg, down, nil)
	const per = 2000 // ~20 KB per batch: the 1 MiB log is full after a few dozen
	accepted := 0
	var err error
	for ; accepted < 1000; accepted++ {
		if err = h.p.ConsumeTraces(context.Background(), makeTraces(rangeIDs(accepted*per, per)...)); err != nil {
			break
		}
	}
	require.ErrorIs(t, err, ErrFull, "memory and disk full")
	batches, _, _ := h.p.q.memStats()
	require.Positive(t, batches, "batches in memory when the disk is full")
	h.shutdown(t)
	assert.Zero(t, h.sum(t, "processor_buffer_dropped_spans", ""), "shutdown lost what memory held")

	up := newRecorder()
	h2 := start(t, diskCfg(dir, ModeOverflow, FsyncNever), up, nil)
	up.waitDistinct(t, accepted*per)
	h2.shutdown(t)
	up.checkAll(t, rangeIDs(0, accepted*per))
}

// TestBatchLargerThanTheDisk: a batch larger than storage.capacity_mib can never be written. In
// write_ahead every batch is, so it is refused for good (permanent); in overflow it only went to
// disk because memory was full at that moment, so it is refused with a retryable status and
// memory takes it once there is room.
func TestBatchLargerThanTheDisk(t *testing.T) {
	for _, tt := range []struct {
		mode      string
		permanent bool
	}{{ModeOverflow, false}, {ModeWriteAhead, true}} {
		t.Run(tt.mode, func(t *testing.T) {
			rec := newRecorder()
			rec.gate = make(chan struct{}) // Elasticsearch hangs
			cfg := diskCfg(t.TempDir(), tt.mode, FsyncNever)
			cfg.Storage.Get().CapacityMiB = 1
			cfg.Threads, cfg.QueueSize = 1, 1
			h := start(t, cfg, rec, nil)
			big := makeTraces(rangeIDs(0, 120_000)...) // > 1 MiB serialized
			if tt.mode == ModeOverflow {
				// The worker takes the first batch and hangs; the second fills the memory queue.
				require.NoError(t, h.p.ConsumeTraces(context.Background(), makeTraces(1_000_000)))
				rec.waitFirstCall(t)
				require.NoError(t, h.p.ConsumeTraces(context.Background(), makeTraces(1_000_001)))
			}
			err := h.p.ConsumeTraces(context.Background(), big)
			require.Error(t, err)
			assert.Equal(t, tt.permanent, consumererror.IsPermanent(err), "%v", err)
			if tt.permanent {
				close(rec.gate)
				h.shutdown(t)
				return
			}
			require.ErrorIs(t, err, ErrFull)
			close(rec.gate)
			// The client's retry: memory has room once the two small batches are delivered.
			rec.events.waitFor(t, "the big batch accepted", func() bool { return h.p.ConsumeTraces(context.Background(), big) == nil })
			rec.waitDistinct(t, 120_002)
			h.shutdown(t)
		})
	}
}

// TestWriteAheadClaimsRespectTheMemoryBound: in write_ahead a batch is kept in memory (claimed)
// when memory has room, decided before its write and fsync; concurrent appends reserve their
// place, so the memory queue never holds more than `buffer` batches however many overlap: here
// every append decides while the first one's fsync is held.
func TestWriteAheadClaimsRespectTheMemoryBound(t *testing.T) {
	rec := newRecorder()
	rec.gate = make(chan struct{}) // Elasticsearch hangs: nothing leaves memory
	cfg := diskCfg(t.TempDir(), ModeWriteAhead, FsyncAlways)
	cfg.Threads, cfg.QueueSize = 1, 2
	fs := newGatedSyncFS()
	h := start(t, cfg, rec, fs)
	const n = 20
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			assert.NoError(t, h.p.ConsumeTraces(context.Background(), makeTraces(i)))
		})
	}
	// Every place in memory is reserved by an append that waits for the held fsync (an append
	// reserves its place before it writes).
	fs.events.waitFor(t, "an fsync held", func() bool { return fs.syncing.Load() > 0 })
	claimed := func() bool {
		h.p.q.mu.Lock()
		defer h.p.q.mu.Unlock()
		return h.p.q.claimBatches == cfg.QueueSize
	}
	fs.events.waitFor(t, "memory reserved by the appends in flight", claimed)
	close(fs.gate)
	wg.Wait()
	batches, _, _ := h.p.q.memStats()
	assert.LessOrEqual(t, batches, int64(cfg.QueueSize), "memory queue beyond queue_size")
	close(rec.gate)
	rec.waitDistinct(t, n)
	h.shutdown(t)
	rec.checkAll(t, rangeIDs(0, n))
}

// TestFullWait: with full_wait, a batch that finds the memory queue full waits for a delivery to
// make room instead of being refused at once; it is refused (retryably) when the wait ends, when
// the caller gives up, or at shutdown.
func TestFullWait(t *testing.T) {
	tests := []struct {
		name    string
		wait    time.Duration
		act     func(h *harness, rec *recorder, cancel context.CancelFunc) // while the batch waits
		wantErr error                                                      // nil: accepted
	}{
		{"room comes", time.Minute, func(_ *harness, rec *recorder, _ context.CancelFunc) { close(rec.gate) }, nil},
		{"wait ends", 300 * time.Millisecond, func(h *harness, _ *recorder, _ context.CancelFunc) {
			h.p.timing.clock.(*fakeClock).Advance(300 * time.Millisecond)
		}, ErrFull},
		{"caller gives up", time.Minute, func(_ *harness, _ *recorder, cancel context.CancelFunc) { cancel() }, ErrFull},
		{"shutdown", time.Minute, func(h *harness, _ *recorder, _ context.CancelFunc) { h.p.q.close() }, ErrShuttingDown},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := newRecorder()
			rec.gate = make(chan struct{}) // Elasticsearch hangs until the case lets it go
			cfg := memCfg()
			cfg.Threads, cfg.QueueSize, cfg.FullWait, cfg.ShutdownTimeout = 1, 1, tt.wait, 100*time.Millisecond
			clk := newFakeClock()
			h := start(t, cfg, rec, nil, withClock(clk))
			require.NoError(t, h.p.ConsumeTraces(context.Background(), makeTraces(1))) // taken by the worker
			rec.waitFirstCall(t)
			require.NoError(t, h.p.ConsumeTraces(context.Background(), makeTraces(2))) // fills memory
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			done := make(chan error, 1)
			go func() { done <- h.p.ConsumeTraces(ctx, makeTraces(3)) }()
			clk.waitTimers(t, 1) // the batch waits for room, up to full_wait
			assert.Equal(t, []time.Duration{tt.wait}, clk.timers())
			select {
			case err := <-done:
				t.Fatalf("returned (%v) instead of waiting for room", err)
			default:
			}
			tt.act(h, rec, cancel)
			var err error
			select {
			case err = <-done:
			case <-time.After(livenessBound):
				t.Fatal("still waiting")
			}
			if tt.wantErr == nil {
				require.NoError(t, err)
				rec.waitDistinct(t, 3)
			} else {
				require.ErrorIs(t, err, tt.wantErr)
				assert.False(t, consumererror.IsPermanent(err))
			}
			select {
			case <-rec.gate:
			default:
				close(rec.gate)
			}
			require.NoError(t, shutdownReturns(context.Background(), t, h))
		})
	}
}
