package diskqueue

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"
)

// Open locks dir, scans the segments it holds (the replay: every record without an ack entry is
// read again) and prepares a fresh active segment.
func Open(opts Options) (*Log, OpenStats, error) {
	var st OpenStats
	if opts.FS == nil {
		opts.FS = OS{}
	}
	if opts.CapacityBytes <= 0 {
		return nil, st, fmt.Errorf("capacity must be positive, got %d", opts.CapacityBytes)
	}
	if opts.SegmentBytes <= 0 {
		// At most a quarter of the capacity, so that space comes back while most of it is in use.
		opts.SegmentBytes = max(min(max(opts.CapacityBytes/16, 1<<20), 64<<20, opts.CapacityBytes/4), 1)
	}
	if err := os.MkdirAll(opts.Dir, 0o700); err != nil {
		return nil, st, fmt.Errorf("create directory %q: %w", opts.Dir, err)
	}
	lock, err := lockDir(filepath.Join(opts.Dir, "LOCK"))
	if err != nil {
		return nil, st, err
	}
	l := &Log{opts: opts, fs: opts.FS, lock: lock}
	l.cond = sync.NewCond(&l.mu)
	if err := l.load(&st); err != nil {
		if opts.Shared != nil {
			opts.Shared.used.Add(-l.total)
		}
		return nil, st, errors.Join(err, l.closeFiles(), unlockDir(lock))
	}
	if l.opts.AckSyncInterval <= 0 {
		l.opts.AckSyncInterval = time.Second
	}
	switch opts.Fsync {
	case FsyncInterval:
		l.startSyncLoop(opts.FsyncInterval)
	case FsyncAlways:
		// Appends fsync their records themselves; this only catches the acks they leave.
		l.startSyncLoop(l.opts.AckSyncInterval)
	}
	return l, st, nil
}

// load opens the existing segments (sealed), scans their headers and creates the active segment.
func (l *Log) load(st *OpenStats) error {
	ids, acks, err := l.listFiles()
	if err != nil {
		return err
	}
	for _, id := range ids {
		delete(acks, id)
		if err := l.loadSegment(id, st); err != nil {
			return err
		}
	}
	// An ack file without its segment is left over from a crash between the two deletions.
	for id := range acks {
		if err := l.fs.Remove(ackName(l.opts.Dir, id)); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("remove orphan ack file: %w", err)
		}
	}
	var next uint64 = 1
	if len(ids) > 0 {
		next = ids[len(ids)-1] + 1
	}
	if err := l.addSegment(next); err != nil {
		return err
	}
	l.rseg, l.roff = l.segs[0], l.segs[0].start
	st.Pending = l.unread
	return nil
}

// listFiles returns the ids of the segment files in the directory, ascending, and those of the
// ack files.
func (l *Log) listFiles() (segs []uint64, acks map[uint64]bool, err error) {
	entries, err := os.ReadDir(l.opts.Dir)
	if err != nil {
		return nil, nil, fmt.Errorf("list directory %q: %w", l.opts.Dir, err)
	}
	acks = map[uint64]bool{}
	for _, e := range entries {
		if id, ok := parseID(e.Name(), segSuffix); ok {
			segs = append(segs, id)
		} else if id, ok := parseID(e.Name(), ackSuffix); ok {
			acks[id] = true
		}
	}
	slices.Sort(segs)
	return segs, acks, nil
}

// loadSegment opens segment id found at Open and adds it to the log, or deletes it when it has
// nothing left to deliver.
func (l *Log) loadSegment(id uint64, st *OpenStats) error {
	corruptBefore := st.Corrupt
	seg, err := l.openSealed(id, st)
	if err != nil {
		return err
	}
	if seg.unread.Records == 0 && st.Corrupt == corruptBefore {
		// Nothing left to deliver (every record acknowledged, or none: each start creates an
		// active segment, and a process that restarts without writing leaves it empty). Kept,
		// it would never be passed by a reader with nothing to read, so a crash-looping
		// collector would pile up files. The header scan can be misled by a damaged length
		// that leads to another header: only a checksummed read proves every record is acked.
		done, err := allAcknowledged(seg)
		if err != nil {
			return errors.Join(err, seg.f.Close())
		}
		if done {
			return l.removeFiles(seg)
		}
	}
	l.segs = append(l.segs, seg)
	l.grow(seg.size)
	l.unread.add(seg.unread.Records, seg.unread.Items, seg.unread.Bytes)
	return nil
}

