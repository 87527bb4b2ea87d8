package bufferprocessor

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/consumer/consumererror"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.uber.org/zap"
)

func isClosed(c <-chan struct{}) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}

// TestCircuitBreakerStates walks the breaker's states: closed lets every retry go; a failure opens
// it, and retries wait for the probe's time; half-open lets one probe at a time; a failed probe
// pushes the next probe further; a probe's success wakes everyone, a first attempt's success only
// those waiting for a turn.
func TestCircuitBreakerStates(t *testing.T) {
	initial := 100 * time.Millisecond
	clk := newFakeClock()
	cb := newCircuitBreaker(RetryConfig{InitialInterval: initial, MaxInterval: time.Second}, clk)

	g := cb.turn()
	require.Equal(t, grant{granted: true, attempt: attemptOrdinary}, g, "closed: a retry goes at once")

	opened, recovered := cb.failed(attemptOrdinary)
	require.True(t, opened)
	again, recovered2 := cb.failed(attemptOrdinary) // a second worker's failure finds it open
	require.False(t, again)
	require.Equal(t, recovered, recovered2)

	g = cb.turn()
	require.False(t, g.granted, "open: wait for the probe's time")
	assert.GreaterOrEqual(t, g.wait, initial*8/10)
	assert.LessOrEqual(t, g.wait, initial*12/10)
	closed, wait := g.closed, g.wait

	clk.Advance(wait - time.Nanosecond)
	require.False(t, cb.turn().granted, "not before the probe's time")
	clk.Advance(time.Nanosecond)
	require.Equal(t, grant{granted: true, attempt: attemptProbe}, cb.turn(), "the first retry at the probe's time is the probe")
	clk.Advance(time.Hour)
	g = cb.turn()
	require.False(t, g.granted, "half-open: one probe at a time")
	assert.Equal(t, initial, g.wait, "ask again within the initial interval, or when the breaker closes")

	cb.failed(attemptProbe)
	g = cb.turn()
	require.False(t, g.granted)
	assert.GreaterOrEqual(t, g.wait, 2*initial*8/10, "a failed probe doubles the probes' interval")

	clk.Advance(g.wait)
	require.Equal(t, grant{granted: true, attempt: attemptProbe}, cb.turn())
	cb.abandonProbe(attemptProbe) // the batch was at fault: the next may probe at once
	require.Equal(t, grant{granted: true, attempt: attemptProbe}, cb.turn())

	require.False(t, isClosed(closed))
	require.True(t, cb.succeeded(attemptProbe))
	assert.True(t, isClosed(closed), "a success wakes the deliveries waiting for a turn")
	assert.True(t, isClosed(recovered), "a probe's success wakes those waiting their own backoff")
	require.Equal(t, grant{granted: true, attempt: attemptOrdinary}, cb.turn())
	require.False(t, cb.succeeded(attemptOrdinary), "already closed")

	// A first attempt's success closes the breaker, but proves nothing about the failing batches:
	// those waiting their own backoff keep waiting.
	_, recovered = cb.failed(attemptOrdinary)
	closed = cb.turn().closed
	require.True(t, cb.succeeded(attemptOrdinary))
	assert.True(t, isClosed(closed))
	assert.False(t, isClosed(recovered))
}

// probeCounter is a next consumer that fails while down and records how many calls overlapped.
type probeCounter struct {
	rec         *recorder
	down        atomic.Bool
	inFlight    atomic.Int64
	maxInFlight atomic.Int64
	failures    atomic.Int64
}

func (c *probeCounter) Capabilities() consumer.Capabilities { return consumer.Capabilities{} }

func (c *probeCounter) ConsumeTraces(ctx context.Context, td ptrace.Traces) error {
	n := c.inFlight.Add(1)
	defer c.inFlight.Add(-1)
	raiseMax(&c.maxInFlight, n)
	if c.down.Load() {
		c.failures.Add(1)
		return errDown
	}
	return c.rec.ConsumeTraces(ctx, td)
}

