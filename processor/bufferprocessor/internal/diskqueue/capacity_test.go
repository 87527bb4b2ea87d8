package diskqueue

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSharedCapacity: two logs sharing a capacity are full together: what one holds is room the
// other cannot use, until it is delivered; closing a log gives its share back, and reopening it
// takes its files' size again.
func TestSharedCapacity(t *testing.T) {
	dir := t.TempDir()
	shared := NewSharedCapacity(4000)
	withShared := func(o *Options) { o.CapacityBytes, o.SegmentBytes, o.Shared = 4000, 500, shared }
	a, _ := open(t, filepath.Join(dir, "a"), withShared)
	b, _ := open(t, filepath.Join(dir, "b"), withShared)
	fill := func(l *Log) int {
		n := 0
		for ; ; n++ {
			if _, _, err := l.Append(payload(n), 1, time.Now(), NoClaim); err != nil {
				require.ErrorIs(t, err, ErrFull)
				return n
			}
		}
	}
	inA := fill(a)
	assert.Zero(t, fill(b), "a holds the whole capacity: b is full")
	assert.Equal(t, a.SizeBytes()+b.SizeBytes(), shared.Used())
	assert.LessOrEqual(t, shared.Used(), shared.Limit())

	// Delivering a's first segment frees room that b can take.
	recs := readAll(t, a)
	require.Len(t, recs, inA)
	require.NoError(t, a.Ack([]Pos{recs[0].Pos, recs[1].Pos, recs[2].Pos}))
	assert.Positive(t, fill(b))
	assert.LessOrEqual(t, shared.Used(), shared.Limit())

	require.NoError(t, b.Close())
	assert.Equal(t, a.SizeBytes(), shared.Used(), "a closed log holds no share")
	b, _ = open(t, filepath.Join(dir, "b"), withShared)
	assert.Equal(t, a.SizeBytes()+b.SizeBytes(), shared.Used(), "reopened, its files count again")
	require.NoError(t, a.Close())
	require.NoError(t, b.Close())
	assert.Zero(t, shared.Used())
}
