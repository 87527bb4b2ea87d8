package bufferprocessor

import (
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fakeClock is a clock that moves only when the test advances it. A timer fires inside Advance
// once the clock reaches its deadline. waitTimers lets a test wait until the buffer is parked on
// a number of timers: from then on nothing happens until the test advances the clock (or lets the
// next consumer answer), which is how a test asserts that something did not happen, with no sleep.
type fakeClock struct {
	mu      sync.Mutex
	now     time.Time
	pending []*fakeTimer
	// events is bumped when a timer is made, stopped or fires: a test may share it with the
	// next consumer's (sharing), to wait for whichever comes first.
	events *progress
}

func newFakeClock() *fakeClock {
	return &fakeClock{now: time.Unix(1_700_000_000, 0), events: &progress{}}
}

// sharing makes the clock bump p: a test waiting on p sees the clock's events too.
func (c *fakeClock) sharing(p *progress) *fakeClock {
	c.events = p
	return c
}

type fakeTimer struct {
	c  *fakeClock
	at time.Time
	ch chan time.Time // NewTimer's; nil for AfterFunc
	f  func()         // AfterFunc's
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) NewTimer(d time.Duration) timer {
	return c.add(&fakeTimer{c: c, ch: make(chan time.Time, 1)}, d)
}

func (c *fakeClock) AfterFunc(d time.Duration, f func()) timer {
	return c.add(&fakeTimer{c: c, f: f}, d)
}

// add schedules t d from now; a deadline already reached fires at once, as time.Timer's does.
func (c *fakeClock) add(t *fakeTimer, d time.Duration) *fakeTimer {
	c.mu.Lock()
	t.at = c.now.Add(d)
	due := d <= 0
	if !due {
		c.pending = append(c.pending, t)
	}
	now := c.now
	c.mu.Unlock()
	if due {
		t.fire(now)
	}
	c.events.bump()
	return t
}

func (t *fakeTimer) Chan() <-chan time.Time { return t.ch }

func (t *fakeTimer) Stop() bool {
	c := t.c
	c.mu.Lock()
	i := slices.Index(c.pending, t)
	if i >= 0 {
		c.pending = slices.Delete(c.pending, i, i+1)
	}
	c.mu.Unlock()
	if i >= 0 {
		c.events.bump()
	}
	return i >= 0
}

func (t *fakeTimer) fire(now time.Time) {
	if t.f != nil {
		go t.f()
		return
	}
	t.ch <- now // buffered, and each timer fires once
}

// Advance moves the clock d forward and fires, in deadline order, every timer it reaches.
func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	now := c.now
	var due []*fakeTimer
	c.pending = slices.DeleteFunc(c.pending, func(t *fakeTimer) bool {
		if t.at.After(now) {
			return false
		}
		due = append(due, t)
		return true
	})
	c.mu.Unlock()
	slices.SortStableFunc(due, func(a, b *fakeTimer) int { return a.at.Compare(b.at) })
	for _, t := range due {
		t.fire(now)
	}
	c.events.bump()
}

// timers returns the pending timers' durations from now, shortest first.
func (c *fakeClock) timers() []time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	ds := make([]time.Duration, 0, len(c.pending))
	for _, t := range c.pending {
		ds = append(ds, t.at.Sub(c.now))
	}
	slices.Sort(ds)
	return ds
}

// waitTimers waits until at least n timers are pending: the goroutines that wait on them are
// parked until the clock reaches them.
func (c *fakeClock) waitTimers(tb testing.TB, n int) {
	tb.Helper()
	c.events.waitFor(tb, "timers pending", func() bool { return len(c.timers()) >= n })
}

func TestFakeClock(t *testing.T) {
	c := newFakeClock()
	t0 := c.Now()
	long, short := c.NewTimer(time.Minute), c.NewTimer(time.Second)
	fired := make(chan time.Time, 1)
	c.AfterFunc(2*time.Second, func() { fired <- c.Now() })
	assert.Equal(t, []time.Duration{time.Second, 2 * time.Second, time.Minute}, c.timers())

	c.Advance(1500 * time.Millisecond)
	assert.Equal(t, t0.Add(1500*time.Millisecond), <-short.Chan(), "a timer receives the time it fired at")
	assert.False(t, short.Stop(), "fired already")
	c.Advance(time.Second)
	assert.Equal(t, t0.Add(2500*time.Millisecond), <-fired)
	assert.True(t, long.Stop())
	assert.Empty(t, c.timers())

	now := c.NewTimer(0)
	select {
	case <-now.Chan():
	default:
		require.Fail(t, "a timer of 0 fires at once, as time.Timer's")
	}
	go c.NewTimer(time.Hour)
	c.waitTimers(t, 1) // woken by the timer's making, not by polling
	assert.Equal(t, []time.Duration{time.Hour}, c.timers())
}
