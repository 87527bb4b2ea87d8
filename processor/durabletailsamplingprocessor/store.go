package durabletailsamplingprocessor

import (
	"slices"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/tracegate/tracegate/processor/durabletailsamplingprocessor/internal/policy"
	"github.com/tracegate/tracegate/processor/durabletailsamplingprocessor/internal/tracelog"
)

// pendingTrace is one trace waiting for its decision, or (kept) for its delivery: its fragments
// encoded, and what the policies observed of them.
type pendingTrace struct {
	id    pcommon.TraceID
	frags []heldFragment
	obs   policy.Observation
	count int64
	// bytes is what the trace holds in memory: the encodings not on disk.
	bytes       int64
	first, last time.Time
	// segs are the disk log segments holding its spans, each referenced once by this trace.
	segs []tracelog.SegmentID
	// The store's list, least recently updated first.
	prev, next *pendingTrace
}

// pendingStore indexes the traces waiting for a decision, in order of their last update, so that
// the due ones are found at the head without scanning.
type pendingStore struct {
	traces     map[pcommon.TraceID]*pendingTrace
	head, tail *pendingTrace
	spans      int64
	bytes      int64
}

func newPendingStore(expected int) *pendingStore {
	return &pendingStore{traces: make(map[pcommon.TraceID]*pendingTrace, expected)}
}

// add merges a fragment into its trace (created if new) and moves that trace to the list's tail.
// It reports a new reference to the fragment's log segment that the caller must take.
func (s *pendingStore) add(f *fragment, now time.Time) (newRef bool) {
	t := s.traces[f.id]
	if t == nil {
		t = &pendingTrace{id: f.id, obs: f.obs, first: now}
		s.traces[f.id] = t
	} else {
		s.unlink(t)
		t.obs.Merge(f.obs)
	}
	h := f.held()
	t.frags = append(t.frags, h)
	bytes := int64(len(h.data))
	t.count += f.count
	t.bytes += bytes
	t.last = now
	s.spans += f.count
	s.bytes += bytes
	s.pushBack(t)
	if f.onDisk && !slices.Contains(t.segs, f.seg) {
		t.segs = append(t.segs, f.seg)
		return true
	}
	return false
}

// remove takes a trace out of the store (its decision is being made).
func (s *pendingStore) remove(t *pendingTrace) {
	s.unlink(t)
	delete(s.traces, t.id)
	s.spans -= t.count
	s.bytes -= t.bytes
}

// due removes and returns the traces whose last span is at least wait old, plus, when scan is
// set, those whose first span is at least maxWait old.
func (s *pendingStore) due(now time.Time, wait, maxWait time.Duration, scan bool) []*pendingTrace {
	var out []*pendingTrace
	for t := s.head; t != nil && now.Sub(t.last) >= wait; t = s.head {
		s.remove(t)
		out = append(out, t)
	}
	if scan {
		for t := s.head; t != nil; {
			next := t.next
			if now.Sub(t.first) >= maxWait {
				s.remove(t)
				out = append(out, t)
			}
			t = next
		}
	}
	return out
}

// all removes and returns every trace (shutdown).
func (s *pendingStore) all() []*pendingTrace {
	out := make([]*pendingTrace, 0, len(s.traces))
	for t := s.head; t != nil; t = s.head {
		s.remove(t)
		out = append(out, t)
	}
	return out
}

func (s *pendingStore) pushBack(t *pendingTrace) {
	t.prev, t.next = s.tail, nil
	if s.tail != nil {
		s.tail.next = t
	} else {
		s.head = t
	}
	s.tail = t
}

func (s *pendingStore) unlink(t *pendingTrace) {
	if t.prev != nil {
		t.prev.next = t.next
	} else if s.head == t {
		s.head = t.next
	}
	if t.next != nil {
		t.next.prev = t.prev
	} else if s.tail == t {
		s.tail = t.prev
	}
	t.prev, t.next = nil, nil
}
