package tracelog

import (
	"errors"
	"io/fs"
	"os"
	"sync"
)

// refTable counts, per live segment file, the pending traces holding data in it. It has its own
// lock so that Ref and Unref never wait for an append's write call.
type refTable struct {
	mu       sync.Mutex
	segments map[SegmentID]*segmentRefs // every segment file not yet deleted
	current  SegmentID
	frozen   bool // set by Close: from then on nothing is deleted
}

type segmentRefs struct {
	count int
	size  int64 // bytes on disk; kept up to date from the moment the segment stops being current
}

// Ref counts one more pending trace holding data in seg. A segment already deleted, or never
// created, is ignored: there is nothing left on disk to keep.
func (l *Log) Ref(seg SegmentID) {
	l.refs.mu.Lock()
	defer l.refs.mu.Unlock()
	if s, ok := l.refs.segments[seg]; ok {
		s.count++
	}
}

// Unref counts one pending trace fewer holding data in seg, and deletes seg when that was the
// last one and seg is not the current segment. Unref below zero is the caller's bug: it is
// ignored rather than letting the count go negative, where the next Ref would not protect seg.
func (l *Log) Unref(seg SegmentID) {
	l.refs.mu.Lock()
	defer l.refs.mu.Unlock()
	s, ok := l.refs.segments[seg]
	if !ok || s.count == 0 {
		return
	}
	s.count--
	if s.count == 0 && seg != l.refs.current {
		l.deleteLocked(seg, s)
	}
}

// ReleaseUnreferenced deletes every segment other than the current one whose count is zero.
// The processor calls it once after Open, when it has Ref'd the replayed segments it keeps data
// from; later, Unref and rotation delete segments as their counts reach zero.
func (l *Log) ReleaseUnreferenced() {
	l.refs.mu.Lock()
	defer l.refs.mu.Unlock()
	for id, s := range l.refs.segments {
		if s.count == 0 && id != l.refs.current {
			l.deleteLocked(id, s)
		}
	}
}

// Segments is the number of live segment files, the current one included.
func (l *Log) Segments() int {
	l.refs.mu.Lock()
	defer l.refs.mu.Unlock()
	return len(l.refs.segments)
}

// addCurrent lists a newly created segment as the current one.
func (l *Log) addCurrent(id SegmentID) {
	l.refs.mu.Lock()
	defer l.refs.mu.Unlock()
	l.addCurrentLocked(id)
}

func (l *Log) addCurrentLocked(id SegmentID) {
	l.refs.segments[id] = &segmentRefs{size: segmentHeaderSize}
	l.refs.current = id
}

// switchCurrent makes next the current segment after a rotation away from old, which holds
// oldSize bytes and is deleted now if no pending trace references it. One critical section: an
// Unref must not delete old before its final size is recorded.
func (l *Log) switchCurrent(old SegmentID, oldSize int64, next SegmentID) {
	l.refs.mu.Lock()
	defer l.refs.mu.Unlock()
	if s, ok := l.refs.segments[old]; ok {
		s.size = oldSize
	}
	l.addCurrentLocked(next)
	if s, ok := l.refs.segments[old]; ok && s.count == 0 {
		l.deleteLocked(old, s)
	}
}

// deleteLocked removes a segment no pending trace needs. If the removal fails the segment stays
// listed, so that Size tells the truth and ReleaseUnreferenced can try again.
func (l *Log) deleteLocked(id SegmentID, s *segmentRefs) {
	if l.refs.frozen {
		return
	}
	if err := os.Remove(l.segmentPath(id)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return
	}
	delete(l.refs.segments, id)
	l.liveBytes.Add(-s.size)
	l.closeReader(id)
}

// freeze stops all deletion: segments still referenced at Close must be replayed next time.
func (t *refTable) freeze() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.frozen = true
}
