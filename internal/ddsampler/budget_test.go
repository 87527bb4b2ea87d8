package ddsampler

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

func TestFairShare(t *testing.T) {
	tests := []struct {
		name   string
		target float64
		tps    []float64
		want   float64
	}{
		{"one signature takes the whole target", 10, []float64{100}, 10},
		{"even split", 10, []float64{100, 100}, 5},
		{"a quiet signature gives its unused share away", 10, []float64{1, 100}, 9},
		{"two quiet ones", 10, []float64{1, 2, 100}, 7},
		{"the last one gets what the others left", 10, []float64{1, 2}, 9},
		{"any order", 10, []float64{100, 2, 1}, 7},
		{"silent signatures", 10, []float64{0, 0, 100}, 10},
		{"all below: an even part", 10, []float64{4, 4, 4}, 10.0 / 3},
		{"no signature", 10, nil, 10},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.InDelta(t, tt.want, fairShare(tt.target, tt.tps), 1e-9)
		})
	}
}

func TestWindow(t *testing.T) {
	var w window
	for id := int64(10); id < 16; id++ {
		w[slot(id)] = float64(id) // buckets 10..15 hold their ids
	}
	c := w
	assert.InDelta(t, 15.0, c.advance(15, 16), 0, "the six buckets before 16: 10..15")
	assert.Zero(t, c[slot(16)], "16 starts empty")
	c = w
	assert.InDelta(t, 15.0, c.advance(15, 21), 0, "before 21: 15 only")
	assert.Equal(t, window{}, c, "10..14 expired; 15's slot is 21's, which starts empty")
	c = w
	assert.Zero(t, c.advance(15, 22), "before 22: none of 10..15")
	assert.Equal(t, window{}, c)
	assert.Equal(t, 5, slot(-1), "ids before 1970 still map into the window")
}

// count feeds sigs at their rates per second for secs seconds, 10 times a second.
func count(b *Budget[uint64], start time.Time, secs int, perSecond map[uint64]int) time.Time {
	now := start
	for range secs * 10 {
		for sig, n := range perSecond {
			b.Count(now, sig, float64(n)/10)
		}
		now = now.Add(100 * time.Millisecond)
	}
	return now
}

func TestBudgetRates(t *testing.T) {
	b := NewBudget[uint64](10, 100)
	start := time.Unix(1_700_000_000, 0)
	now := count(b, start, 60, map[uint64]int{1: 100, 2: 1})
	assert.InDelta(t, 0.09, b.Rate(1), 0.01, "busy: (10 - 1) / 100")
	assert.InDelta(t, 1, b.Rate(2), 0, "quiet: below its share")
	assert.InDelta(t, b.Rate(1), b.DefaultRate(), 1e-9, "a new signature gets the lowest rate")

	// The busy signature goes quiet: once its busy buckets left the 30 s window, its rate rises
	// by at most 20 % a rotation.
	prev := b.Rate(1)
	now = count(b, now, 30, map[uint64]int{1: 1, 2: 1})
	assert.InDelta(t, prev, b.Rate(1), 1e-9, "the busiest bucket of the window still counts")
	now = count(b, now, 5, map[uint64]int{1: 1, 2: 1})
	assert.Greater(t, b.Rate(1), prev)
	assert.LessOrEqual(t, b.Rate(1), prev*1.2+1e-9)

	// Silent: its rate climbs back to 1 and then it is forgotten.
	now = count(b, now, 120, map[uint64]int{2: 1})
	for sig := range b.Rated() {
		assert.NotEqual(t, uint64(1), sig, "forgotten")
	}
	assert.Equal(t, 1, b.Signatures())
	_ = now
}

func TestBudgetBoundsSignatures(t *testing.T) {
	b := NewBudget[uint64](10, 3)
	now := time.Unix(1_700_000_000, 0)
	untracked := 0
	for sig := range uint64(10) {
		if b.Count(now, sig, 1).Untracked {
			untracked++
		}
	}
	assert.Equal(t, 3, b.Signatures())
	assert.Equal(t, 7, untracked)
}

func TestKeepByRate(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	kept := 0
	for range 100_000 {
		if KeepByRate(rng.Uint64(), 0.1) {
			kept++
		}
	}
	assert.InDelta(t, 10_000, kept, 400)
	assert.True(t, KeepByRate(42, 1))
	assert.False(t, KeepByRate(42, 0))
	// Consecutive ids (as some tracers allocate them) are spread too.
	kept = 0
	for id := range uint64(10_000) {
		if KeepByRate(id+1, 0.5) {
			kept++
		}
	}
	assert.InDelta(t, 5_000, kept, 300)
}

func TestRejected(t *testing.T) {
	for p, want := range map[int64]bool{-3: true, -2: true, -1: true, 0: false, 1: false, 2: false} {
		assert.Equal(t, want, Rejected(p), "priority %d", p)
	}
}
