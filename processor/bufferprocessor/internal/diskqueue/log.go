// Package diskqueue is an append-only, segmented log of checksummed records with out-of-order
// acknowledgements, built for the buffer processor's at-least-once delivery.
//
// Layout of the directory: LOCK (flock, one owner at a time), NNNNNNNNNNNNNNNN.seg (a segment
// header, then records: see format.go and record.go) and NNNNNNNNNNNNNNNN.ack (16-byte entries:
// record offset in the segment file, kind, CRC). A segment and its ack file are deleted once the
// segment is sealed, fully read and every record read from it was acknowledged. After a restart
// every record without an ack entry is read again.
//
// The format is versioned per segment. The segment header (12 bytes: magic "TGSG", format version,
// header length, CRC32C) says which version wrote the file; version 1, the releases before the
// header, wrote none: its segments start with a record. The promise: a log written by an earlier
// release replays after an upgrade (old segments are read as they are, new ones are written in
// the current version, both in one directory); after a downgrade, Open refuses a segment of a
// version newer than it knows (ErrUnsupportedVersion, naming the file and both versions) instead
// of misreading it or skipping it as damage. testdata/v1 is a log of version 1, replayed by the
// tests.
//
// The files by concern: open.go (Open, the replay scan, Close), write.go (Append), commit.go (fsync
// and group commit), read.go (Next and the reader position), ack.go (acknowledgements, segment
// deletion, DropOldest), format.go (the segment header and the versions), segment.go and record.go
// (the other on-disk formats).
package diskqueue

import (
	"errors"
	"os"
	"sync"
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

// Claim says whether Append may hand its record straight back to the caller.
type Claim uint8

const (
	// NoClaim leaves the record for Next.
	NoClaim Claim = iota
	// ClaimIfNext hands the record to the caller (who keeps it in memory and must Ack it) when it
	// is the next one Next would return, instead of leaving it for Next.
	ClaimIfNext
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
	// Shared, when set, is a capacity the log shares with other logs, checked instead of
	// CapacityBytes for appends (CapacityBytes still sizes segments and bounds one record).
	Shared *SharedCapacity
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
	// (its files then stay on disk until the next Open). May be called with mu held: keep it
	// cheap. May be nil.
	OnBackgroundError func(error)
	// OnCorrupt is called (with mu held: keep it cheap) for each damaged region a reader skips;
	// may be nil.
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
	Items    int64
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
//
// Segments and positions, oldest first (A: acknowledged, o: outstanding, handed out by Next or a
// claiming Append and not acknowledged yet, u: unread, written and not handed out):
//
//	 deleted            sealed, passed        sealed             active (the last segment)
//	┌──────────┐       ┌──────────────┐      ┌──────────────┐   ┌──────────────────┐
//	│ A A A A  │       │ A o A A o A  │      │ A o u u u u  │   │ u u u u          │
//	└──────────┘       └──────────────┘      └─────▲────────┘   └────────▲─────────┘
//	 sealed, passed     kept until its o are       │                     │
//	 and all acked:     acked, then deleted     rseg/roff: read      size: write
//	 files removed      with its .ack file      and claim position   position (next append)
//
// A claiming Append moves rseg/roff past its own record only when nothing lies between them and
// it; DropOldest moves them to the next segment, leaving the skipped u unread for good. Replay
// after a restart (Open) re-delivers every o and u (every record without an ack entry); the o
// that had a dispatch entry count as OpenStats.DuplicatesPossible.
//
// Locking. Three mutexes, always taken in the order wmu, then rmu, then mu; nobody blocks on wmu
// or rmu while holding mu (a claiming append only TryLocks rmu under mu, which cannot deadlock):
//
//   - wmu serializes appends: the write of a record's bytes at the end of the active segment, and
//     wbuf/hbuf. DropOldest and Close take it so no segment is sealed or deleted under an append
//     that is between its bookkeeping and its write.
//   - rmu serializes readers: only its holder reads a record between taking the reader position
//     and moving it (Next, DropOldest, a claiming Append's TryLock; Close takes it to wait for
//     them). The one change of position without it (reclaimActiveLocked, under wmu and mu)
//     requires the reader idle at the end of the log, where no read is in progress.
//   - mu guards every other field, and the segments' fields; cond (on mu) wakes the appends that
//     wait for a group commit. mu is released during reads, writes and fsyncs: commit.syncing
//     keeps to one fsync at a time.
type Log struct {
	opts Options
	fs   FS
	lock *os.File // the directory's flock

	wmu  sync.Mutex
	wbuf []byte           // small records are encoded here (under wmu)
	hbuf [headerSize]byte // the header of a large record (under wmu; a field, not escaping per call)

	rmu sync.Mutex

	mu      sync.Mutex
	cond    *sync.Cond // group commit waiters (on mu)
	segs    []*segment // ordered by id; the last one is the active (appendable) segment
	rseg    *segment   // reader position: segment
	roff    int64      // reader position: offset in rseg
	unread  Counts
	total   int64 // bytes in segment files
	corrupt int64 // damaged regions skipped by readers
	closed  bool
	commit  groupCommit // fsync bookkeeping (commit.go)

	stopOnce sync.Once
	stop     chan struct{} // stops syncLoop
	done     chan struct{} // closed when syncLoop returned
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
