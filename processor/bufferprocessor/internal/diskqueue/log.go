// Package diskqueue is an append-only, segmented log of checksummed records with out-of-order
// acknowledgements, built for the buffer processor's at-least-once delivery.
//
// Layout of the directory: LOCK (flock, one owner at a time), NNNNNNNNNNNNNNNN.seg (records, see
// record.go) and NNNNNNNNNNNNNNNN.ack (16-byte entries: record offset, kind, CRC). A segment and its
// ack file are deleted once the segment is sealed, fully read and every record read from it was
// acknowledged. After a restart every record without an ack entry is read again.
package diskqueue // import "github.com/tracegate/tracegate/processor/bufferprocessor/internal/diskqueue"

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sync"
	"syscall"
	"time"
)

// FsyncPolicy says when written records are forced to stable storage.
type FsyncPolicy int

const (
	// FsyncAlways: Append returns once the record is fsynced. Concurrent appends share one fsync
	// (group commit).
	FsyncAlways FsyncPolicy = iota
	// FsyncInterval: Append returns once the record is in the OS page cache; a background loop
	// fsyncs everything written every Options.FsyncInterval.
	FsyncInterval
	// FsyncNever leaves flushing to the OS (Close still syncs once).
	FsyncNever
)

var (
	// ErrFull reports that the record does not fit in the configured capacity or that the file
	// system is out of space (ENOSPC, EDQUOT).
	ErrFull = errors.New("disk buffer is full")
	// ErrTooLarge reports a record that could never fit, whatever is deleted.
	ErrTooLarge = errors.New("record larger than the disk buffer")
	// ErrClosed reports use after Close.
	ErrClosed = errors.New("disk buffer is closed")
)

// Options configure a Log.
type Options struct {
	Dir           string
	CapacityBytes int64
	// SegmentBytes is the size at which a segment is sealed; 0 picks capacity/16 within [1 MiB, 64 MiB],
	// and at most capacity/4.
	// Space is reclaimed a whole segment at a time, so it bounds the granularity of drop_oldest.
	SegmentBytes  int64
	Fsync         FsyncPolicy
	FsyncInterval time.Duration
	// AckSyncInterval (FsyncAlways): how often the records of what was delivered are fsynced,
	// by the appends that run anyway and by a background loop when none do (a backlog drained
	// while clients are idle). After a power failure at most about this much delivery is sent
	// again. Default 1 s.
	AckSyncInterval time.Duration
	// FS defaults to OS; tests inject write failures through it.
	FS FS
	// OnBackgroundError is told about failures no caller gets an error for: background fsyncs
	// (FsyncInterval, and FsyncAlways's ack sync) and deleting a segment the reader left behind
	// (its files then stay on disk until the next Open). Called with internal locks held; may be nil.
	OnBackgroundError func(error)
	// OnCorrupt is called (with internal locks held: keep it cheap) for each damaged region a
	// reader skips; may be nil.
	OnCorrupt func()
}

// Pos identifies a record.
type Pos struct {
	Seg uint64
	Off int64
}

// Record is a record read from the log.
type Record struct {
	Pos      Pos
	Payload  []byte
	Spans    int64
	Size     int64 // encoded size, header included
	Enqueued time.Time
}

// OpenStats describe what Open found.
type OpenStats struct {
	// Pending are the records (without an ack entry) that will be read again.
	Pending Counts
	// DuplicatesPossible are pending records that had been handed to a worker before the restart:
	// the next consumer may already have them.
	DuplicatesPossible int64
	// Corrupt counts damaged regions found by the header scan.
	Corrupt int64
}

