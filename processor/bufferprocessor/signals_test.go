package bufferprocessor

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer/consumererror"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/processor/processortest"

	"github.com/tracegate/tracegate/processor/bufferprocessor/internal/metadata"
)

// testSignal makes and reads one signal's batches for the tests every signal runs: make gives one
// item per id (a span, a log record, a gauge with one data point, named by the id), ids reads
// them back in order.
type testSignal[T any] struct {
	sig   signal[T]
	items func(*metadata.TelemetryBuilder) itemTelemetry
	make  func(ids ...int) T
	ids   func(T) []int
}

var (
	tracesTest = testSignal[ptrace.Traces]{sig: tracesSignal{}, items: spanTelemetry, make: makeTraces, ids: func(td ptrace.Traces) []int {
		var ids []int
		for _, r := range spanRefs(td) {
			ids = append(ids, atoi(r.name))
		}
		return ids
	}}
	logsTest = testSignal[plog.Logs]{sig: logsSignal{}, items: logRecordTelemetry, make: makeLogs, ids: func(ld plog.Logs) []int {
		var ids []int
		for _, rl := range ld.ResourceLogs().All() {
			for _, sl := range rl.ScopeLogs().All() {
				for _, lr := range sl.LogRecords().All() {
					ids = append(ids, atoi(lr.Body().Str()))
				}
			}
		}
		return ids
	}}
	metricsTest = testSignal[pmetric.Metrics]{sig: metricsSignal{}, items: metricPointTelemetry, make: makeMetrics, ids: func(md pmetric.Metrics) []int {
		var ids []int
		for _, rm := range md.ResourceMetrics().All() {
			for _, sm := range rm.ScopeMetrics().All() {
				for _, m := range sm.Metrics().All() {
					for range m.Gauge().DataPoints().Len() {
						ids = append(ids, atoi(m.Name()))
					}
				}
			}
		}
		return ids
	}}
)

func atoi(s string) int {
	n, err := strconv.Atoi(s)
	if err != nil {
		panic(err)
	}
	return n
}

func makeLogs(ids ...int) plog.Logs {
	ld := plog.NewLogs()
	rl := ld.ResourceLogs().AppendEmpty()
	rl.Resource().Attributes().PutStr("service.name", "test")
	sl := rl.ScopeLogs().AppendEmpty()
	for _, id := range ids {
		lr := sl.LogRecords().AppendEmpty()
		lr.Body().SetStr(strconv.Itoa(id))
		lr.Attributes().PutInt("i", int64(id))
	}
	return ld
}

func makeMetrics(ids ...int) pmetric.Metrics {
	md := pmetric.NewMetrics()
	rm := md.ResourceMetrics().AppendEmpty()
	rm.Resource().Attributes().PutStr("service.name", "test")
	sm := rm.ScopeMetrics().AppendEmpty()
	for _, id := range ids {
		m := sm.Metrics().AppendEmpty()
		m.SetName(strconv.Itoa(id))
		dp := m.SetEmptyGauge().DataPoints().AppendEmpty()
		dp.SetIntValue(int64(id))
		dp.Attributes().PutStr("series", "a")
	}
	return md
}

// signalSink is a next consumer that records every attempt serialized (to compare retries byte by
// byte) and the ids it accepted; fail decides each attempt's error (nil: accept).
type signalSink[T any] struct {
	ts   testSignal[T]
	fail func(attempt int) error

	mu       sync.Mutex
	attempts [][]byte
	accepted []int
}

func (s *signalSink[T]) consume(_ context.Context, data T) error {
	b, err := s.ts.sig.marshal(data)
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.attempts = append(s.attempts, b)
	if s.fail != nil {
		if err := s.fail(len(s.attempts)); err != nil {
			return err
		}
	}
	s.accepted = append(s.accepted, s.ts.ids(data)...)
	return nil
}

func (s *signalSink[T]) acceptedIDs() []int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.accepted)
}

// startSignal starts a buffer of ts's signal in front of next, with telemetry.
func startSignal[T any](t *testing.T, ts testSignal[T], cfg *Config, next func(context.Context, T) error) (*bufferProcessor[T], *harness) {
	t.Helper()
	require.NoError(t, cfg.Validate())
	tel := componenttest.NewTelemetry()
	t.Cleanup(func() { require.NoError(t, tel.Shutdown(context.Background())) })
	set := processortest.NewNopSettings(metadata.Type)
	set.TelemetrySettings = tel.NewTelemetrySettings()
	p, err := newBuffer(set, cfg, ts.sig, ts.items, next)
	require.NoError(t, err)
	require.NoError(t, p.Start(context.Background(), componenttest.NewNopHost()))
	return p, &harness{tel: tel}
}

func fastRetry(cfg *Config) *Config {
	cfg.Retry.InitialInterval, cfg.Retry.MaxInterval = time.Millisecond, 5*time.Millisecond
	return cfg
}