// openSealed opens a segment found at Open and scans its headers: what is unread (no ack entry),
// what was dispatched before the restart, and damaged regions.
func (l *Log) openSealed(id uint64, st *OpenStats) (*segment, error) {
	f, err := l.fs.OpenFile(segName(l.opts.Dir, id), os.O_RDONLY, 0)
	if err != nil {
		return nil, fmt.Errorf("open segment %d: %w", id, err)
	}
	fi, err := f.Stat()
	if err != nil {
		return nil, errors.Join(fmt.Errorf("stat segment %d: %w", id, err), f.Close())
	}
	acked, dispatched, err := loadAcks(ackName(l.opts.Dir, id))
	if err != nil {
		return nil, errors.Join(err, f.Close())
	}
	sf, err := readSegmentFormat(f, fi.Size(), segName(l.opts.Dir, id))
	if err != nil {
		return nil, errors.Join(err, f.Close())
	}
	seg := &segment{id: id, f: f, start: sf.start, size: fi.Size(), sealed: true, skip: acked, dispatched: dispatched}
	for off := seg.start; off < seg.size; {
		r, err := readAt(f, off, seg.size, readHeaderOnly)
		if err != nil {
			return nil, errors.Join(err, f.Close())
		}
		if r.corrupt {
			st.Corrupt++
		} else if _, ok := acked[off]; !ok {
			seg.unread.add(1, int64(r.hdr.items), r.next-off)
			if _, ok := dispatched[off]; ok {
				st.DuplicatesPossible++
			}
		}
		off = r.next
	}
	return seg, nil
}

// allAcknowledged reads a segment with checksums and reports whether it holds only acknowledged
// records (an empty one does), and nothing damaged.
func allAcknowledged(seg *segment) (bool, error) {
	for off := seg.start; off < seg.size; {
		if _, acked := seg.skip[off]; !acked {
			return false, nil
		}
		r, err := readAt(seg.f, off, seg.size, readAcked)
		if err != nil || r.corrupt {
			return false, err
		}
		off = r.next
	}
	return true, nil
}

// addSegment seals the active segment and creates segment id, with its header, as the new active
// one. Caller holds mu (or is in Open).
func (l *Log) addSegment(id uint64) error {
	name := segName(l.opts.Dir, id)
	f, err := l.fs.OpenFile(name, os.O_CREATE|os.O_EXCL|os.O_RDWR|os.O_APPEND, 0o600)
	if err != nil {
		return fmt.Errorf("create segment %d: %w", id, mapNoSpace(err))
	}
	if _, err := f.Write(segmentHeader[:]); err != nil {
		// Removed rather than left torn: the next attempt creates it again.
		return fmt.Errorf("create segment %d: %w", id, mapNoSpace(errors.Join(err, f.Close(), l.fs.Remove(name))))
	}
	if n := len(l.segs); n > 0 {
		l.segs[n-1].sealed = true
	}
	l.segs = append(l.segs, &segment{id: id, f: f, start: segHeaderSize, size: segHeaderSize})
	l.grow(segHeaderSize)
	l.commit.dirDirty = true
	return nil
}

// removeFiles closes a segment's files and deletes them. Segment first: a crash between the two
// removals leaves an orphan ack file (removed at Open), never a segment without its
// acknowledgements.
func (l *Log) removeFiles(seg *segment) error {
	errs := []error{seg.f.Close()}
	if seg.ack != nil {
		errs = append(errs, seg.ack.Close())
	}
	errs = append(errs, l.fs.Remove(segName(l.opts.Dir, seg.id)))
	if err := l.fs.Remove(ackName(l.opts.Dir, seg.id)); err != nil && !errors.Is(err, os.ErrNotExist) {
		errs = append(errs, err)
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("delete segment %d: %w", seg.id, err)
	}
	return nil
}

// Close syncs, closes every file and releases the directory lock. Unacknowledged records stay
// for the next Open.
func (l *Log) Close() error {
	l.stopOnce.Do(func() {
		if l.stop != nil {
			close(l.stop)
			<-l.done
		}
	})
	l.wmu.Lock()
	defer l.wmu.Unlock()
	l.rmu.Lock()
	defer l.rmu.Unlock()
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return nil
	}
	l.waitSyncIdleLocked()
	// One final sync whatever the policy: it costs one fsync per file at shutdown.
	errs := []error{l.syncLocked(syncRecordsAndAcks)}
	l.closed = true
	l.mu.Unlock()
	errs = append(errs, l.closeFiles(), unlockDir(l.lock))
	if l.opts.Shared != nil {
		l.opts.Shared.used.Add(-l.total) // the files stay, but no open log holds them now
	}
	return errors.Join(errs...)
}

func (l *Log) closeFiles() error {
	var errs []error
	for _, s := range l.segs {
		errs = append(errs, s.f.Close())
		if s.ack != nil {
			errs = append(errs, s.ack.Close())
		}
	}
	return errors.Join(errs...)
}
