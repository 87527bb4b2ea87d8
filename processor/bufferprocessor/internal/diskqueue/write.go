package diskqueue

import (
	"errors"
	"fmt"
	"syscall"
	"time"
)

// appendOptions are how one append differs from a plain one.
type appendOptions struct {
	claim Claim
	// beyondCapacity lets the record exceed CapacityBytes (only the file system's space limits it).
	beyondCapacity bool
}

// pending is a record on its way to disk.
type pending struct {
	payload  []byte
	items    int64
	enqueued time.Time
	size     int64 // encoded size, header included
}

// written is where an append put its record.
type written struct {
	pos     Pos
	claimed bool   // handed to the caller rather than left for Next
	seq     uint64 // the write's number, for the group commit (commit.go)
}

// Append writes one record. With ClaimIfNext and nothing unread before it, the record is handed
// out at once (claimed: the caller keeps it in memory and must Ack it) instead of being left for
// Next. It returns after the record is written and, with FsyncAlways, synced.
func (l *Log) Append(payload []byte, items int64, enqueued time.Time, claim Claim) (Pos, bool, error) {
	return l.append(payload, items, enqueued, appendOptions{claim: claim})
}

// AppendBeyondCapacity writes one record even when the log is at its capacity (only the file
// system's own space limits it). It is for shutdown, when the alternative is losing acknowledged
// data held in memory: the caller bounds what it writes this way (its memory queue).
func (l *Log) AppendBeyondCapacity(payload []byte, items int64, enqueued time.Time) error {
	_, _, err := l.append(payload, items, enqueued, appendOptions{beyondCapacity: true})
	return err
}

func (l *Log) append(payload []byte, items int64, enqueued time.Time, opts appendOptions) (Pos, bool, error) {
	rec := pending{payload: payload, items: items, enqueued: enqueued, size: int64(headerSize + len(payload))}
	if len(payload) == 0 {
		return Pos{}, false, errors.New("empty record")
	}
	if len(payload) > maxRecordBytes || (rec.size+segHeaderSize > l.opts.CapacityBytes && !opts.beyondCapacity) {
		return Pos{}, false, fmt.Errorf("%w: %d bytes", ErrTooLarge, rec.size)
	}
	l.wmu.Lock()
	w, err := l.write(rec, opts)
	l.wmu.Unlock()
	if err != nil {
		return Pos{}, false, err
	}
	if l.opts.Fsync == FsyncAlways {
		if err := l.waitSynced(w.seq); err != nil {
			return w.pos, w.claimed, err
		}
	}
	return w.pos, w.claimed, nil
}

// write appends under wmu: mu is held only around bookkeeping, not during the write itself.
func (l *Log) write(rec pending, opts appendOptions) (written, error) {
	act, off, err := l.reserve(rec, opts)
	if err != nil {
		return written{}, err
	}
	if err := l.writeRecord(act.f, rec.payload, uint32(rec.items), rec.enqueued.UnixNano()); err != nil {
		return written{}, l.rollBack(act, off, err)
	}

	l.mu.Lock()
	defer l.mu.Unlock()
	act.size += rec.size
	act.dirty = true
	l.grow(rec.size)
	l.commit.writeSeq++
	l.commit.writing = 0
	w := written{pos: Pos{Seg: act.id, Off: off}, seq: l.commit.writeSeq}
	if opts.claim == ClaimIfNext && l.claimLocked(act, off, rec.size) {
		w.claimed = true
		return w, nil
	}
	act.unread.add(1, rec.items, rec.size)
	l.unread.add(1, rec.items, rec.size)
	return w, nil
}

// reserve is an append's bookkeeping before its write: the capacity check, and a new active
// segment when the record does not fit in this one. It returns where the record goes. Caller
// holds wmu.
func (l *Log) reserve(rec pending, opts appendOptions) (*segment, int64, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return nil, 0, ErrClosed
	}
	if l.exceeds(l.spaceFor(rec.size)) && !opts.beyondCapacity {
		if err := l.reclaimActiveLocked(); err != nil || l.exceeds(l.spaceFor(rec.size)) {
			return nil, 0, errors.Join(ErrFull, err)
		}
	}
	act := l.segs[len(l.segs)-1]
	if l.needsSegment(rec.size) {
		if err := l.addSegment(act.id + 1); err != nil {
			return nil, 0, err
		}
		act = l.segs[len(l.segs)-1]
	}
	l.commit.writing = 1 // seen by a failing fsync meanwhile (syncLocked)
	return act, act.size, nil
}