// TestEverySignal runs the buffer's guarantees for traces, logs and metrics alike.
func TestEverySignal(t *testing.T) {
	t.Run("traces", func(t *testing.T) { testSignalGuarantees(t, tracesTest) })
	t.Run("logs", func(t *testing.T) { testSignalGuarantees(t, logsTest) })
	t.Run("metrics", func(t *testing.T) { testSignalGuarantees(t, metricsTest) })
}

func testSignalGuarantees[T any](t *testing.T, ts testSignal[T]) {
	t.Run("delivers every item once", func(t *testing.T) { testDeliversOnce(t, ts) })
	t.Run("retries the same batch", func(t *testing.T) { testRetriesSameBatch(t, ts) })
	t.Run("replays after restart", func(t *testing.T) { testReplaysAfterRestart(t, ts) })
	t.Run("refuses when full", func(t *testing.T) { testRefusesWhenFull(t, ts) })
	t.Run("drops the oldest when told to", func(t *testing.T) { testDropsOldest(t, ts) })
}

// testDeliversOnce: in memory, overflowing to disk and write-ahead, with merging, every item
// arrives once and the signal's counters say so (delivered counts what the next consumer accepted).
func testDeliversOnce[T any](t *testing.T, ts testSignal[T]) {
	for name, cfg := range map[string]func(dir string) *Config{
		"memory":      func(string) *Config { return memCfg() },
		"overflow":    func(dir string) *Config { c := diskCfg(dir, ModeOverflow, FsyncNever); c.QueueSize = 2; return c },
		"write_ahead": func(dir string) *Config { return diskCfg(dir, ModeWriteAhead, FsyncInterval) },
	} {
		t.Run(name, func(t *testing.T) {
			c := cfg(t.TempDir())
			c.MaxBatchItems, c.Threads = 10, 2
			sink := &signalSink[T]{ts: ts}
			p, h := startSignal(t, ts, c, sink.consume)
			var want []int
			for i := range 50 {
				ids := []int{3 * i, 3*i + 1, 3*i + 2}
				want = append(want, ids...)
				require.NoError(t, p.hold(context.Background(), ts.make(ids...)))
			}
			// With storage, Shutdown keeps what is left on disk instead of delivering it.
			require.Eventually(t, func() bool { return len(sink.acceptedIDs()) >= len(want) }, 10*time.Second, time.Millisecond)
			require.NoError(t, p.Shutdown(context.Background()))
			assert.ElementsMatch(t, want, sink.acceptedIDs())
			f := ts.sig.field()
			assert.Equal(t, int64(150), h.sum(t, "processor_buffer_enqueued_"+f, ""))
			assert.Equal(t, int64(150), h.sum(t, "processor_buffer_delivered_"+f, ""))
			assert.Zero(t, h.sum(t, "processor_buffer_dropped_"+f, ""))
		})
	}
}

// testRetriesSameBatch: a delivery merged from several queued batches fails three times, the
// breaker opens (the waits are serialized, the retry a probe); every attempt sends the same bytes,
// so the exporter groups the same documents each time. Metrics get more items than a probe of
// the other signals would take: their probe is the whole batch.
func testRetriesSameBatch[T any](t *testing.T, ts testSignal[T]) {
	n := 15
	if ts.sig.probeWhole() {
		n = 2 * probeItems
	}
	c := fastRetry(memCfg())
	c.Threads, c.MaxBatchItems, c.MaxBatchWait = 1, n, time.Second
	retryable := errors.New("bulk failed")
	sink := &signalSink[T]{ts: ts, fail: func(attempt int) error {
		if attempt <= 3 {
			return retryable
		}
		return nil
	}}
	p, h := startSignal(t, ts, c, sink.consume)
	var want []int
	for i := range 5 { // merged into one delivery: n items reach max_batch_items at once
		var ids []int
		for j := range n / 5 {
			ids = append(ids, i*(n/5)+j)
		}
		want = append(want, ids...)
		require.NoError(t, p.hold(context.Background(), ts.make(ids...)))
	}
	require.Eventually(t, func() bool { return len(sink.acceptedIDs()) == len(want) }, 10*time.Second, time.Millisecond)
	require.NoError(t, p.Shutdown(context.Background()))
	sink.mu.Lock()
	defer sink.mu.Unlock()
	require.Len(t, sink.attempts, 4)
	for i, a := range sink.attempts[1:] {
		assert.Equal(t, sink.attempts[0], a, "attempt %d differs from the first", i+2)
	}
	assert.Equal(t, want, sink.accepted, "the merged batch, in order")
	assert.Equal(t, int64(3), h.sum(t, "processor_buffer_retries", ""))
}

