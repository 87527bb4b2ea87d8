package diskqueue

import (
	"slices"
	"time"
)

// readerAt is the reader's position as Next found it, and what it knows of the record there.
type readerAt struct {
	seg      *segment
	off, end int64
	acked    bool // acknowledged before the restart: skipped, never handed out
}

// Next returns the next unread record, or ok false when there is none right now. Corrupt records
// are skipped and counted (Options.OnCorrupt).
func (l *Log) Next() (Record, bool, error) {
	l.rmu.Lock()
	defer l.rmu.Unlock()
	for {
		at, ok, err := l.readerPosition()
		if err != nil || !ok {
			return Record{}, false, err
		}
		mode := readVerify
		if at.acked {
			mode = readAcked
		}
		r, err := readAt(at.seg.f, at.off, at.end, mode)
		if err != nil {
			return Record{}, false, err
		}
		if rec, ok := l.advance(at, r); ok {
			return rec, true, nil
		}
	}
}

// readerPosition returns where Next reads next, passing the sealed segments read to their end;
// ok false when there is nothing to read now. Caller holds rmu.
func (l *Log) readerPosition() (readerAt, bool, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for {
		if l.closed {
			return readerAt{}, false, ErrClosed
		}
		seg, off := l.rseg, l.roff
		if off < seg.size {
			_, acked := seg.skip[off] // filled at Open, read-only since
			return readerAt{seg: seg, off: off, end: seg.size, acked: acked}, true, nil
		}
		if !seg.sealed {
			return readerAt{}, false, nil
		}
		l.passReaderSegment()
	}
}

// advance moves the reader past what readAt found at at, and returns it when it is a record to
// hand out (ok); damaged regions are counted and skipped. Caller holds rmu.
func (l *Log) advance(at readerAt, r readResult) (Record, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.roff = r.next
	size := r.next - at.off
	items := int64(r.hdr.items)
	switch {
	case at.acked && r.corrupt:
		// Delivered before the restart, so nothing is lost, but the damage is counted: the
		// reader resynchronised past it.
		l.countCorruptLocked()
	case at.acked:
		// delivered before the restart: not counted as unread by Open
	case r.corrupt:
		l.countCorruptLocked()
		if r.counted {
			at.seg.unread.sub(1, items, size)
			l.unread.sub(1, items, size)
		}
	default:
		at.seg.unread.sub(1, items, size)
		l.unread.sub(1, items, size)
		at.seg.outstanding++
		return Record{
			Pos:      Pos{Seg: at.seg.id, Off: at.off},
			Payload:  r.payload,
			Items:    items,
			Size:     size,
			Enqueued: time.Unix(0, r.hdr.unixNano),
		}, true
	}
	return Record{}, false
}

// countCorruptLocked counts a damaged region a reader skipped. Caller holds mu.
func (l *Log) countCorruptLocked() {
	l.corrupt++
	if l.opts.OnCorrupt != nil {
		l.opts.OnCorrupt()
	}
}

// passReaderSegment moves the reader from its sealed segment to the next one, leaving what it
// did not read unread for good. Caller holds mu.
func (l *Log) passReaderSegment() {
	seg := l.rseg
	i := slices.Index(l.segs, seg)
	seg.passed = true
	l.unread.sub(seg.unread.Records, seg.unread.Items, seg.unread.Bytes)
	seg.unread = Counts{}
	l.rseg = l.segs[i+1]
	l.roff = l.rseg.start
	// A failed delete leaves the files for the next Open, which skips acknowledged records.
	if err := l.maybeDelete(seg); err != nil && l.opts.OnBackgroundError != nil {
		l.opts.OnBackgroundError(err)
	}
}

// readerBeforeLocked reports whether no byte of the log lies between the reader and offset off of
// seg: nothing left to read before it. Caller holds mu.
func (l *Log) readerBeforeLocked(seg *segment, off int64) bool {
	for _, s := range l.segs[slices.Index(l.segs, l.rseg):] {
		start, end := s.start, s.size
		if s == l.rseg {
			start = l.roff
		}
		if s == seg {
			end = off
		}
		if start < end {
			return false
		}
		if s == seg {
			return true
		}
	}
	return false
}