// TestOutageOneProbeAtATime: with the next consumer down, the workers' retries take turns: each
// time the clock passes every backoff, exactly one of them tries the next consumer (each attempt
// would make the exporter encode its bulk for nothing). Once it is back, the probe's success
// delivers every batch without the clock moving: nobody waits out their own backoff.
func TestOutageOneProbeAtATime(t *testing.T) {
	const threads = 4
	cfg := memCfg()
	cfg.Threads, cfg.MaxBatchItems = threads, 0
	cfg.Retry = RetryConfig{InitialInterval: time.Millisecond, MaxInterval: 4 * time.Millisecond}
	clk := newFakeClock()
	next := &probeCounter{rec: newRecorder()}
	next.down.Store(true)
	h := start(t, cfg, next, nil, withClock(clk))
	for i := range 20 {
		require.NoError(t, h.p.ConsumeTraces(context.Background(), makeTraces(i)))
	}
	// Every worker failed its first attempt (those may overlap) and waits on its backoff.
	clk.waitTimers(t, threads)
	require.Equal(t, int64(threads), next.failures.Load())
	next.maxInFlight.Store(0)
	// max_interval 4 ms + 20 % jitter: each round passes every backoff and the probes' interval.
	const round = 5 * time.Millisecond
	for range 10 {
		before := next.failures.Load()
		clk.Advance(round)
		clk.waitTimers(t, threads) // every worker waits again: nothing more happens this round
		assert.Equal(t, int64(1), next.failures.Load()-before, "one probe per round")
	}
	assert.Equal(t, int64(1), next.maxInFlight.Load(), "retries during the outage overlapped")

	// Back up: the next round's probe succeeds and wakes every waiting delivery.
	next.down.Store(false)
	clk.Advance(round)
	next.rec.waitDistinct(t, 20)
	h.shutdown(t)
	assert.Zero(t, next.rec.checkAll(t, rangeIDs(0, 20)))
	assert.False(t, h.p.q.breakerOpen.Load(), "a success closes the breaker")
}

// queuedForms returns how many queued batches are held decoded and how many serialized.
func queuedForms(q *queue[ptrace.Traces]) (decoded, serialized int) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for _, b := range q.batches[q.head:] {
		switch b.form {
		case formSerialized:
			serialized++
		case formDecoded:
			decoded++
		}
	}
	return decoded, serialized
}

// TestOpenBreakerQueuesSerialized: when a delivery fails, the batches already queued are serialized,
// and so is every batch queued while the breaker is open; they all arrive intact once the next
// consumer is back, and batches queued after that stay decoded.
func TestOpenBreakerQueuesSerialized(t *testing.T) {
	for _, storage := range []string{"", ModeOverflow, ModeWriteAhead} {
		t.Run(fmt.Sprintf("storage=%q", storage), func(t *testing.T) {
			cfg := memCfg()
			if storage != "" {
				cfg = diskCfg(t.TempDir(), storage, FsyncNever)
			}
			cfg.Threads, cfg.MaxBatchItems = 1, 0
			cfg.Retry = RetryConfig{InitialInterval: 20 * time.Millisecond, MaxInterval: 20 * time.Millisecond}
			rec := newRecorder()
			rec.gate = make(chan struct{})
			var down atomic.Bool
			down.Store(true)
			rec.failFn = func(int) error {
				if down.Load() {
					return errDown
				}
				return nil
			}
			h := start(t, cfg, rec, nil)
			// The worker holds batch 0 in its first attempt (the gate); 1–5 queue decoded.
			require.NoError(t, h.p.ConsumeTraces(context.Background(), makeTraces(0, 1)))
			rec.waitFirstCall(t)
			for i := 1; i <= 5; i++ {
				require.NoError(t, h.p.ConsumeTraces(context.Background(), makeTraces(2*i, 2*i+1)))
			}
			decoded, serialized := queuedForms(h.p.q)
			require.Equal(t, 5, decoded)
			require.Zero(t, serialized)

			close(rec.gate) // the first attempt fails: the breaker opens
			require.Eventually(t, h.p.q.breakerOpen.Load, 10*time.Second, time.Millisecond)
			for i := 6; i <= 8; i++ {
				require.NoError(t, h.p.ConsumeTraces(context.Background(), makeTraces(2*i, 2*i+1)))
			}
			decoded, serialized = queuedForms(h.p.q)
			assert.Zero(t, decoded, "an open breaker leaves no decoded batch")
			assert.GreaterOrEqual(t, serialized, 7, "batches 1–8, less what the worker took")

			down.Store(false)
			rec.waitDistinct(t, 18)
			require.Eventually(t, func() bool { return !h.p.q.breakerOpen.Load() }, 10*time.Second, time.Millisecond)
			h.shutdown(t)
			assert.Zero(t, rec.checkAll(t, rangeIDs(0, 18)), "no duplicates")
		})
	}
}