// testReplaysAfterRestart: with write_ahead, what the next consumer never took is on disk at
// shutdown and delivered, once, after a restart on the same directory.
func testReplaysAfterRestart[T any](t *testing.T, ts testSignal[T]) {
	dir := t.TempDir()
	c := fastRetry(diskCfg(dir, ModeWriteAhead, FsyncAlways))
	c.ShutdownTimeout = 100 * time.Millisecond
	down := &signalSink[T]{ts: ts, fail: func(int) error { return errors.New("elasticsearch down") }}
	p, _ := startSignal(t, ts, c, down.consume)
	var want []int
	for i := range 20 {
		want = append(want, 2*i, 2*i+1)
		require.NoError(t, p.hold(context.Background(), ts.make(2*i, 2*i+1)))
	}
	require.NoError(t, p.Shutdown(context.Background()))
	assert.Empty(t, down.acceptedIDs())
	if sub := ts.sig.subdir(); sub != "" {
		assert.DirExists(t, filepath.Join(dir, sub), "the signal's log lives in its own directory")
	}

	up := &signalSink[T]{ts: ts}
	p, h := startSignal(t, ts, fastRetry(diskCfg(dir, ModeWriteAhead, FsyncAlways)), up.consume)
	require.Eventually(t, func() bool { return len(up.acceptedIDs()) >= len(want) }, 10*time.Second, time.Millisecond)
	require.NoError(t, p.Shutdown(context.Background()))
	assert.ElementsMatch(t, want, up.acceptedIDs())
	assert.Positive(t, h.sum(t, "processor_buffer_replayed_batches", ""))
}

// testRefusesWhenFull: memory only, the next consumer stuck: once queue_size batches wait, the
// next one is refused with a retryable ErrFull and counted per signal.
func testRefusesWhenFull[T any](t *testing.T, ts testSignal[T]) {
	c := memCfg()
	c.Threads, c.QueueSize, c.ShutdownTimeout = 1, 2, 100*time.Millisecond
	release := make(chan struct{})
	next := func(ctx context.Context, _ T) error {
		select {
		case <-release:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	p, h := startSignal(t, ts, c, next)
	var refused error
	for i := 0; i < 10 && refused == nil; i++ {
		refused = p.hold(context.Background(), ts.make(i))
	}
	require.ErrorIs(t, refused, ErrFull)
	assert.False(t, consumererror.IsPermanent(refused), "a full buffer is a retryable refusal")
	assert.Equal(t, int64(1), h.sum(t, "processor_buffer_refused_"+ts.sig.field(), ""))
	close(release)
	require.NoError(t, p.Shutdown(context.Background()))
}

// testDropsOldest: memory only with when_full drop_oldest: the oldest queued batch makes room and
// is counted as dropped (reason full) under the signal's name.
func testDropsOldest[T any](t *testing.T, ts testSignal[T]) {
	c := memCfg()
	c.Threads, c.QueueSize, c.WhenFull, c.ShutdownTimeout = 1, 2, WhenFullDropOldest, 100*time.Millisecond
	release := make(chan struct{})
	next := func(ctx context.Context, _ T) error {
		select {
		case <-release:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	p, h := startSignal(t, ts, c, next)
	for i := range 6 {
		require.NoError(t, p.hold(context.Background(), ts.make(i)))
	}
	assert.Positive(t, h.sum(t, "processor_buffer_dropped_"+ts.sig.field(), reasonFull))
	close(release)
	require.NoError(t, p.Shutdown(context.Background()))
}

// TestSignalsShareStorageCapacity: the traces and logs buffers of one storage.directory are full
// together: storage.capacity_mib bounds the directory, not each signal.
func TestSignalsShareStorageCapacity(t *testing.T) {
	dir := t.TempDir()
	cfg := func() *Config {
		c := diskCfg(dir, ModeWriteAhead, FsyncNever)
		c.Storage.Get().CapacityMiB, c.Threads = 1, 1
		return c
	}
	stuck := func(ctx context.Context) error { <-ctx.Done(); return ctx.Err() }
	traces, _ := startSignal(t, tracesTest, cfg(), func(ctx context.Context, _ ptrace.Traces) error { return stuck(ctx) })
	logs, _ := startSignal(t, logsTest, cfg(), func(ctx context.Context, _ plog.Logs) error { return stuck(ctx) })
	big := make([]int, 2000)
	for i := range big {
		big[i] = i
	}
	var err error
	for i := 0; i < 100 && err == nil; i++ {
		err = traces.hold(context.Background(), makeTraces(big...))
	}
	require.ErrorIs(t, err, ErrFull, "1 MiB of spans fills the capacity")
	require.ErrorIs(t, logs.hold(context.Background(), makeLogs(big...)), ErrFull, "the logs buffer shares it")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	require.NoError(t, traces.Shutdown(ctx))
	require.NoError(t, logs.Shutdown(ctx))
}
