package diskqueue

import (
	"errors"
	"fmt"
	"os"
	"slices"
)

// MarkDispatched records that these records are about to be handed to the next consumer, so that
// a restart can count them as possible duplicates.
func (l *Log) MarkDispatched(ps []Pos) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	var errs []error
	for _, p := range ps {
		if seg := l.segByID(p.Seg); seg != nil {
			errs = append(errs, l.writeAck(seg, p.Off, kindDispatch))
		}
	}
	return errors.Join(errs...)
}

// Ack releases records handed out by Next or a claiming Append: they were delivered or dropped
// and must not be read again after a restart.
func (l *Log) Ack(ps []Pos) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return ErrClosed
	}
	var errs []error
	for _, p := range ps {
		seg := l.segByID(p.Seg)
		if seg == nil {
			continue
		}
		seg.outstanding--
		if seg.sealed && seg.passed && seg.outstanding <= 0 {
			errs = append(errs, l.maybeDelete(seg)) // the ack entry is moot: the whole segment goes
			continue
		}
		errs = append(errs, l.writeAck(seg, p.Off, kindAcked))
	}
	return errors.Join(errs...)
}

// segByID finds a live segment. Caller holds mu.
func (l *Log) segByID(id uint64) *segment {
	i, ok := slices.BinarySearchFunc(l.segs, id, func(s *segment, id uint64) int {
		switch {
		case s.id < id:
			return -1
		case s.id > id:
			return 1
		}
		return 0
	})
	if !ok {
		return nil
	}
	return l.segs[i]
}

// writeAck appends one ack entry. Caller holds mu. The entry is 16 bytes in the page cache;
// fsync follows the policy through ackDirty.
func (l *Log) writeAck(seg *segment, off int64, kind byte) error {
	if seg.ack == nil {
		f, err := l.fs.OpenFile(ackName(l.opts.Dir, seg.id), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
		if err != nil {
			return fmt.Errorf("open ack file: %w", err)
		}
		seg.ack = f
		l.commit.dirDirty = true
	}
	if _, err := seg.ack.Write(encodeAck(off, kind)); err != nil {
		return fmt.Errorf("write ack entry: %w", err)
	}
	seg.ackDirty = true
	return nil
}

// maybeDelete removes a segment that is sealed, fully read and fully acknowledged. Caller holds mu.
func (l *Log) maybeDelete(seg *segment) error {
	if !seg.sealed || !seg.passed || seg.outstanding > 0 {
		return nil
	}
	i := slices.Index(l.segs, seg)
	if i < 0 {
		return nil
	}
	l.segs = slices.Delete(l.segs, i, i+1)
	l.grow(-seg.size)
	return l.removeFiles(seg)
}

// DropOldest skips the unread records of the oldest segment that has any, so their space is
// reclaimed once its in-flight records are acknowledged. It returns what was dropped and whether
// anything changed (false: nothing left to drop on disk).
func (l *Log) DropOldest() (Counts, bool, error) {
	// All three locks, in order: an append between its bookkeeping and its write must not see its
	// segment sealed, passed and deleted under it, or its record would be written into a file the
	// reader never visits again, or one already removed.
	l.wmu.Lock()
	defer l.wmu.Unlock()
	l.rmu.Lock()
	defer l.rmu.Unlock()
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return Counts{}, false, ErrClosed
	}
	seg := l.rseg
	if !seg.sealed {
		if l.roff >= seg.size {
			return Counts{}, false, nil
		}
		if err := l.addSegment(seg.id + 1); err != nil {
			return Counts{}, false, err
		}
	}
	dropped := seg.unread
	l.passReaderSegment()
	return dropped, true, nil
}