// Log is the disk log. All methods are safe for concurrent use.
type Log struct {
	opts Options
	fs   FS
	lock *os.File

	wmu  sync.Mutex // serialises appends (write I/O)
	rmu  sync.Mutex // serialises reads (read I/O)
	mu   sync.Mutex // protects the fields below
	cond *sync.Cond // group commit waiters

	segs    []*segment // ordered by id; the last one is the active (appendable) segment
	rseg    *segment   // reader position
	roff    int64
	unread  Counts
	total   int64 // bytes in segment files
	corrupt int64 // damaged regions skipped by readers
	closed  bool

	writeSeq, syncedSeq uint64
	// attemptedSeq is the highest write covered by any fsync so far, successful or not.
	attemptedSeq uint64
	// failed are the writes whose first fsync failed, most recent last (see failedFor).
	failed []failedSync
	// writing is 1 while an append is between its bookkeeping and its write's completion.
	writing uint64
	// forgottenTo: failures up to this write were forgotten (maxFailedSyncs); writes up to it
	// are all reported as failed, the durable ones among them too.
	forgottenTo  uint64
	syncing      bool
	gathering    bool // a group commit's leader lets the other appends write first (waitSynced)
	dirDirty     bool
	acksSyncedAt time.Time // the last fsync that included the ack files

	wbuf     []byte           // small records are encoded here (under wmu)
	hbuf     [headerSize]byte // the header of a large record (under wmu; a field, not escaping per call)
	stopOnce sync.Once
	stop     chan struct{}
	done     chan struct{}
}

// Open locks dir, scans the segments it holds and prepares a fresh active segment.
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
		return nil, st, errors.Join(err, l.closeFiles(), unlockDir(lock))
	}
	if l.opts.AckSyncInterval <= 0 {
		l.opts.AckSyncInterval = time.Second
	}
	switch opts.Fsync {
	case FsyncInterval:
		l.stop, l.done = make(chan struct{}), make(chan struct{})
		go l.syncLoop(opts.FsyncInterval)
	case FsyncAlways:
		// Appends fsync their records themselves; this only catches the acks they leave.
		l.stop, l.done = make(chan struct{}), make(chan struct{})
		go l.syncLoop(l.opts.AckSyncInterval)
	}
	return l, st, nil
}

// load opens the existing segments (sealed), scans their headers and creates the active segment.
func (l *Log) load(st *OpenStats) error {
	entries, err := os.ReadDir(l.opts.Dir)
	if err != nil {
		return fmt.Errorf("list directory %q: %w", l.opts.Dir, err)
	}
	var ids []uint64
	acks := map[uint64]bool{}
	for _, e := range entries {
		if id, ok := parseID(e.Name(), segSuffix); ok {
			ids = append(ids, id)
		} else if id, ok := parseID(e.Name(), ackSuffix); ok {
			acks[id] = true
		}
	}
	slices.Sort(ids)
	for _, id := range ids {
		delete(acks, id)
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
				if err := l.removeFiles(seg); err != nil {
					return err
				}
				continue
			}
		}
		l.segs = append(l.segs, seg)
		l.total += seg.size
		l.unread.add(seg.unread.Records, seg.unread.Spans, seg.unread.Bytes)
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
	l.rseg = l.segs[0]
	st.Pending = l.unread
	return nil
}

// allAcknowledged reads a segment with checksums and reports whether it holds only acknowledged
// records (an empty one does), and nothing damaged.
func allAcknowledged(seg *segment) (bool, error) {
	for off := int64(0); off < seg.size; {
		if _, acked := seg.skip[off]; !acked {
			return false, nil
		}
		r, err := readAt(seg.f, off, seg.size, true, true)
		if err != nil || r.corrupt {
			return false, err
		}
		off = r.next
	}
	return true, nil
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
	seg := &segment{id: id, f: f, size: fi.Size(), sealed: true, skip: acked, dispatched: dispatched}
	for off := int64(0); off < seg.size; {
		r, err := readAt(f, off, seg.size, false, false)
		if err != nil {
			return nil, errors.Join(err, f.Close())
		}
		if r.corrupt {
			st.Corrupt++
		} else if _, ok := acked[off]; !ok {
			seg.unread.add(1, int64(r.hdr.spans), r.next-off)
			if _, ok := dispatched[off]; ok {
				st.DuplicatesPossible++
			}
		}
		off = r.next
	}
	return seg, nil
}

// addSegment seals the active segment and creates segment id as the new active one. Caller holds
// mu (or is in Open).
func (l *Log) addSegment(id uint64) error {
	f, err := l.fs.OpenFile(segName(l.opts.Dir, id), os.O_CREATE|os.O_EXCL|os.O_RDWR|os.O_APPEND, 0o600)
	if err != nil {
		return fmt.Errorf("create segment %d: %w", id, mapNoSpace(err))
	}
	if n := len(l.segs); n > 0 {
		l.segs[n-1].sealed = true
	}
	l.segs = append(l.segs, &segment{id: id, f: f})
	l.dirDirty = true
	return nil
}

