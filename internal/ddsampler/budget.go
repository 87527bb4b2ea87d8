// Package ddsampler holds the Datadog agent's sampling arithmetic, written from its documented
// behaviour: a budget of kept traces per second spread over signatures, and the decision by rate on
// a trace id that tracers and agents share so that they agree.
package ddsampler

import (
	"maps"
	"math"
	"slices"
	"time"
)

// The agent's constants: traces are counted in 6 buckets of 5 s; on each new bucket the rates are
// recomputed from each signature's busiest bucket, and a rate rises by at most 20 % at a time.
const (
	bucketSeconds   = 5
	numBuckets      = 6
	maxRateIncrease = 1.2
)

// Budget spreads a target number of kept traces per second over signatures (a service and env,
// or a trace's shape): a signature seen below its fair share keeps everything, and what it
// leaves unused is shared by the busier ones. Not safe for concurrent use.
type Budget struct {
	target        float64
	maxSignatures int
	seen          map[uint64]*[numBuckets]float64
	all           [numBuckets]float64
	lastBucket    int64
	rates         map[uint64]float64
	lowest        float64
	overflow      int64
}

// NewBudget returns a budget of targetTPS kept traces per second over at most maxSignatures
// signatures; the signatures beyond it are counted as overflow and given the default rate.
func NewBudget(targetTPS float64, maxSignatures int) *Budget {
	return &Budget{
		target: targetTPS, maxSignatures: maxSignatures,
		seen: map[uint64]*[numBuckets]float64{}, rates: map[uint64]float64{}, lowest: 1,
	}
}

// Count adds weight traces of sig seen at now (a trace sampled at rate r by the tracer weighs
// 1/r). It returns true when the rates were recomputed, which happens on each new 5 s bucket.
func (b *Budget) Count(now time.Time, sig uint64, weight float64) bool {
	bucket := now.Unix() / bucketSeconds
	rotated := bucket != b.lastBucket
	if rotated {
		b.rotate(b.lastBucket, bucket)
		b.lastBucket = bucket
	}
	counts, ok := b.seen[sig]
	if !ok {
		if len(b.seen) >= b.maxSignatures {
			b.overflow++
			b.all[bucket%numBuckets] += weight
			return rotated
		}
		counts = new([numBuckets]float64)
		b.seen[sig] = counts
	}
	counts[bucket%numBuckets] += weight
	b.all[bucket%numBuckets] += weight
	return rotated
}

// rotate clears the buckets that elapsed between prev and cur and recomputes every rate from
// each signature's busiest remaining bucket.
func (b *Budget) rotate(prev, cur int64) {
	if len(b.seen) == 0 {
		b.all = [numBuckets]float64{}
		return
	}
	sigs := make([]uint64, 0, len(b.seen))
	tps := make([]float64, 0, len(b.seen))
	for sig, counts := range b.seen {
		sigs = append(sigs, sig)
		tps = append(tps, peakAndClear(counts, prev, cur)/bucketSeconds)
	}
	peakAndClear(&b.all, prev, cur)
	share := fairShare(b.target, tps)
	rates := make(map[uint64]float64, len(sigs))
	b.lowest = 1
	for i, sig := range sigs {
		rate := 1.0
		if tps[i] > share {
			rate = share / tps[i]
		}
		if old, ok := b.rates[sig]; ok && old > 0 && rate > old*maxRateIncrease {
			rate = old * maxRateIncrease
		}
		rate = math.Min(rate, 1)
		if rate == 1 && tps[i] == 0 {
			delete(b.seen, sig) // quiet for 30 s: forgotten
			continue
		}
		b.lowest = math.Min(b.lowest, rate)
		rates[sig] = rate
	}
	b.rates = rates
}

// peakAndClear returns the largest count among the buckets still in the window after cur began,
// clearing the buckets that left it and the one cur reuses.
func peakAndClear(counts *[numBuckets]float64, prev, cur int64) float64 {
	peak := 0.0
	for i := prev + 1; i <= prev+numBuckets; i++ {
		idx := i % numBuckets
		if i < cur {
			counts[idx] = 0
			continue
		}
		peak = math.Max(peak, counts[idx])
		if i == cur {
			counts[idx] = 0
		}
	}
	return peak
}

// fairShare is the traces per second each busy signature may keep: target split evenly, where
// a signature below its share gives what it does not use to the others.
func fairShare(target float64, tps []float64) float64 {
	sorted := slices.Clone(tps)
	slices.Sort(sorted)
	share := target / float64(len(sorted))
	for i, c := range sorted {
		if c >= share || i == len(sorted)-1 {
			break
		}
		target -= c
		share = target / float64(len(sorted)-i-1)
	}
	return share
}

// Rate is sig's sampling rate, or DefaultRate for a signature not rated yet.
func (b *Budget) Rate(sig uint64) float64 {
	if r, ok := b.rates[sig]; ok {
		return r
	}
	return b.DefaultRate()
}

// DefaultRate is the rate of signatures not rated yet: the target over all traces seen, and
// never above the lowest rate of any signature, so a new signature cannot flood the budget.
func (b *Budget) DefaultRate() float64 {
	if b.target == 0 {
		return 0
	}
	peak := 0.0
	for _, c := range b.all {
		peak = math.Max(peak, c)
	}
	rate := 1.0
	if tps := peak / bucketSeconds; tps > b.target {
		rate = b.target / tps
	}
	if b.lowest > 0 && b.lowest < rate {
		return b.lowest
	}
	return rate
}

// Rates returns a copy of every rated signature's rate.
func (b *Budget) Rates() map[uint64]float64 {
	out := make(map[uint64]float64, len(b.rates))
	maps.Copy(out, b.rates)
	return out
}

// Signatures is how many signatures are tracked; Overflow how many counts found the table full.
func (b *Budget) Signatures() int { return len(b.seen) }
func (b *Budget) Overflow() int64 { return b.overflow }

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
