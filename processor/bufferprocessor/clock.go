package bufferprocessor

import "time"

// clock is where the buffer reads the time and waits for it: enqueue times, max_batch_wait,
// full_wait, the deliveries' backoff, the pause after a failed disk read and the circuit
// breaker's probe schedule. The collector runs on the system clock; tests run on a fake one that
// moves only when they advance it, so that they synchronize on what the buffer does instead of
// sleeping. Shutdown's deadline stays on the system clock: it is the collector's context.
type clock interface {
	Now() time.Time
	// NewTimer returns a timer whose channel receives once d has passed.
	NewTimer(d time.Duration) timer
	// AfterFunc calls f in a goroutine of its own once d has passed.
	AfterFunc(d time.Duration, f func()) timer
}

// timer is what the buffer uses of a time.Timer.
type timer interface {
	// Chan receives once the timer fires (never for a timer made by AfterFunc).
	Chan() <-chan time.Time
	// Stop prevents the timer from firing; false when it already fired or was stopped.
	Stop() bool
}

type systemClock struct{}

func (systemClock) Now() time.Time                 { return time.Now() }
func (systemClock) NewTimer(d time.Duration) timer { return systemTimer{time.NewTimer(d)} }
func (systemClock) AfterFunc(d time.Duration, f func()) timer {
	return systemTimer{time.AfterFunc(d, f)}
}

type systemTimer struct{ t *time.Timer }

func (t systemTimer) Chan() <-chan time.Time { return t.t.C }
func (t systemTimer) Stop() bool             { return t.t.Stop() }

// timing is the buffer's clock and the pauses that are not settings.
type timing struct {
	clock clock
	// readErrorWait is the pause after a failed disk read before the worker reads again.
	readErrorWait time.Duration
	// stuckGrace is how long Shutdown waits, after canceling the deliveries at its deadline, for
	// them to return before it saves the memory queue and closes the log without them. A next
	// consumer that honors cancellation returns at once; one that does not would otherwise hold
	// Shutdown (and the memory queue it has not saved yet) until the process is killed.
	stuckGrace time.Duration
}

func defaultTiming() timing {
	return timing{clock: systemClock{}, readErrorWait: time.Second, stuckGrace: 5 * time.Second}
}
