package bufferprocessor

import (
	"sync"
	"time"
)

// breakerState is the circuit breaker's state.
type breakerState int

const (
	// breakerClosed: the next consumer works; every attempt goes at once.
	breakerClosed breakerState = iota
	// breakerOpen: a delivery's retryable error opened it; retries wait for the next probe's time.
	breakerOpen
	// breakerHalfOpen: one retry, the probe, tries the next consumer; the others wait for its outcome.
	breakerHalfOpen
)

// attempt says whether a delivery attempt is the circuit breaker's probe.
type attempt int

const (
	attemptOrdinary attempt = iota // a first attempt, or a retry while the breaker is closed
	attemptProbe                   // the one retry that tries the next consumer while the breaker is open
)

// circuitBreaker tracks a failing next consumer (Elasticsearch down, or refusing bulks). A
// delivery's retryable error opens it, a delivery's success closes it. While it is not closed:
//
//   - batches wait serialized, in the memory queue (queue.spill) as in the deliveries waiting to
//     retry (spillBatch), so the garbage collector does not mark them again and again;
//   - the deliveries waiting to retry take turns: one at a time tries the next consumer again (the
//     probe, half-open), at most once per the breaker's own backoff interval, and its success
//     wakes the others at once. Each attempt makes the exporter encode the whole bulk before it
//     finds Elasticsearch gone; without turns, every worker did so on its own schedule, `threads`
//     bursts of encoding that failed anyway and took the core from the receivers.
//
// A delivery's first attempt never waits for a turn, and each delivery still waits its own
// backoff before it asks for one: a batch that alone keeps failing (a retryable error about it,
// not about Elasticsearch) slows only its own retries, while the others' successes close the
// breaker each time it opens.
type circuitBreaker struct {
	mu        sync.Mutex
	state     breakerState
	closed    chan struct{} // closed when the breaker closes (a delivery succeeded)
	recovered chan struct{} // closed when a probe succeeded: the next consumer is back
	nextProbe time.Time     // when open: the earliest time for the next probe
	bo        *backoff      // the probes' schedule (max_elapsed is each delivery's own)
	retry     RetryConfig
	clock     clock
}

func newCircuitBreaker(retry RetryConfig, clk clock) *circuitBreaker {
	return &circuitBreaker{retry: retry, clock: clk}
}

// failed records a retryable error of an attempt a. It returns
// true when the breaker opened with it, and the channel closed when a probe succeeds (see
// recovered).
func (cb *circuitBreaker) failed(a attempt) (opened bool, recovered <-chan struct{}) {
	now := cb.clock.Now()
	cb.mu.Lock()
	defer cb.mu.Unlock()
	if cb.state == breakerClosed {
		cb.state = breakerOpen
		cb.closed, cb.recovered = make(chan struct{}), make(chan struct{})
		cb.bo = newBackoff(RetryConfig{InitialInterval: cb.retry.InitialInterval, MaxInterval: cb.retry.MaxInterval})
		cb.scheduleProbeLocked(now)
		return true, cb.recovered
	}
	if a == attemptProbe {
		cb.state = breakerOpen
		cb.scheduleProbeLocked(now)
	}
	return false, cb.recovered
}

// scheduleProbeLocked sets the next probe's time one backoff interval from now.
func (cb *circuitBreaker) scheduleProbeLocked(now time.Time) {
	d, _ := cb.bo.next(0)
	cb.nextProbe = now.Add(d)
}

// succeeded records the success of a delivery's attempt a and closes the breaker,
// waking the deliveries waiting for a turn, and after a probe also those waiting their own
// backoff. It returns true when the breaker was not closed.
func (cb *circuitBreaker) succeeded(a attempt) bool {
	cb.mu.Lock()
	defer cb.mu.Unlock()
	if cb.state == breakerClosed {
		return false
	}
	cb.state = breakerClosed
	close(cb.closed)
	if a == attemptProbe {
		close(cb.recovered)
	}
	return true
}

// abandonProbe gives the probe's turn back without a verdict on the next consumer (the attempt
// failed permanently: the batch was at fault), so the next delivery may probe at once.
func (cb *circuitBreaker) abandonProbe(a attempt) {
	if a != attemptProbe {
		return
	}
	now := cb.clock.Now()
	cb.mu.Lock()
	defer cb.mu.Unlock()
	if cb.state == breakerHalfOpen {
		cb.state = breakerOpen
	}
	cb.nextProbe = now
}

// grant is the circuit breaker's answer to a delivery that wants to retry (turn).
type grant struct {
	// granted: try now, as attempt. attemptProbe makes the breaker half-open: report the outcome
	// with failed, succeeded or abandonProbe.
	granted bool
	attempt attempt
	// Not granted: ask again once the breaker closes (closed) or, at most, wait has passed.
	wait   time.Duration
	closed <-chan struct{}
}

// turn tells a delivery that wants to retry whether it may try now.
func (cb *circuitBreaker) turn() grant {
	now := cb.clock.Now()
	cb.mu.Lock()
	defer cb.mu.Unlock()
	switch {
	case cb.state == breakerClosed:
		return grant{granted: true, attempt: attemptOrdinary}
	case cb.state == breakerHalfOpen:
		return grant{wait: cb.retry.InitialInterval, closed: cb.closed} // the probe's outcome sets the next turn
	case now.Before(cb.nextProbe):
		return grant{wait: cb.nextProbe.Sub(now), closed: cb.closed}
	}
	cb.state = breakerHalfOpen
	return grant{granted: true, attempt: attemptProbe}
}