// mapNoSpace wraps out-of-space errors in ErrFull so callers treat them like a full buffer.
func mapNoSpace(err error) error {
	if errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT) {
		return fmt.Errorf("%w: %w", ErrFull, err)
	}
	return err
}

// Append writes one record. With claim true and nothing unread on disk, the record is handed
// out at once (claimed: the caller keeps it in memory and must Ack it) instead of being left for
// Next. It returns after the record is written and, with FsyncAlways, synced.
func (l *Log) Append(payload []byte, spans int64, enqueued time.Time, claim bool) (Pos, bool, error) {
	return l.append(payload, spans, enqueued, claim, false)
}

// AppendBeyondCapacity writes one record even when the log is at its capacity (only the file
// system's own space limits it). It is for shutdown, when the alternative is losing acknowledged
// data held in memory: the caller bounds what it writes this way (its memory queue).
func (l *Log) AppendBeyondCapacity(payload []byte, spans int64, enqueued time.Time) error {
	_, _, err := l.append(payload, spans, enqueued, false, true)
	return err
}

func (l *Log) append(payload []byte, spans int64, enqueued time.Time, claim, beyondCapacity bool) (Pos, bool, error) {
	recSize := int64(headerSize + len(payload))
	if len(payload) == 0 {
		return Pos{}, false, errors.New("empty record")
	}
	if len(payload) > MaxRecordBytes || (recSize > l.opts.CapacityBytes && !beyondCapacity) {
		return Pos{}, false, fmt.Errorf("%w: %d bytes", ErrTooLarge, recSize)
	}
	l.wmu.Lock()
	pos, claimed, seq, err := l.write(payload, spans, enqueued, claim, recSize, beyondCapacity)
	l.wmu.Unlock()
	if err != nil {
		return Pos{}, false, err
	}
	if l.opts.Fsync == FsyncAlways {
		if err := l.waitSynced(seq); err != nil {
			return pos, claimed, err
		}
	}
	return pos, claimed, nil
}

// write appends under wmu: mu is held only around bookkeeping, not during the write itself.
func (l *Log) write(payload []byte, spans int64, enqueued time.Time, claim bool, recSize int64, beyondCapacity bool) (Pos, bool, uint64, error) {
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return Pos{}, false, 0, ErrClosed
	}
	if l.total+recSize > l.opts.CapacityBytes && !beyondCapacity {
		if err := l.reclaimActiveLocked(); err != nil || l.total+recSize > l.opts.CapacityBytes {
			l.mu.Unlock()
			return Pos{}, false, 0, errors.Join(ErrFull, err)
		}
	}
	act := l.segs[len(l.segs)-1]
	if act.size > 0 && act.size+recSize > l.opts.SegmentBytes {
		if err := l.addSegment(act.id + 1); err != nil {
			l.mu.Unlock()
			return Pos{}, false, 0, err
		}
		act = l.segs[len(l.segs)-1]
	}
	off := act.size
	l.writing = 1 // seen by a failing fsync meanwhile (syncLocked)
	l.mu.Unlock()

	if err := l.writeRecord(act.f, payload, uint32(spans), enqueued.UnixNano()); err != nil { //nolint:gosec // span counts fit
		// Roll back a partial write so the next record starts at a clean offset. If that fails
		// too, seal the segment: readers stop at act.size, before the damage.
		terr := act.f.Truncate(off)
		l.mu.Lock()
		l.writing = 0
		var aerr error
		if terr != nil {
			aerr = l.addSegment(act.id + 1)
		}
		l.mu.Unlock()
		if terr != nil {
			err = errors.Join(err, terr, aerr)
		}
		return Pos{}, false, 0, fmt.Errorf("append record: %w", mapNoSpace(err))
	}

	l.mu.Lock()
	defer l.mu.Unlock()
	act.size += recSize
	act.dirty = true
	l.total += recSize
	l.writeSeq++
	l.writing = 0
	pos := Pos{Seg: act.id, Off: off}
	// Claim only when the reader is idle (TryLock) and stands right before the record: then it is
	// the next one the reader would return, and moving the reader past it keeps the log's order.
	// The position decides, not the unread counts: after damage the Open scan may have counted
	// fewer records than the reader finds, and passing them would lose them without a trace.
	if claim && l.rmu.TryLock() {
		if !l.readerBeforeLocked(act, off) {
			l.rmu.Unlock()
		} else {
			for l.rseg != act {
				l.passReaderSegment()
			}
			l.roff = off + recSize
			act.outstanding++
			l.rmu.Unlock()
			return pos, true, l.writeSeq, nil
		}
	}
	act.unread.add(1, spans, recSize)
	l.unread.add(1, spans, recSize)
	return pos, false, l.writeSeq, nil
}

