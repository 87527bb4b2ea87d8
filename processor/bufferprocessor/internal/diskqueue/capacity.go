package diskqueue

import "sync/atomic"

// SharedCapacity is one capacity for several logs (the buffer's traces, logs and metrics logs under
// one storage.directory): an append fails with ErrFull when the logs together would exceed it.
// Each log checks it under its own lock, so the logs together may exceed it by at most one record
// each, from appends that checked at the same moment.
type SharedCapacity struct {
	limit int64
	used  atomic.Int64 // bytes of the segment files of every open log sharing it
}

// NewSharedCapacity returns a capacity of limit bytes.
func NewSharedCapacity(limit int64) *SharedCapacity { return &SharedCapacity{limit: limit} }

// Used returns the bytes the logs sharing c hold.
func (c *SharedCapacity) Used() int64 { return c.used.Load() }

// Limit returns c's size in bytes.
func (c *SharedCapacity) Limit() int64 { return c.limit }

// grow records n more (or, negative, fewer) bytes in l's files, in the log's total and in the
// shared capacity. Caller holds mu (or owns l alone, at Open).
func (l *Log) grow(n int64) {
	l.total += n
	if l.opts.Shared != nil {
		l.opts.Shared.used.Add(n)
	}
}

// exceeds reports whether adding n bytes would go beyond the log's capacity: its own, or the one
// it shares with other logs. Caller holds mu.
func (l *Log) exceeds(n int64) bool {
	if l.opts.Shared != nil {
		return l.opts.Shared.used.Load()+n > l.opts.Shared.limit
	}
	return l.total+n > l.opts.CapacityBytes
}
