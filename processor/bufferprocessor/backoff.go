package bufferprocessor

import (
	"math/rand/v2"
	"time"
)

// backoff is exponential backoff with ±20% jitter, so that many workers failing together do not
// retry in lockstep.
type backoff struct {
	cur, max, maxElapsed time.Duration
}

func newBackoff(cfg RetryConfig) *backoff {
	return &backoff{cur: cfg.InitialInterval, max: cfg.MaxInterval, maxElapsed: cfg.MaxElapsed}
}

// next returns the wait before the next attempt, or false when max_elapsed is exceeded.
func (b *backoff) next(elapsed time.Duration) (time.Duration, bool) {
	if b.maxElapsed > 0 && elapsed >= b.maxElapsed {
		return 0, false
	}
	d := b.cur
	b.cur = min(2*b.cur, b.max)
	return time.Duration(float64(d) * (0.8 + 0.4*rand.Float64())), true
}