// needsSegment reports whether a record of size bytes goes into a new segment: it does not fit in
// the active one, which holds records already. Caller holds mu.
func (l *Log) needsSegment(size int64) bool {
	act := l.segs[len(l.segs)-1]
	return act.size > act.start && act.size+size > l.opts.SegmentBytes
}

// spaceFor is what appending a record of size bytes adds to the segment files: the record, and
// the header of the new segment it needs, if any. Caller holds mu.
func (l *Log) spaceFor(size int64) int64 {
	if l.needsSegment(size) {
		return size + segHeaderSize
	}
	return size
}

// rollBack undoes a partial write so the next record starts at a clean offset. If that fails
// too, it seals the segment: readers stop at act.size, before the damage. Caller holds wmu.
func (l *Log) rollBack(act *segment, off int64, err error) error {
	terr := act.f.Truncate(off)
	l.mu.Lock()
	l.commit.writing = 0
	var aerr error
	if terr != nil {
		aerr = l.addSegment(act.id + 1)
	}
	l.mu.Unlock()
	if terr != nil {
		err = errors.Join(err, terr, aerr)
	}
	return fmt.Errorf("append record: %w", mapNoSpace(err))
}

// claimLocked hands the record just written at off of act to its writer, when the reader is idle
// (TryLock) and stands right before it: then it is the next one the reader would return, and
// moving the reader past it keeps the log's order. The position decides, not the unread counts:
// after damage the Open scan may have counted fewer records than the reader finds, and passing
// them would lose them without a trace. Caller holds wmu and mu.
func (l *Log) claimLocked(act *segment, off, size int64) bool {
	if !l.rmu.TryLock() {
		return false
	}
	defer l.rmu.Unlock()
	if !l.readerBeforeLocked(act, off) {
		return false
	}
	for l.rseg != act {
		l.passReaderSegment()
	}
	l.roff = off + size
	act.outstanding++
	return true
}

// reclaimActiveLocked frees the active segment when the reader is at its end and every record in
// it was acknowledged. Only sealed segments are ever deleted, so without this a log whose space
// is mostly the active segment (a small capacity, or one record nearly as large) would stay full
// after everything in it was delivered. Caller holds wmu and mu.
func (l *Log) reclaimActiveLocked() error {
	act := l.segs[len(l.segs)-1]
	if act.size == act.start || l.rseg != act || l.roff < act.size || act.outstanding > 0 {
		return nil
	}
	if err := l.addSegment(act.id + 1); err != nil { // seals act
		return err
	}
	l.passReaderSegment() // deletes act: sealed, passed, nothing outstanding
	return nil
}

// copyBelow: records with a smaller payload are copied behind their header and written with one
// write; larger ones are written as header then payload, which saves copying the payload (a
// syscall costs less than copying 64 KiB). The bytes on disk are the same.
const copyBelow = 64 << 10

// writeRecord writes one encoded record at the end of f. Caller holds wmu. On error part of the
// record may have been written; the caller rolls it back.
func (l *Log) writeRecord(f File, payload []byte, items uint32, unixNano int64) error {
	if len(payload) < copyBelow {
		l.wbuf = appendRecord(l.wbuf[:0], payload, items, unixNano)
		_, err := f.Write(l.wbuf)
		return err
	}
	l.hbuf = encodeHeader(payload, items, unixNano)
	if _, err := f.Write(l.hbuf[:]); err != nil {
		return err
	}
	_, err := f.Write(payload)
	return err
}

// mapNoSpace wraps out-of-space errors in ErrFull so callers treat them like a full buffer.
func mapNoSpace(err error) error {
	if errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT) {
		return fmt.Errorf("%w: %w", ErrFull, err)
	}
	return err
}
