// Package refusalwait re-offers data the pipeline refused for a moment (memory limiter, full
// buffer) for a bounded time before a receiver answers the refusal: most trace clients (Datadog
// tracers, Elastic APM agents) never resend, so a short wait saves their data in a burst.
package refusalwait

import (
	"context"
	"time"

	"go.opentelemetry.io/collector/consumer/consumererror"
)

// Backoff between offers: short, because the buffer frees room as soon as a delivery completes.
const (
	firstBackoff = 5 * time.Millisecond
	maxBackoff   = 100 * time.Millisecond
)

// Offer calls offer (attempt 0, 1, ...) until it returns nil or a permanent error, wait has passed,
// or ctx is done, and returns its last error. An attempt after the first must offer fresh data:
// a processor before the refusing one may have changed the first offer in place.
func Offer(ctx context.Context, wait time.Duration, offer func(attempt int) error) error {
	deadline := time.Now().Add(wait)
	backoff := firstBackoff
	for attempt := 0; ; attempt++ {
		err := offer(attempt)
		left := time.Until(deadline)
		if err == nil || consumererror.IsPermanent(err) || left <= 0 {
			return err
		}
		t := time.NewTimer(min(backoff, left))
		select {
		case <-ctx.Done():
			t.Stop()
			return err
		case <-t.C:
		}
		backoff = min(2*backoff, maxBackoff)
	}
}
