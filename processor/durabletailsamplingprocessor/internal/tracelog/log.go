package tracelog

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"
)

// FsyncMode says how far Sync goes to make appended records durable.
type FsyncMode int

const (
	// FsyncNever only writes: records survive SIGKILL (they are in the OS page cache), not a
	// power loss.
	FsyncNever FsyncMode = iota
	// FsyncInterval adds a background fsync every Options.FsyncInterval when something was
	// written.
	FsyncInterval
	// FsyncAlways makes Sync wait for an fsync covering everything appended before the call;
	// concurrent callers share one fsync (group commit).
	FsyncAlways
)

// Options configure a Log.
type Options struct {
	Dir           string        // created if missing (0o750)
	SegmentBytes  int64         // rotate the current segment when it reaches this size (default 64 MiB when 0)
	Fsync         FsyncMode     // how durable Sync makes appended records
	FsyncInterval time.Duration // default 100ms when 0 and mode is FsyncInterval
}

// SegmentID names a segment file. Ids ascend in the order segments were created.
type SegmentID uint64

const (
	defaultSegmentBytes  = 64 << 20
	defaultFsyncInterval = 100 * time.Millisecond
	dirPerm              = 0o750
	// segmentPerm keeps span data readable by the collector's user only.
	segmentPerm = 0o600
	// maxScratchBytes is the largest encoding buffer Append keeps between calls, so that one
	// huge record does not pin its size in memory for the life of the log.
	maxScratchBytes = 1 << 20
)

// Log is an append-only log of records split into segment files. Its methods are safe for
// concurrent use.
type Log struct {
	opts  Options
	fsync func(*os.File) error // (*os.File).Sync, replaced by tests to observe or fail fsyncs

	// mu serialises appends, rotation and Close. Lock order: mu, then refMu, then syncMu.
	mu       sync.Mutex
	file     *os.File // the current segment; nil once closed
	fileID   SegmentID
	fileSize int64
	broken   bool // a write failed part way: the next append starts a new segment
	closed   bool
	scratch  []byte // encoding buffer reused by Append

	appended  atomic.Uint64 // records written so far; Sync waits for an fsync covering a count
	liveBytes atomic.Int64  // bytes of all segment files not yet deleted

	refs refTable
	sync syncState

	// readers are ReadAt's handles by segment (a leaf lock: taken after any other).
	readMu        sync.Mutex
	readers       map[SegmentID]*os.File
	readersClosed bool

	stopInterval chan struct{} // closed by Close to stop the FsyncInterval goroutine
	intervalDone chan struct{} // closed by that goroutine when it returns
	closeOnce    sync.Once
	closeErr     error
}

// Open replays every existing segment in ascending order, calling replay for each intact record
// (at: where its payload starts in the segment, for ReadAt),
// then starts a new segment for appends. Damage ends the replay of a segment and is counted in
// the Report, not returned; an error from replay aborts Open with that error (wrapped). Open
// deletes nothing: see ReleaseUnreferenced.
func Open(opts Options, replay func(seg SegmentID, at int64, kind byte, payload []byte) error) (*Log, Report, error) {
	return open(opts, replay, (*os.File).Sync)
}

// open is Open with the fsync function as a parameter, for tests.
func open(opts Options, replay replayFunc, fsync func(*os.File) error) (*Log, Report, error) {
	opts, err := opts.withDefaults()
	if err != nil {
		return nil, Report{}, err
	}
	if err := os.MkdirAll(opts.Dir, dirPerm); err != nil {
		return nil, Report{}, fmt.Errorf("tracelog: create %q: %w", opts.Dir, err)
	}
	ids, highest, err := listSegments(opts.Dir)
	if err != nil {
		return nil, Report{}, err
	}
	if highest == math.MaxUint64 {
		return nil, Report{}, fmt.Errorf("tracelog: segment ids exhausted in %q", opts.Dir)
	}
	l := &Log{opts: opts, fsync: fsync, refs: refTable{segments: make(map[SegmentID]*segmentRefs)}}
	report, err := l.replaySegments(ids, replay)
	if err != nil {
		return nil, report, err
	}
	if err := l.startSegment(highest + 1); err != nil {
		return nil, report, err
	}
	if opts.Fsync == FsyncInterval {
		l.stopInterval, l.intervalDone = make(chan struct{}), make(chan struct{})
		go l.fsyncEvery(opts.FsyncInterval, l.stopInterval, l.intervalDone)
	}
	return l, report, nil
}

// withDefaults fills in the zero values the Options document and refuses values that would
// make the log misbehave rather than fail.
func (o Options) withDefaults() (Options, error) {
	switch {
	case o.Dir == "":
		return o, errors.New("tracelog: no directory")
	case o.SegmentBytes < 0:
		return o, fmt.Errorf("tracelog: negative segment size %d", o.SegmentBytes)
	case o.Fsync < FsyncNever || o.Fsync > FsyncAlways:
		return o, fmt.Errorf("tracelog: unknown fsync mode %d", o.Fsync)
	case o.FsyncInterval < 0:
		return o, fmt.Errorf("tracelog: negative fsync interval %s", o.FsyncInterval)
	}
	if o.SegmentBytes == 0 {
		o.SegmentBytes = defaultSegmentBytes
	}
	if o.FsyncInterval == 0 && o.Fsync == FsyncInterval {
		o.FsyncInterval = defaultFsyncInterval
	}
	return o, nil
}

// replaySegments replays the old segments and lists each one, unreferenced, in the ref table.
func (l *Log) replaySegments(ids []SegmentID, replay replayFunc) (Report, error) {
	var report Report
	for _, id := range ids {
		scan, err := replaySegment(l.segmentPath(id), id, replay)
		report.Segments++
		report.Records += scan.records
		if scan.skipped > 0 {
			report.CorruptSegments++
			report.SkippedBytes += scan.skipped
		}
		if err != nil {
			return report, err
		}
		l.refs.segments[id] = &segmentRefs{size: scan.size}
		l.liveBytes.Add(scan.size)
	}
	return report, nil
}

func (l *Log) segmentPath(id SegmentID) string {
	return filepath.Join(l.opts.Dir, segmentName(id))
}
