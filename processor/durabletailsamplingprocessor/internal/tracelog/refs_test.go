package tracelog

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// assertLive checks the segment files on disk, and that Segments and Size agree with them.
func assertLive(t *testing.T, l *Log, dir string, want []SegmentID, step string) {
	t.Helper()
	assert.Equal(t, want, segmentIDs(t, dir), step)
	assert.Equal(t, len(want), l.Segments(), step)
	assert.Equal(t, diskBytes(t, dir), l.Size(), step)
}

func TestRefUnrefDeletion(t *testing.T) {
	dir := t.TempDir()
	// Every append after the first in a segment rotates, so each record has a segment to itself.
	l, _, _ := openCollecting(t, Options{Dir: dir, SegmentBytes: 1})
	appendOne := func(payload string) {
		_, err := l.Append(1, []byte(payload))
		require.NoError(t, err)
	}
	steps := []struct {
		name string
		do   func()
		want []SegmentID
	}{
		{name: "first append", do: func() { appendOne("a") }, want: []SegmentID{1}},
		{name: "referenced segment survives rotation", do: func() { l.Ref(1); appendOne("b") }, want: []SegmentID{1, 2}},
		{name: "unreferenced segment deleted at rotation", do: func() { appendOne("c") }, want: []SegmentID{1, 3}},
		{name: "last unref deletes", do: func() { l.Unref(1) }, want: []SegmentID{3}},
		{name: "current segment kept at zero", do: func() { l.Ref(3); l.Unref(3) }, want: []SegmentID{3}},
		{name: "unref below zero ignored", do: func() { l.Unref(3) }, want: []SegmentID{3}},
		// Had the count gone to -1, this Ref would leave it at 0 and rotation would delete 3.
		{name: "count did not go negative", do: func() { l.Ref(3); appendOne("d") }, want: []SegmentID{3, 4}},
		{name: "deleted segment ignored", do: func() { l.Ref(2); l.Unref(2); l.Unref(2) }, want: []SegmentID{3, 4}},
		{name: "two refs need two unrefs", do: func() { l.Ref(3); l.Unref(3) }, want: []SegmentID{3, 4}},
		{name: "then it goes", do: func() { l.Unref(3) }, want: []SegmentID{4}},
		{name: "release keeps the current segment", do: l.ReleaseUnreferenced, want: []SegmentID{4}},
	}
	for _, step := range steps {
		step.do()
		assertLive(t, l, dir, step.want, step.name)
	}
}

func TestReleaseUnreferencedAfterReplay(t *testing.T) {
	dir := t.TempDir()
	opts := Options{Dir: dir, SegmentBytes: 1, Fsync: FsyncAlways}
	first, _, _ := openCollecting(t, opts)
	want := appendAll(t, first, "a", "b", "c")
	require.NoError(t, first.Close())
	// Traces still pending at shutdown are replayed next time, whatever happens after Close.
	for _, r := range want {
		first.Unref(r.seg)
	}
	first.ReleaseUnreferenced()
	assert.Equal(t, []SegmentID{1, 2, 3}, segmentIDs(t, dir))

	l, _, got := openCollecting(t, opts)
	require.Equal(t, want, got)
	assertLive(t, l, dir, []SegmentID{1, 2, 3, 4}, "open deletes nothing")
	l.Ref(2)
	l.Ref(3)
	l.Unref(3)
	assertLive(t, l, dir, []SegmentID{1, 2, 4}, "unref of a replayed segment deletes it")
	l.ReleaseUnreferenced()
	assertLive(t, l, dir, []SegmentID{2, 4}, "release deletes the unreferenced rest")
	l.Unref(2)
	assertLive(t, l, dir, []SegmentID{4}, "last unref")
}

func TestSizeFollowsAppends(t *testing.T) {
	dir := t.TempDir()
	l, _, _ := openCollecting(t, Options{Dir: dir, SegmentBytes: 64})
	for i, p := range numbered(10) {
		seg, err := l.Append(1, []byte(p))
		require.NoError(t, err)
		l.Ref(seg)
		assert.Equal(t, diskBytes(t, dir), l.Size(), "after append %d", i)
	}
	assert.Equal(t, len(segmentIDs(t, dir)), l.Segments())
}

// ReadAt reads back what AppendPartsAt wrote, from the current and from a rotated segment, and
// a deleted segment's handle is gone with it.
func TestReadAtAppendedPayloads(t *testing.T) {
	l, _, err := Open(Options{Dir: t.TempDir(), SegmentBytes: 64}, nil)
	require.NoError(t, err)
	defer l.Close()
	first, at1, err := l.AppendPartsAt(1, []byte("head-"), []byte("of-the-first"))
	require.NoError(t, err)
	l.Ref(first)
	second, at2, err := l.AppendPartsAt(1, bytes.Repeat([]byte("x"), 80)) // rotates
	require.NoError(t, err)
	require.NotEqual(t, first, second)

	got := make([]byte, len("of-the-first"))
	require.NoError(t, l.ReadAt(first, at1+int64(len("head-")), got))
	assert.Equal(t, "of-the-first", string(got))
	got = make([]byte, 80)
	require.NoError(t, l.ReadAt(second, at2, got))
	assert.Equal(t, bytes.Repeat([]byte("x"), 80), got)

	l.Unref(first) // deleted: not current, no reference
	assert.Error(t, l.ReadAt(first, at1, make([]byte, 1)))
}
