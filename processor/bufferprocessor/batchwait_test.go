package bufferprocessor

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// TestMaxBatchWait: with max_batch_wait, a light load is delivered in one batch per wait instead
// of one delivery per ConsumeTraces; a delivery's worth of spans goes at once; shutdown does not
// wait.
func TestMaxBatchWait(t *testing.T) {
	const batches, per = 20, 5
	// The cases that must not wait set the longest wait allowed (a minute): that they are
	// delivered at all (waitDistinct gives up after 20 s, shutdown after 10 s) shows they did not
	// wait, with no timing to assert.
	const forever = time.Minute
	tests := []struct {
		name      string
		wait      time.Duration
		maxSpans  int
		shutdown  bool          // shut down right after pushing (memory only: drains)
		wantCalls int           // 0: not checked
		minTime   time.Duration // from the first push to the last delivery
	}{
		{"light load gathers into one delivery", 300 * time.Millisecond, 1000, false, 1, 250 * time.Millisecond},
		{"a delivery's worth goes at once", forever, batches * per, false, 1, 0},
		{"shutdown does not wait", forever, 1000, true, 1, 0},
		// buffer 10 holds 50 spans, fewer than max_batch_items: a full queue must not wait (the
		// sweep's "buffer 100" run refused most requests before this).
		{"a full queue goes at once", forever, 1000, false, 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := memCfg()
			cfg.Threads, cfg.MaxBatchItems, cfg.MaxBatchWait = 4, tt.maxSpans, tt.wait
			if tt.name == "a full queue goes at once" {
				cfg.QueueSize = 10
			}
			rec := newRecorder()
			h := start(t, cfg, rec, nil)
			begin := time.Now()
			for i := range batches {
				// A full queue refuses (retryable); offer again, as a client would.
				for h.p.ConsumeTraces(context.Background(), makeTraces(rangeIDs(i*per, per)...)) != nil {
					time.Sleep(time.Millisecond)
				}
			}
			if tt.shutdown {
				h.shutdown(t)
			} else {
				rec.waitDistinct(t, batches*per)
			}
			took := time.Since(begin)
			if !tt.shutdown {
				h.shutdown(t)
			}
			rec.checkAll(t, rangeIDs(0, batches*per))
			rec.mu.Lock()
			calls := append([]int(nil), rec.calls...)
			rec.mu.Unlock()
			if tt.wantCalls > 0 {
				assert.Len(t, calls, tt.wantCalls, "deliveries (spans each): %v", calls)
			}
			assert.GreaterOrEqual(t, took, tt.minTime)
		})
	}
}
