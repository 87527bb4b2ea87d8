// Package ddsampler holds the Datadog agent's sampling arithmetic, written from its documented
// behaviour: a budget of kept traces per second spread over signatures (the priority sampler's
// rate_by_service, the error sampler), and the decision by rate on a trace id that tracers and
// agents share so that they agree.
package ddsampler

import (
	"iter"
	"math"
	"slices"
	"time"
)

// The agent's constants: traces are counted in 6 buckets of 5 s; at the first count of a new
// bucket every rate is computed again from each signature's busiest bucket of the window, and a
// rate rises by at most 20 % at a time (a 10-fold rise takes 13 buckets, about a minute), while a
// fall applies at once.
const (
	BucketSeconds   = 5
	numBuckets      = 6
	maxRateIncrease = 1.2
)

// Budget spreads a target number of kept traces per second over signatures of type K (a service
// and env, or a trace's shape): a signature seen below its fair share keeps everything, and what
// it leaves unused is shared by the busier ones. Not safe for concurrent use.
type Budget[K comparable] struct {
	target        float64
	maxSignatures int
	seen          map[K]*tracked
	all           window // every counted trace, tracked or not: the default rate's basis
	bucket        int64
	started       bool
	lowest        float64 // the lowest rate of the last computation

	// Own, when set, is called on a signature before the budget stores it, e.g. to copy strings
	// that point into a request's memory.
	Own func(K) K
}

type tracked struct {
	seen window
	rate float64 // 0 until a computation saw the signature
}

// NewBudget returns a budget of targetTPS kept traces per second over at most maxSignatures
// signatures; traces of signatures beyond it count in the total only and get the default rate.
func NewBudget[K comparable](targetTPS float64, maxSignatures int) *Budget[K] {
	return &Budget[K]{target: targetTPS, maxSignatures: maxSignatures, seen: map[K]*tracked{}, lowest: 1}
}

// Counted says what one Count did.
type Counted struct {
	Rotated   bool // a new bucket began: the rates were computed again before counting
	Untracked bool // the signature is new and the table is full: counted in the total only
}

// Count adds weight traces of sig seen at now (a trace sampled at rate r by a tracer weighs 1/r).
// A clock that went back counts in the current bucket.
func (b *Budget[K]) Count(now time.Time, sig K, weight float64) Counted {
	c := Counted{Rotated: b.advance(now.Unix() / BucketSeconds)}
	i := slot(b.bucket)
	b.all[i] += weight
	t := b.seen[sig]
	if t == nil {
		if len(b.seen) >= b.maxSignatures {
			c.Untracked = true
			return c
		}
		if b.Own != nil {
			sig = b.Own(sig)
		}
		t = new(tracked)
		b.seen[sig] = t
	}
	t.seen[i] += weight
	return c
}

// advance moves to bucket cur and computes every signature's rate from the buckets before it.
func (b *Budget[K]) advance(cur int64) bool {
	if !b.started {
		b.started, b.bucket = true, cur
		return true
	}
	if cur <= b.bucket {
		return false
	}
	sigs := make([]K, 0, len(b.seen))
	tps := make([]float64, 0, len(b.seen))
	for sig, t := range b.seen {
		sigs = append(sigs, sig)
		tps = append(tps, t.seen.advance(b.bucket, cur)/BucketSeconds)
	}
	b.all.advance(b.bucket, cur)
	b.bucket = cur
	part := fairShare(b.target, tps)
	b.lowest = 1
	for i, sig := range sigs {
		t := b.seen[sig]
		t.rate = nextRate(t.rate, part, tps[i])
		if t.rate == 1 && tps[i] == 0 {
			delete(b.seen, sig) // quiet for the whole window and unconstrained: forgotten
			continue
		}
		b.lowest = min(b.lowest, t.rate)
	}
	return true
}

// nextRate is a signature's rate for the next bucket: its part of the target over what it sent,
// at most 1, and at most maxRateIncrease × the previous rate.
func nextRate(prev, part, tps float64) float64 {
	rate := 1.0
	if tps > part {
		rate = part / tps
	}
	if prev > 0 && rate > prev*maxRateIncrease {
		rate = prev * maxRateIncrease
	}
	return min(rate, 1)
}

// fairShare splits target evenly over the signatures' traces per second; what a signature below
// its part leaves unused is split again among the busier ones. It returns the busiest one's part.
func fairShare(target float64, tps []float64) float64 {
	sorted := slices.Clone(tps)
	slices.Sort(sorted)
	left := target
	for i, v := range sorted {
		part := left / float64(len(sorted)-i)
		if v >= part || i == len(sorted)-1 {
			return part
		}
		left -= v
	}
	return target
}

// Rate is sig's sampling rate, or DefaultRate for a signature not rated yet.
func (b *Budget[K]) Rate(sig K) float64 {
	if t := b.seen[sig]; t != nil && t.rate > 0 {
		return t.rate
	}
	return b.DefaultRate()
}

// DefaultRate is the rate of signatures not rated yet: the target over all traces seen, and
// never above the lowest rate of any signature, so a new signature cannot flood the budget.
func (b *Budget[K]) DefaultRate() float64 {
	if b.target == 0 {
		return 0
	}
	rate := 1.0
	if tps := b.all.peak() / BucketSeconds; tps > b.target {
		rate = b.target / tps
	}
	return min(rate, b.lowest)
}

// Rated yields every signature that has a rate, with it, in no particular order.
func (b *Budget[K]) Rated() iter.Seq2[K, float64] {
	return func(yield func(K, float64) bool) {
		for sig, t := range b.seen {
			if t.rate > 0 && !yield(sig, t.rate) {
				return
			}
		}
	}
}

// InBucket is the weight counted for sig in the current bucket, and whether sig is tracked.
func (b *Budget[K]) InBucket(sig K) (float64, bool) {
	t := b.seen[sig]
	if t == nil {
		return 0, false
	}
	return t.seen[slot(b.bucket)], true
}

// TotalInBucket is the weight of every trace counted in the current bucket, tracked or not.
func (b *Budget[K]) TotalInBucket() float64 { return b.all[slot(b.bucket)] }

// Signatures is how many signatures are tracked.
func (b *Budget[K]) Signatures() int { return len(b.seen) }

// window holds a count per bucket, the bucket id modulo numBuckets.
type window [numBuckets]float64

func slot(id int64) int { return int((id%numBuckets + numBuckets) % numBuckets) }

// advance moves the window from bucket prev to cur (cur > prev): it returns the largest count of
// the numBuckets buckets before cur, and clears every bucket older than those, and cur's.
func (w *window) advance(prev, cur int64) float64 {
	peak := 0.0
	for id := prev - numBuckets + 1; id <= prev; id++ {
		if id >= cur-numBuckets {
			peak = max(peak, w[slot(id)])
		} else {
			w[slot(id)] = 0
		}
	}
	w[slot(cur)] = 0
	return peak
}

func (w *window) peak() float64 {
	p := 0.0
	for _, v := range w {
		p = max(p, v)
	}
	return p
}

// knuthFactor spreads consecutive trace ids over the 64-bit space; tracers and the agent use
// the same factor, so a rate keeps the same traces wherever it is applied.
const knuthFactor uint64 = 1111111111111111111

// KeepByRate reports whether the trace with this (low 64-bit) id is kept at rate.
func KeepByRate(traceID uint64, rate float64) bool {
	if rate >= 1 {
		return true
	}
	return traceID*knuthFactor < uint64(rate*math.MaxUint64)
}
