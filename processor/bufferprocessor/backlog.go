package bufferprocessor // import "github.com/tracegate/tracegate/processor/bufferprocessor"

import (
	"sync"
	"time"
)

// backlog is the state of a failing next consumer (Elasticsearch down, or refusing bulks). It
// begins with a delivery's retryable error and ends with a delivery's success. While it lasts:
//
//   - batches wait serialized, in the memory queue (queue.spill) as in the deliveries waiting to
//     retry (spillBatch), so the garbage collector does not mark them again and again;
//   - the deliveries waiting to retry take turns: one at a time tries the next consumer again (the
//     probe), at most once per the backlog's own backoff interval, and its success wakes the
//     others at once. Each attempt makes the exporter encode the whole bulk before it finds
//     Elasticsearch gone; without turns, every worker did so on its own schedule, `threads`
//     bursts of encoding that failed anyway and took the core from the receivers
//     (docs/benchmarks.md, "Elasticsearch down: the backlog").
//
// A delivery's first attempt never waits for a turn, and each delivery still waits its own
// backoff before it asks for one: a batch that alone keeps failing (a retryable error about it,
// not about Elasticsearch) slows only its own retries, while the others' successes end each
// backlog it begins.
type backlog struct {
	mu        sync.Mutex
	active    bool
	ended     chan struct{} // closed when the backlog ends (a delivery succeeded)
	recovered chan struct{} // closed when a probe succeeded: the next consumer is back
	probing   bool          // a probe is in flight
	nextProbe time.Time
	bo        *backoff // the probes' schedule (max_elapsed is each delivery's own)
	retry     RetryConfig
}

func newBacklog(retry RetryConfig) *backlog {
	return &backlog{retry: retry}
}

// failed records a retryable error of an attempt (probe: the attempt was the backlog's probe). It
// returns true when the backlog began with it, and the channel closed when a probe succeeds (see
// recovered).
func (b *backlog) failed(probe bool, now time.Time) (began bool, recovered <-chan struct{}) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.active {
		b.active, b.probing = true, false
		b.ended, b.recovered = make(chan struct{}), make(chan struct{})
		b.bo = newBackoff(RetryConfig{InitialInterval: b.retry.InitialInterval, MaxInterval: b.retry.MaxInterval})
		d, _ := b.bo.next(0)
		b.nextProbe = now.Add(d)
		return true, b.recovered
	}
	if probe {
		b.probing = false
		d, _ := b.bo.next(0)
		b.nextProbe = now.Add(d)
	}
	return false, b.recovered
}

// succeeded records a delivery's success (probe: it was the backlog's probe) and ends the
// backlog, waking the deliveries waiting for a turn, and after a probe also those waiting their
// own backoff. It returns true when there was a backlog.
func (b *backlog) succeeded(probe bool) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.probing = false
	if !b.active {
		return false
	}
	b.active = false
	close(b.ended)
	if probe {
		close(b.recovered)
	}
	return true
}

// abandonProbe gives the probe's turn back without a verdict on the next consumer (the attempt
// failed permanently: the batch was at fault), so the next delivery may probe at once.
func (b *backlog) abandonProbe(probe bool, now time.Time) {
	if !probe {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.probing = false
	b.nextProbe = now
}

// turn tells a delivery that wants to retry whether it may try now. ok: go ahead; probe: as the
// backlog's probe (report the outcome with failed, succeeded or abandonProbe). Otherwise wait
// until the backlog ends (ended) or until, at most, wait has passed, then ask again.
func (b *backlog) turn(now time.Time) (ok, probe bool, wait time.Duration, ended <-chan struct{}) {
	b.mu.Lock()
	defer b.mu.Unlock()
	switch {
	case !b.active:
		return true, false, 0, nil
	case b.probing:
		return false, false, b.retry.InitialInterval, b.ended // its outcome sets the next turn
	case now.Before(b.nextProbe):
		return false, false, b.nextProbe.Sub(now), b.ended
	}
	b.probing = true
	return true, true, 0, nil
}
