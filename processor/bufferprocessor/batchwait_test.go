package bufferprocessor

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestMaxBatchWait: with max_batch_wait, a light load is delivered in one batch per wait instead
// of one delivery per ConsumeTraces, and not before the oldest batch has waited; a delivery's
// worth of spans goes at once; shutdown does not wait.
func TestMaxBatchWait(t *testing.T) {
	const batches, per = 20, 5
	// The cases that must not wait set the longest wait allowed (a minute) and never move the
	// clock: that they are delivered at all shows they did not wait.
	const forever = time.Minute
	tests := []struct {
		name      string
		wait      time.Duration
		maxSpans  int
		queueSize int
		shutdown  bool // shut down right after pushing (memory only: drains)
		gathers   bool // nothing goes before the wait is over
		wantCalls int  // 0: not checked
	}{
		{"light load gathers into one delivery", 300 * time.Millisecond, 1000, 100, false, true, 1},
		{"a delivery's worth goes at once", forever, batches * per, 100, false, false, 1},
		{"shutdown does not wait", forever, 1000, 100, true, false, 1},
		// queue_size 10 holds 50 spans, fewer than max_batch_items: a full queue must not wait
		// (waiting would only refuse clients).
		{"a full queue goes at once", forever, 1000, 10, false, false, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := memCfg()
			cfg.Threads, cfg.MaxBatchItems, cfg.MaxBatchWait, cfg.QueueSize = 4, tt.maxSpans, tt.wait, tt.queueSize
			rec := newRecorder()
			clk := newFakeClock()
			h := start(t, cfg, rec, nil, withClock(clk))
			for i := range batches {
				// A full queue refuses (retryable); offer again once a delivery made room, as a
				// client would.
				rec.events.waitFor(t, "batch accepted", func() bool {
					return h.p.ConsumeTraces(context.Background(), makeTraces(rangeIDs(i*per, per)...)) == nil
				})
			}
			if tt.gathers {
				// The workers wait for the oldest batch's max_batch_wait, on one timer.
				clk.waitTimers(t, 1)
				assert.Equal(t, []time.Duration{tt.wait}, clk.timers(), "woken when the oldest batch has waited")
				assert.Zero(t, rec.n.Load(), "nothing delivered before the wait is over")
				clk.Advance(tt.wait)
			}
			if tt.shutdown {
				h.shutdown(t)
			} else {
				rec.waitDistinct(t, batches*per)
				h.shutdown(t)
			}
			rec.checkAll(t, rangeIDs(0, batches*per))
			rec.mu.Lock()
			calls := append([]int(nil), rec.calls...)
			rec.mu.Unlock()
			if tt.wantCalls > 0 {
				assert.Len(t, calls, tt.wantCalls, "deliveries (spans each): %v", calls)
			}
			require.NotEmpty(t, calls)
		})
	}
}
