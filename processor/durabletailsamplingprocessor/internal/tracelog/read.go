package tracelog

import (
	"fmt"
	"os"
)

// ReadAt reads len(p) bytes of segment seg from offset at (where AppendPartsAt or the replay
// said a payload starts, or within one). The segment must be referenced, so that it is not
// deleted meanwhile. Read handles are opened on first use and closed with their segment.
func (l *Log) ReadAt(seg SegmentID, at int64, p []byte) error {
	f, err := l.reader(seg)
	if err != nil {
		return err
	}
	if _, err := f.ReadAt(p, at); err != nil {
		return fmt.Errorf("tracelog: read segment %d at %d: %w", seg, at, err)
	}
	return nil
}

func (l *Log) reader(seg SegmentID) (*os.File, error) {
	l.readMu.Lock()
	defer l.readMu.Unlock()
	if f := l.readers[seg]; f != nil {
		return f, nil
	}
	if l.readersClosed {
		return nil, fmt.Errorf("tracelog: read segment %d: %w", seg, os.ErrClosed)
	}
	f, err := os.Open(l.segmentPath(seg))
	if err != nil {
		return nil, fmt.Errorf("tracelog: open segment %d for reading: %w", seg, err)
	}
	if l.readers == nil {
		l.readers = map[SegmentID]*os.File{}
	}
	l.readers[seg] = f
	return f, nil
}

// closeReader closes the read handle of a segment being deleted, if it has one.
func (l *Log) closeReader(seg SegmentID) {
	l.readMu.Lock()
	defer l.readMu.Unlock()
	if f := l.readers[seg]; f != nil {
		_ = f.Close()
		delete(l.readers, seg)
	}
}

// closeReaders closes every read handle (Close).
func (l *Log) closeReaders() {
	l.readMu.Lock()
	defer l.readMu.Unlock()
	for seg, f := range l.readers {
		_ = f.Close()
		delete(l.readers, seg)
	}
	l.readersClosed = true
}