// reclaimActiveLocked frees the active segment when the reader is at its end and every record in
// it was acknowledged. Only sealed segments are ever deleted, so without this a log whose space
// is mostly the active segment (a small capacity, or one record nearly as large) would stay full
// after everything in it was delivered. Caller holds wmu and mu.
func (l *Log) reclaimActiveLocked() error {
	act := l.segs[len(l.segs)-1]
	if act.size == 0 || l.rseg != act || l.roff < act.size || act.outstanding > 0 {
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
func (l *Log) writeRecord(f File, payload []byte, spans uint32, unixNano int64) error {
	if len(payload) < copyBelow {
		l.wbuf = appendRecord(l.wbuf[:0], payload, spans, unixNano)
		_, err := f.Write(l.wbuf)
		return err
	}
	l.hbuf = encodeHeader(payload, spans, unixNano)
	if _, err := f.Write(l.hbuf[:]); err != nil {
		return err
	}
	_, err := f.Write(payload)
	return err
}

// passReaderSegment moves the reader from its sealed segment to the next one. Caller holds mu.
func (l *Log) passReaderSegment() {
	seg := l.rseg
	i := slices.Index(l.segs, seg)
	seg.passed = true
	l.unread.sub(seg.unread.Records, seg.unread.Spans, seg.unread.Bytes)
	seg.unread = Counts{}
	l.rseg, l.roff = l.segs[i+1], 0
	// A failed delete leaves the files for the next Open, which skips acknowledged records.
	if err := l.maybeDelete(seg); err != nil && l.opts.OnBackgroundError != nil {
		l.opts.OnBackgroundError(err)
	}
}

// Next returns the next unread record, or ok false when there is none right now. Corrupt records
// are skipped and counted (Corrupt).
func (l *Log) Next() (Record, bool, error) {
	l.rmu.Lock()
	defer l.rmu.Unlock()
	for {
		l.mu.Lock()
		if l.closed {
			l.mu.Unlock()
			return Record{}, false, ErrClosed
		}
		seg, off := l.rseg, l.roff
		end := seg.size
		if off >= end {
			if seg.sealed {
				l.passReaderSegment()
				l.mu.Unlock()
				continue
			}
			l.mu.Unlock()
			return Record{}, false, nil
		}
		_, acked := seg.skip[off] // filled at Open, read-only since
		l.mu.Unlock()

		r, err := readAt(seg.f, off, end, true, acked)
		if err != nil {
			return Record{}, false, err
		}

		l.mu.Lock()
		l.roff = r.next
		switch {
		case acked && r.corrupt:
			// Delivered before the restart, so nothing is lost, but the damage is counted: the
			// reader resynchronised past it.
			l.corrupt++
			if l.opts.OnCorrupt != nil {
				l.opts.OnCorrupt()
			}
		case acked:
			// delivered before the restart: not counted as unread by Open
		case r.corrupt:
			l.corrupt++
			if l.opts.OnCorrupt != nil {
				l.opts.OnCorrupt()
			}
			if r.counted {
				seg.unread.sub(1, int64(r.hdr.spans), r.next-off)
				l.unread.sub(1, int64(r.hdr.spans), r.next-off)
			}
		default:
			size := r.next - off
			seg.unread.sub(1, int64(r.hdr.spans), size)
			l.unread.sub(1, int64(r.hdr.spans), size)
			seg.outstanding++
			l.mu.Unlock()
			return Record{
				Pos:      Pos{Seg: seg.id, Off: off},
				Payload:  r.payload,
				Spans:    int64(r.hdr.spans),
				Size:     size,
				Enqueued: time.Unix(0, r.hdr.unixNano),
			}, true, nil
		}
		l.mu.Unlock()
	}
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

// writeAck appends one ack entry. Caller holds mu. The entry is 16 bytes in the page cache;
// fsync follows the policy through ackDirty.
func (l *Log) writeAck(seg *segment, off int64, kind byte) error {
	if seg.ack == nil {
		f, err := l.fs.OpenFile(ackName(l.opts.Dir, seg.id), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
		if err != nil {
			return fmt.Errorf("open ack file: %w", err)
		}
		seg.ack = f
		l.dirDirty = true
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
	l.total -= seg.size
	return l.removeFiles(seg)
}

// DropOldest skips the unread records of the oldest segment that has any, so their space is
// reclaimed once its in-flight records are acknowledged. It returns what was dropped and whether
// anything changed (false: nothing left to drop on disk).
func (l *Log) DropOldest() (Counts, bool, error) {
	// wmu first (the order Close uses): an append between its bookkeeping and its write must not
	// see its segment sealed, passed and deleted under it, or its record would be written into a
	// file the reader never visits again, or one already removed.
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

// readerBeforeLocked reports whether no byte of the log lies between the reader and offset off of
// seg: nothing left to read before it. Caller holds mu.
func (l *Log) readerBeforeLocked(seg *segment, off int64) bool {
	for _, s := range l.segs[slices.Index(l.segs, l.rseg):] {
		start, end := int64(0), s.size
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

// HasUnread reports whether Next has work: records, damaged or acknowledged regions to skip, or
// a sealed segment to pass. Unlike Unread's counts it cannot be wrong after
// damage, so it is what decides whether to call Next.
func (l *Log) HasUnread() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	act := l.segs[len(l.segs)-1]
	// A sealed segment the reader stands in is to be passed even when read to its end (the last
	// segment left from before a restart): Next passes it, and only then can it be deleted.
	return l.rseg.sealed || !l.readerBeforeLocked(act, act.size)
}

// Unread returns the records written and not yet read, as counted: after damage the count may be
// below what the reader still finds (HasUnread is exact); for telemetry.
func (l *Log) Unread() Counts {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.unread
}

// SizeBytes returns the bytes held in segment files, acknowledged records included until their
// segment is deleted.
func (l *Log) SizeBytes() int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.total
}

// Corrupt returns the number of damaged regions readers skipped since Open.
func (l *Log) Corrupt() int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.corrupt
}

// waitSynced blocks until a sync covering write seq completed. The first waiter leads: it runs the
// fsync for everyone who wrote before it started (group commit).
//
// Before its fsync the leader yields once (gathering): appends that are ready to run write first
// and wait for the same fsync. Without it a group held one write when the collector has a single
// P (GOMAXPROCS=1, one core): the fsync syscall keeps its P, so no other append runs until it
// returns, and every request paid an fsync of its own (docs/benchmarks.md, "fsync always: one
// write per fsync"). When nothing else is runnable the yield returns at once.
func (l *Log) waitSynced(seq uint64) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	gathered := false
	for {
		if err := l.failedFor(seq); err != nil {
			return err
		}
		if l.syncedSeq >= seq {
			return nil
		}
		if l.syncing || l.gathering {
			l.cond.Wait()
			continue
		}
		if !gathered {
			gathered = true
			l.gathering = true
			l.mu.Unlock()
			runtime.Gosched()
			l.mu.Lock()
			l.gathering = false
			if l.syncing || l.syncedSeq >= seq || l.failedFor(seq) != nil {
				// This leader will not run the fsync (another one ran or runs meanwhile: Sync, the
				// ack loop): the appends that came while it yielded must not wait for it.
				l.cond.Broadcast()
			}
			continue
		}
		// Every client of this batch waits for this fsync, and on ext4 each file synced costs a
		// journal commit of its own. Ack entries only say what was delivered: one lost to a power
		// failure brings a duplicate, never a loss, so they ride along at most once a second.
		_ = l.syncLocked(time.Since(l.acksSyncedAt) >= l.opts.AckSyncInterval) // its failure is in l.failed
	}
}

// failedSync is a failed fsync and the writes it was the first to cover: (from, to].
type failedSync struct {
	from, to uint64
	err      error
}

// maxFailedSyncs bounds the failures remembered. Consecutive failures merge into one range; past
// the bound the oldest range is forgotten and its writes, with all before them, count as failed.
const maxFailedSyncs = 64

// failedFor returns the error of the fsync that first covered write seq, if it failed. Caller
// holds mu. Linux may drop the dirty pages of a failed fsync and report the next fsync of the file
// as a success, so such a write's durability is unknown for good: every waiter the failed fsync
// covered gets its error, not only the one that ran it.
func (l *Log) failedFor(seq uint64) error {
	if seq <= l.forgottenTo {
		return errors.New("fsync: an fsync covering this record may have failed (too many failures to tell)")
	}
	for i := len(l.failed) - 1; i >= 0; i-- {
		if f := l.failed[i]; seq > f.from && seq <= f.to {
			return f.err
		}
	}
	return nil
}

// syncLocked fsyncs every dirty segment, and the dirty ack files if acks is true. Caller holds mu;
// it is released during the fsyncs.
func (l *Log) syncLocked(acks bool) error {
	l.syncing = true
	target := l.writeSeq
	first := l.attemptedSeq // writes after it are covered by an fsync for the first time
	l.attemptedSeq = max(l.attemptedSeq, target)
	// Every segment before any ack file: a record rewritten elsewhere (a shutdown saving the rest
	// of a delivery) acknowledges its old copy, and that ack must not become durable before the
	// new copy does (fsyncs run in this order; a power failure may stop them anywhere).
	var files, ackFiles []File
	for _, s := range l.segs {
		if s.dirty {
			files = append(files, s.f)
			s.dirty = false
		}
		if acks && s.ackDirty {
			ackFiles = append(ackFiles, s.ack)
			s.ackDirty = false
		}
	}
	files = append(files, ackFiles...)
	if acks {
		l.acksSyncedAt = time.Now()
	}
	dir := l.dirDirty
	l.dirDirty = false
	l.mu.Unlock()
	var errs []error
	for _, f := range files {
		// A segment deleted meanwhile has nothing left worth syncing.
		if err := f.Sync(); err != nil && !errors.Is(err, os.ErrClosed) {
			errs = append(errs, err)
		}
	}
	if dir {
		errs = append(errs, syncDir(l.opts.Dir))
	}
	l.mu.Lock()
	l.syncing = false
	l.cond.Broadcast()
	if err := errors.Join(errs...); err != nil {
		err = fmt.Errorf("fsync: %w", err)
		// Writes made while this fsync ran may have been written back by it and lost with it, and
		// the kernel reports a writeback error once per file: they fail too, including one still
		// between its write and its bookkeeping (it will be writeSeq+1: appends are serialised).
		to := l.writeSeq + l.writing
		l.attemptedSeq = max(l.attemptedSeq, to)
		if n := len(l.failed); n > 0 && l.failed[n-1].to == first {
			l.failed[n-1].to = to // a run of failures: one range
		} else if to > first {
			l.failed = append(l.failed, failedSync{from: first, to: to, err: err})
			if len(l.failed) > maxFailedSyncs {
				l.forgottenTo = l.failed[0].to
				l.failed = slices.Delete(l.failed, 0, 1)
			}
		}
		return err
	}
	l.syncedSeq = max(l.syncedSeq, target)
	return nil
}

func syncDir(dir string) error {
	d, err := os.Open(dir) //nolint:gosec // the configured directory
	if err != nil {
		return err
	}
	return errors.Join(d.Sync(), d.Close())
}

// syncLoop is the FsyncInterval group commit, and FsyncAlways's ack sync.
func (l *Log) syncLoop(every time.Duration) {
	defer close(l.done)
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-l.stop:
			return
		case <-t.C:
			l.mu.Lock()
			var err error
			if !l.syncing && !l.closed {
				err = l.syncLocked(true)
			}
			l.mu.Unlock()
			if err != nil && l.opts.OnBackgroundError != nil {
				l.opts.OnBackgroundError(err)
			}
		}
	}
}

// Sync makes everything written so far durable, whatever the policy: segments first, then the
// ack files. A caller that rewrote records elsewhere calls it before acknowledging the old copies:
// otherwise the kernel may write the ack (or the unlink of a whole segment) back before the new
// copy, and a power failure in between keeps neither.
func (l *Log) Sync() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	for l.syncing {
		l.cond.Wait()
	}
	if l.closed {
		return ErrClosed
	}
	return l.syncLocked(true)
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
	for l.syncing {
		l.cond.Wait()
	}
	// One final sync whatever the policy: it costs one fsync per file at shutdown.
	errs := []error{l.syncLocked(true)}
	l.closed = true
	l.mu.Unlock()
	errs = append(errs, l.closeFiles(), unlockDir(l.lock))
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