// TestShutdownSavesSerializedBatches: batches the memory queue holds serialized (the breaker was
// open) are written to the log at shutdown and delivered after the restart; without storage they are
// counted as lost with their spans.
func TestShutdownSavesSerializedBatches(t *testing.T) {
	for _, withStorage := range []bool{false, true} {
		t.Run(fmt.Sprintf("storage=%v", withStorage), func(t *testing.T) {
			dir := t.TempDir()
			cfg := overflowCfgIf(withStorage, dir)
			cfg.Threads, cfg.MaxBatchItems, cfg.ShutdownTimeout = 1, 0, 100*time.Millisecond
			cfg.Retry = RetryConfig{InitialInterval: time.Hour, MaxInterval: time.Hour}
			rec := newRecorder()
			rec.failFn = func(int) error { return errDown }
			h := start(t, cfg, rec, nil)
			require.NoError(t, h.p.ConsumeTraces(context.Background(), makeTraces(0, 1)))
			require.Eventually(t, h.p.q.breakerOpen.Load, 10*time.Second, time.Millisecond)
			for i := 1; i <= 4; i++ {
				require.NoError(t, h.p.ConsumeTraces(context.Background(), makeTraces(2*i, 2*i+1)))
			}
			_, serialized := queuedForms(h.p.q)
			require.Equal(t, 4, serialized)
			require.NoError(t, shutdownReturns(context.Background(), t, h))
			if !withStorage {
				assert.Equal(t, int64(10), h.sum(t, "processor_buffer_dropped_spans", reasonShutdown),
					"the serialized batches' spans and the delivery's are counted")
				return
			}
			assert.Zero(t, h.sum(t, "processor_buffer_dropped_spans", ""))
			rec2 := newRecorder()
			h2 := start(t, cfg, rec2, nil)
			rec2.waitDistinct(t, 10)
			h2.shutdown(t)
			assert.Zero(t, rec2.checkAll(t, rangeIDs(0, 10)))
		})
	}
}

// TestQueuePushForm: push queues a batch decoded, or serialized while the breaker is open, and the
// serialized batch decodes to the same.
func TestQueuePushForm(t *testing.T) {
	q := newQueue(queueSettings[ptrace.Traces]{sig: tracesSignal{}, maxBatches: 10, onDrop: func(string, int64) {}, logger: zap.NewNop(), clock: systemClock{}})
	td := makeTraces(1, 2, 3)
	require.NoError(t, q.push(context.Background(), q.refs().adopt(td, 3, time.Now())))
	q.breakerOpen.Store(true)
	require.NoError(t, q.push(context.Background(), q.refs().adopt(makeTraces(4, 5), 2, time.Now())))
	decoded, serialized := queuedForms(q)
	assert.Equal(t, 1, decoded)
	assert.Equal(t, 1, serialized)
	var m ptrace.ProtoMarshaler
	assert.Equal(t, int64(m.TracesSize(td)), q.batches[0].bytes)
	assert.Equal(t, int64(len(q.batches[1].payload)), q.batches[1].bytes)

	assert.Equal(t, 1, q.spill(), "spill serializes the decoded batch")
	decoded, serialized = queuedForms(q)
	assert.Zero(t, decoded)
	assert.Equal(t, 2, serialized)
	var u ptrace.ProtoUnmarshaler
	got, err := u.UnmarshalTraces(q.batches[0].payload)
	require.NoError(t, err)
	assert.Equal(t, 3, got.SpanCount())
	assert.Equal(t, "1", got.ResourceSpans().At(0).ScopeSpans().At(0).Spans().At(0).Name())
}

