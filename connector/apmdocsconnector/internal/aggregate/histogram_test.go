package aggregate

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestHistogramPrecision(t *testing.T) {
	for _, us := range []int64{0, 1, 127, 128, 129, 255, 256, 1000, 12345, 999_999, 3_600_000_000, math.MaxInt64 / 2} {
		b := bucketOf(us)
		v := valueOf(b)
		assert.GreaterOrEqual(t, v, float64(us), us)
		assert.LessOrEqual(t, (v-float64(us))/math.Max(float64(us), 1), 0.016, "two significant digits for %d", us)
		if us > 0 {
			assert.GreaterOrEqual(t, b, bucketOf(us-1), "monotonic at %d", us)
		}
	}
	assert.Equal(t, uint32(0), bucketOf(-5))
}

func TestHistogramBuckets(t *testing.T) {
	h := histogram{}
	h.record(1000, 1)
	h.record(1001, 2)
	h.record(50, 0.4) // rounds to nothing
	h.record(20, 1.6)
	total, counts, values := h.buckets()
	assert.Equal(t, uint64(5), total)
	assert.Equal(t, []uint64{2, 3}, counts)
	assert.Equal(t, []float64{20, valueOf(bucketOf(1000))}, values)
}
