package aggregate

import (
	"math"
	"math/bits"
	"slices"
)

// histogram counts durations in microseconds with at least two significant digits (below 128 µs
// exactly, above in 64 steps per power of two), as precise as the HDR histograms APM Server
// writes. Counts are weighted by the events' representative count, so they are floats until
// they are written.
type histogram map[uint32]float64

// bucketOf is the bucket index of a duration in microseconds.
func bucketOf(us int64) uint32 {
	if us < 128 {
		return uint32(max(us, 0))
	}
	shift := bits.Len64(uint64(us)) - 7 // >= 1
	return 128 + uint32(shift-1)*64 + uint32(us>>shift) - 64
}

// valueOf is the highest duration a bucket holds: the value written for it, as APM Server's
// histograms write each bucket's highest equivalent value.
func valueOf(b uint32) float64 {
	if b < 128 {
		return float64(b)
	}
	shift := (b-128)/64 + 1
	mantissa := uint64(b-128)%64 + 64
	return float64((mantissa+1)<<shift - 1)
}

func (h histogram) record(us int64, n float64) { h[bucketOf(us)] += n }

// buckets returns the non-empty buckets in ascending order, counts rounded, and their total.
func (h histogram) buckets() (total uint64, counts []uint64, values []float64) {
	keys := make([]uint32, 0, len(h))
	for b := range h {
		keys = append(keys, b)
	}
	slices.Sort(keys)
	for _, b := range keys {
		c := uint64(math.Round(h[b]))
		if c == 0 {
			continue
		}
		counts = append(counts, c)
		values = append(values, valueOf(b))
		total += c
	}
	return total, counts, values
}