// TestProbesSendAFewSpans: while the next consumer fails, the breaker's probes carry at most
// probeItems spans, not the whole batch (the exporter would encode all of it for nothing); the
// probe that succeeds is followed at once by the rest, and every span arrives once.
func TestProbesSendAFewSpans(t *testing.T) {
	cfg := memCfg()
	cfg.Threads, cfg.MaxBatchItems = 1, 0
	cfg.Retry = RetryConfig{InitialInterval: time.Millisecond, MaxInterval: 2 * time.Millisecond}
	var down atomic.Bool
	down.Store(true)
	next := newRecorder()
	next.failFn = func(int) error {
		if down.Load() {
			return errDown
		}
		return nil
	}
	h := start(t, cfg, next, nil)
	const spans = 500
	require.NoError(t, h.p.ConsumeTraces(context.Background(), makeTraces(rangeIDs(0, spans)...)))
	require.Eventually(t, func() bool { return len(next.attemptSizes()) >= 5 }, 10*time.Second, time.Millisecond)
	down.Store(false)
	next.waitDistinct(t, spans)
	h.shutdown(t)
	assert.Zero(t, next.checkAll(t, rangeIDs(0, spans)), "no span twice")

	calls := next.attemptSizes()
	assert.Equal(t, spans, calls[0], "the first attempt is the whole batch")
	n := len(calls)
	for i, c := range calls[1 : n-1] {
		assert.LessOrEqual(t, c, probeItems, "call %d of %v: a probe carried the whole batch", i+1, calls)
	}
	assert.Equal(t, spans-probeItems, calls[n-1], "after the probe that succeeded, the rest in one call")
	assert.Equal(t, []int{probeItems, spans - probeItems}, next.calls, "delivered: the probe, then the rest")
	assert.False(t, h.p.q.breakerOpen.Load(), "the probe's success closed the breaker")
}

// TestRefusedProbeDropsOnlyItsSpans: a probe the next consumer refuses permanently drops its own
// spans (counted), and the rest of the batch is tried at once.
func TestRefusedProbeDropsOnlyItsSpans(t *testing.T) {
	cfg := memCfg()
	cfg.Threads, cfg.MaxBatchItems = 1, 0
	cfg.Retry = RetryConfig{InitialInterval: time.Millisecond, MaxInterval: 2 * time.Millisecond}
	next := newRecorder()
	next.failFn = func(call int) error {
		switch call {
		case 1:
			return errDown // the first attempt: retryable, so the next call is a probe
		case 2:
			return consumererror.NewPermanent(errors.New("mapping conflict"))
		}
		return nil
	}
	h := start(t, cfg, next, nil)
	const spans = 200
	require.NoError(t, h.p.ConsumeTraces(context.Background(), makeTraces(rangeIDs(0, spans)...)))
	next.waitDistinct(t, spans-probeItems)
	h.shutdown(t)

	calls := next.attemptSizes()
	require.Len(t, calls, 3, "%v: the first attempt, the refused probe, the rest", calls)
	assert.Equal(t, []int{spans, probeItems, spans - probeItems}, calls)
	assert.Equal(t, spans-probeItems, next.distinct(), "the rest arrived, the probe's spans did not")
	assert.Equal(t, int64(probeItems), h.sum(t, "processor_buffer_dropped_spans", reasonPermanent), "the refused probe's spans are counted")
	_, err := h.tel.GetMetric("otelcol_processor_buffer_time")
	assert.Error(t, err, "processor_buffer_time is the time to acceptance, and the batch was not accepted whole")
}
