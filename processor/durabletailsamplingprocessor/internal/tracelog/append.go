package tracelog

import (
	"errors"
	"fmt"
	"os"
)

// Append writes one record to the current segment, in one write call, and returns that
// segment. It rotates first when the record would take a segment holding records past
// Options.SegmentBytes, so a segment is larger only when it holds a single larger record. kind
// must not be 0 and the payload at most MaxRecordBytes. After Close the error wraps
// os.ErrClosed.
func (l *Log) Append(kind byte, payload []byte) (SegmentID, error) {
	seg, _, err := l.AppendPartsAt(kind, payload)
	return seg, err
}

// AppendPartsAt is Append of the parts' concatenation, without the caller building it; it also
// returns where the payload starts in its segment, for ReadAt.
func (l *Log) AppendPartsAt(kind byte, parts ...[]byte) (SegmentID, int64, error) {
	if kind == 0 {
		return 0, 0, errors.New("tracelog: record kind 0 is reserved")
	}
	n := 0
	for _, p := range parts {
		n += len(p)
	}
	if n > MaxRecordBytes {
		return 0, 0, fmt.Errorf("tracelog: record of %d bytes exceeds %d", n, MaxRecordBytes)
	}
	size := int64(recordHeaderSize + n)
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return 0, 0, fmt.Errorf("tracelog: append: %w", os.ErrClosed)
	}
	full := l.fileSize > segmentHeaderSize && l.fileSize+size > l.opts.SegmentBytes
	// Replay stops at a torn record, so nothing may follow one in its segment.
	if full || l.broken {
		if err := l.rotateLocked(); err != nil {
			return 0, 0, err
		}
	}
	payloadAt := l.fileSize + recordHeaderSize
	l.scratch = appendRecord(l.scratch[:0], kind, n, parts)
	written, err := l.file.Write(l.scratch)
	if cap(l.scratch) > maxScratchBytes {
		l.scratch = nil
	}
	l.fileSize += int64(written)
	l.liveBytes.Add(int64(written))
	if err != nil {
		l.broken = true
		return 0, 0, fmt.Errorf("tracelog: append to segment %d: %w", l.fileID, err)
	}
	l.appended.Add(1)
	return l.fileID, payloadAt, nil
}

// rotateLocked makes a new segment current. The old one is fsynced (unless FsyncNever) as it
// leaves: Sync only ever fsyncs the current segment.
func (l *Log) rotateLocked() error {
	old, oldID, oldSize := l.file, l.fileID, l.fileSize
	next := oldID + 1
	f, err := l.createSegment(next)
	if err != nil {
		return err
	}
	// A failed fsync is kept for Sync to report; a failed close loses nothing already written.
	_ = l.retireFile(old)
	l.file, l.fileID, l.fileSize, l.broken = f, next, segmentHeaderSize, false
	l.liveBytes.Add(segmentHeaderSize)
	l.switchCurrent(oldID, oldSize, next)
	return nil
}

// startSegment creates the first segment Open appends to.
func (l *Log) startSegment(id SegmentID) error {
	f, err := l.createSegment(id)
	if err != nil {
		return err
	}
	l.file, l.fileID, l.fileSize = f, id, segmentHeaderSize
	l.liveBytes.Add(segmentHeaderSize)
	l.addCurrent(id)
	return nil
}

// createSegment creates a segment file with its header. Unless the mode is FsyncNever the
// directory is fsynced too, or a power loss could lose the file with its fsynced records.
func (l *Log) createSegment(id SegmentID) (*os.File, error) {
	path := l.segmentPath(id)
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, segmentPerm) //nolint:gosec // a segment name inside the configured directory
	if err != nil {
		return nil, fmt.Errorf("tracelog: create segment %d: %w", id, err)
	}
	_, err = f.Write(segmentHeader[:])
	if err == nil && l.opts.Fsync != FsyncNever {
		err = syncDir(l.opts.Dir)
	}
	if err != nil {
		_ = f.Close()
		_ = os.Remove(path) // a half-made segment would only be counted as damaged at replay
		return nil, fmt.Errorf("tracelog: create segment %d: %w", id, err)
	}
	return f, nil
}

// retireFile fsyncs (unless FsyncNever) and closes a segment that takes no more appends. Every
// record appended so far is in it or in a segment retired earlier, so its fsync covers them all.
// The outcome is noted before closing: a Sync racing with it on the closed file relies on that.
func (l *Log) retireFile(f *os.File) error {
	var err error
	if l.opts.Fsync != FsyncNever {
		err = l.fsync(f)
	}
	l.sync.note(l.appended.Load(), err)
	return errors.Join(err, f.Close())
}

// Size is the bytes of all live segment files.
func (l *Log) Size() int64 {
	return l.liveBytes.Load()
}

// Close syncs (fsync unless FsyncNever) and closes the log. It deletes nothing. It returns the
// fsync or close error, and any fsync error the log met before; later calls return the same.
func (l *Log) Close() error {
	l.closeOnce.Do(func() { l.closeErr = l.close() })
	return l.closeErr
}

func (l *Log) close() error {
	if l.stopInterval != nil {
		close(l.stopInterval)
		<-l.intervalDone
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.closed = true
	err := l.retireFile(l.file)
	l.file = nil
	l.refs.freeze()
	l.closeReaders()
	if stickyErr := l.sync.failure(); stickyErr != nil && !errors.Is(err, stickyErr) {
		err = errors.Join(stickyErr, err)
	}
	if err != nil {
		return fmt.Errorf("tracelog: close: %w", err)
	}
	return nil
}

// syncDir fsyncs a directory, making the creation of the files in it durable.
func syncDir(dir string) error {
	d, err := os.Open(dir) //nolint:gosec // the configured directory
	if err != nil {
		return err
	}
	return errors.Join(d.Sync(), d.Close())
}
