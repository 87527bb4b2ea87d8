package cpubench

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
)

var errFull = errors.New("full")

// TestProduceRetriesAndCounts: every batch of the pool is delivered n times in all, a refusal that
// retry accepts is sent again, and the counter sees exactly what the consumer accepted.
func TestProduceRetriesAndCounts(t *testing.T) {
	var refusals atomic.Int64
	refusals.Store(5)
	accept := func(context.Context, int) error {
		if refusals.Add(-1) >= 0 {
			return errFull
		}
		return nil
	}
	c := NewCounter(func(n int) int64 { return int64(n) }, accept)
	b := &testing.B{}
	Produce(b, c.Consume, []int{1, 2, 3}, 30, func(err error) bool { return errors.Is(err, errFull) })
	c.Wait(60) // 10 × (1 + 2 + 3)
	if got := c.Count(); got != 60 {
		t.Fatalf("counted %d items, want 60", got)
	}
	if b.Failed() {
		t.Fatal("Produce failed on a retryable refusal")
	}
}

// TestCounterIgnoresRefused: a batch its consumer refused is not counted.
func TestCounterIgnoresRefused(t *testing.T) {
	c := NewCounter(func(n int) int64 { return int64(n) }, func(context.Context, int) error { return errFull })
	if err := c.Consume(t.Context(), 7); !errors.Is(err, errFull) {
		t.Fatalf("Consume returned %v, want the consumer's error", err)
	}
	if c.Count() != 0 {
		t.Fatalf("counted %d items of a refused batch", c.Count())
	}
}
