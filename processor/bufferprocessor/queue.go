package bufferprocessor // import "github.com/tracegate/tracegate/processor/bufferprocessor"

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/collector/consumer/consumererror"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/xpdata/pref"
	"go.uber.org/zap"

	"github.com/tracegate/tracegate/processor/bufferprocessor/internal/diskqueue"
)

// Limits that are not settings.
const (
	// maxMemoryBytes bounds the memory queue in serialized bytes, whatever `buffer` says, so a
	// few huge batches cannot exhaust the heap. A single batch above it is still held when the
	// queue is empty (otherwise it could never be accepted in memory-only mode).
	maxMemoryBytes = 256 << 20
	// maxDeliveryBytes bounds a merged delivery (max_batch_spans > 0), in serialized bytes: about
	// the bulk size that suits Elasticsearch.
	maxDeliveryBytes = 8 << 20
)

// Drop reasons (the reason attribute of processor_buffer_dropped_spans).
const (
	reasonFull        = "full"
	reasonPermanent   = "permanent_error"
	reasonExhausted   = "retry_exhausted"
	reasonShutdown    = "shutdown"
	reasonUndecodable = "undecodable"
)

// item is one queued batch. In memory it holds td, or the serialized payload while the next
// consumer fails (see enterBacklog); read back from disk it holds the undecoded payload. onDisk
// items own a disk record that must be acknowledged once delivered or dropped.
//
// An item's td carries one pdata reference of the buffer's (pref): ConsumeTraces takes it, because
// the pipeline releases a request's data when ConsumeTraces returns, and with the collector's
// pdata.useProtoPooling gate that returns its memory to pdata's pools for the next request.
// release gives the reference back once the buffer is done with the batch.
type item struct {
	td       ptrace.Traces
	payload  []byte
	spans    int64
	bytes    int64
	enqueued time.Time
	pos      diskqueue.Pos
	onDisk   bool
}

// release gives back the item's reference to its td, once (see item).
func (it *item) release() {
	if it.td != (ptrace.Traces{}) {
		pref.UnrefTraces(it.td)
		it.td = ptrace.Traces{}
	}
}

// queue is the memory queue in front of the optional disk log.
type queue struct {
	mu       sync.Mutex
	cond     *sync.Cond
	items    []item
	head     int
	memSpans int64
	memBytes int64
	// claimItems and claimBytes are memory places reserved by write_ahead appends that may claim
	// their record: the decision is taken before the (unlocked) write and fsync, so without the
	// reservation concurrent appends could all decide there is room and overfill the queue.
	claimItems int
	claimBytes int64
	maxItems   int
	// fullWait (full_wait) holds a batch that finds the memory-only queue full; roomFreed is
	// closed (and forgotten) when a batch leaves memory, waking those waiting for room.
	fullWait  time.Duration
	roomFreed chan struct{}

	log        *diskqueue.Log // nil: memory only
	writeAhead bool
	dropOldest bool
	closed     bool // intake stopped
	stopped    bool // workers must stop taking items

	// batchWait (max_batch_wait) lets queued batches gather into one delivery: workers leave
	// fewer than a delivery's worth of spans in memory until the oldest has waited this long.
	batchWait time.Duration
	wake      *time.Timer // wakes the workers when the oldest batch's wait is over
	wakeAt    time.Time

	// backlog is set while the next consumer fails (see enterBacklog): batches are then queued
	// serialized. spillNext is where spill's pass over items has got to, under mu.
	backlog   atomic.Bool
	spillNext int

	onDrop func(reason string, spans int64)
	logger *zap.Logger
}

func newQueue(maxItems int, log *diskqueue.Log, writeAhead, dropOldest bool, batchWait time.Duration, onDrop func(string, int64), logger *zap.Logger) *queue {
	q := &queue{maxItems: maxItems, log: log, writeAhead: writeAhead, dropOldest: dropOldest, batchWait: batchWait, onDrop: onDrop, logger: logger}
	q.cond = sync.NewCond(&q.mu)
	return q
}

func (q *queue) lenLocked() int { return len(q.items) - q.head }

// fitsLocked reports whether a batch of size bytes fits in memory now, counting the places that
// write_ahead appends in progress reserved.
func (q *queue) fitsLocked(size int64) bool {
	n := q.lenLocked() + q.claimItems
	return n < q.maxItems && (n == 0 || q.memBytes+q.claimBytes+size <= maxMemoryBytes)
}

func (q *queue) pushLocked(it item) {
	q.items = append(q.items, it)
	q.memSpans += it.spans
	q.memBytes += it.bytes
	q.cond.Signal()
}

// roomLocked returns a channel closed when memory next frees room.
func (q *queue) roomLocked() <-chan struct{} {
	if q.roomFreed == nil {
		q.roomFreed = make(chan struct{})
	}
	return q.roomFreed
}

// signalRoomLocked wakes the batches waiting for room.
func (q *queue) signalRoomLocked() {
	if q.roomFreed != nil {
		close(q.roomFreed)
		q.roomFreed = nil
	}
}

func (q *queue) popLocked() item {
	q.signalRoomLocked()
	it := q.items[q.head]
	q.items[q.head] = item{} // release the batch for the GC
	q.head++
	if q.head > len(q.items)/2 && q.head > 64 {
		q.items = append(q.items[:0], q.items[q.head:]...)
		q.spillNext = max(q.spillNext-q.head, 0)
		q.head = 0
	}
	q.memSpans -= it.spans
	q.memBytes -= it.bytes
	return it
}

// pushFrontLocked returns an item a worker took but cannot use now (it did not fit a merge).
func (q *queue) pushFrontLocked(it item) {
	if q.head > 0 {
		q.head--
		q.items[q.head] = it
	} else {
		q.items = append([]item{it}, q.items...)
		q.spillNext++
	}
	q.memSpans += it.spans
	q.memBytes += it.bytes
}

// push holds td (ConsumeTraces). It returns nil only once the batch is in memory or written to
// disk per the fsync policy. kept reports whether the memory queue now holds td itself, and with
// it the caller's reference to td (see item); otherwise the caller keeps that reference.
func (q *queue) push(ctx context.Context, td ptrace.Traces) (kept bool, err error) {
	spans := int64(td.SpanCount())
	if spans == 0 {
		return false, nil
	}
	var m ptrace.ProtoMarshaler
	it := item{td: td, spans: spans, enqueued: time.Now()}

	if q.log == nil || !q.writeAhead {
		if q.backlog.Load() {
			payload, err := serialize(td)
			if err != nil {
				return false, err
			}
			it.td, it.payload, it.bytes = ptrace.Traces{}, payload, int64(len(payload))
		} else {
			it.bytes = int64(m.TracesSize(td))
		}
		var wait *time.Timer
		for {
			q.mu.Lock()
			if q.closed {
				q.mu.Unlock()
				return false, fmt.Errorf("buffer processor: %w", ErrShuttingDown)
			}
			for !q.fitsLocked(it.bytes) && q.log == nil && q.dropOldest && q.lenLocked() > 0 {
				old := q.popLocked()
				q.drop(old, reasonFull)
			}
			if q.fitsLocked(it.bytes) {
				q.pushLocked(it)
				q.mu.Unlock()
				return it.payload == nil, nil
			}
			if q.log != nil {
				q.mu.Unlock()
				break // overflow to disk
			}
			if q.fullWait <= 0 || q.dropOldest {
				q.mu.Unlock()
				return false, fmt.Errorf("buffer processor: memory queue holds %d batches: %w", q.maxItems, ErrFull)
			}
			room := q.roomLocked()
			q.mu.Unlock()
			if wait == nil {
				wait = time.NewTimer(q.fullWait)
				defer wait.Stop()
			}
			select {
			case <-room: // try again
			case <-wait.C:
				return false, fmt.Errorf("buffer processor: memory queue held %d batches for full_wait (%v): %w", q.maxItems, q.fullWait, ErrFull)
			case <-ctx.Done():
				return false, fmt.Errorf("buffer processor: memory queue full until the caller gave up (%w): %w", ctx.Err(), ErrFull)
			}
		}
	}

	// Overflow to disk, or write-ahead. Serialise outside every lock.
	if it.payload == nil {
		payload, err := serialize(td)
		if err != nil {
			return false, err
		}
		// In write_ahead the size comes from the serialized payload: one pass over the batch less.
		it.payload, it.bytes = payload, int64(len(payload))
	}
	return q.appendToDisk(it)
}

// serialize is the batch's protobuf form, for the disk log or a backlog (see enterBacklog); a
// batch that cannot be serialized never will be.
func serialize(td ptrace.Traces) ([]byte, error) {
	var m ptrace.ProtoMarshaler
	payload, err := m.MarshalTraces(td)
	if err != nil {
		return nil, consumererror.NewPermanent(fmt.Errorf("buffer processor: serialize batch: %w", err))
	}
	return payload, nil
}

// appendToDisk writes it to the log, applying when_full when the log is full. kept is as push's.
func (q *queue) appendToDisk(it item) (kept bool, err error) {
	for {
		claim := false
		if q.writeAhead {
			q.mu.Lock()
			claim = !q.closed && q.fitsLocked(it.bytes)
			if claim {
				q.claimItems++
				q.claimBytes += it.bytes
			}
			q.mu.Unlock()
		}
		pos, claimed, err := q.log.Append(it.payload, it.spans, it.enqueued, claim)
		// unreserveLocked gives the reservation back, under the same lock as the push that
		// replaces it, so no other append sees the place free in between.
		unreserveLocked := func() {
			if claim {
				q.claimItems--
				q.claimBytes -= it.bytes
			}
		}
		if err != nil {
			q.mu.Lock()
			unreserveLocked()
			q.mu.Unlock()
		}
		switch {
		case err != nil && claimed:
			// Written but not synced (fsync failed): the client is told it failed and may send
			// again, so release the record instead of pinning its segment until a restart.
			if aerr := q.log.Ack([]diskqueue.Pos{pos}); aerr != nil {
				err = errors.Join(err, aerr)
			}
		case err != nil:
			// If it was written and only its fsync failed, it stays in the log and is delivered
			// (the client may also send it again: a duplicate at worst): wake a worker for it.
			q.mu.Lock()
			q.cond.Signal()
			q.mu.Unlock()
		}
		if err == nil {
			q.mu.Lock()
			unreserveLocked()
			switch {
			case claimed && !q.closed && q.backlog.Load():
				it.pos, it.onDisk, it.td = pos, true, ptrace.Traces{} // keep the copy (see enterBacklog)
				q.pushLocked(it)
			case claimed && !q.closed:
				it.pos, it.onDisk, it.payload = pos, true, nil // keep the decoded td, drop the copy
				q.pushLocked(it)
				kept = true
			case claimed:
				// Shutting down: the record stays unacknowledged on disk and is replayed.
			default:
				q.cond.Signal() // a worker reads it from disk
			}
			q.mu.Unlock()
			return kept, nil
		}
		switch {
		case errors.Is(err, diskqueue.ErrTooLarge) && !q.writeAhead:
			// It only overflowed because memory was full at that moment: memory takes it once
			// deliveries have made room, so the client should retry, not drop it.
			return false, fmt.Errorf("buffer processor: memory queue full, and a batch of %d bytes can never fit storage.capacity_mib: %w (%w)", len(it.payload), ErrFull, err)
		case errors.Is(err, diskqueue.ErrTooLarge):
			return false, consumererror.NewPermanent(fmt.Errorf("buffer processor: batch of %d bytes can never fit storage.capacity_mib: %w", len(it.payload), err))
		case errors.Is(err, diskqueue.ErrClosed):
			return false, fmt.Errorf("buffer processor: %w", ErrShuttingDown)
		case !errors.Is(err, diskqueue.ErrFull):
			return false, fmt.Errorf("buffer processor: write to disk: %w", err)
		case !q.dropOldest:
			return false, fmt.Errorf("buffer processor: %w (%w)", ErrFull, err)
		}
		if placed, err := q.makeRoom(it); placed || err != nil {
			return placed, err
		}
	}
}

// makeRoom applies drop_oldest when the log is full: it drops the oldest unread disk records,
// else the oldest memory batch. In overflow mode the new batch then takes that batch's place in
// memory (placed true). It returns ErrFull when nothing can be dropped: every byte on disk
// belongs to deliveries in flight.
func (q *queue) makeRoom(it item) (placed bool, err error) {
	dropped, progressed, err := q.log.DropOldest()
	if err != nil {
		return false, fmt.Errorf("buffer processor: drop oldest: %w", err)
	}
	if progressed {
		if dropped.Spans > 0 {
			q.onDrop(reasonFull, dropped.Spans)
		}
		return false, nil
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.lenLocked() == 0 || q.closed {
		return false, fmt.Errorf("buffer processor: disk space held by deliveries in flight: %w", ErrFull)
	}
	q.drop(q.popLocked(), reasonFull)
	if !q.writeAhead {
		if it.td != (ptrace.Traces{}) {
			it.payload = nil
		}
		q.pushLocked(it)
		return it.payload == nil, nil
	}
	return false, nil
}

// spillChunk is how many queued batches spill serializes per hold of mu: intake waits for at most
// that many serializations.
const spillChunk = 16

// spill serializes the batches the memory queue holds decoded, while the backlog lasts (see
// enterBacklog), a few at a time. It returns how many it serialized.
func (q *queue) spill() int {
	var m ptrace.ProtoMarshaler
	n := 0
	q.mu.Lock()
	defer q.mu.Unlock()
	q.spillNext = q.head
	for q.spillNext < len(q.items) && q.backlog.Load() {
		end := min(q.spillNext+spillChunk, len(q.items))
		for i := q.spillNext; i < end; i++ {
			it := &q.items[i]
			if it.td == (ptrace.Traces{}) || it.payload != nil {
				continue
			}
			payload, err := m.MarshalTraces(it.td)
			if err != nil {
				continue // it stays decoded
			}
			it.release()
			it.payload = payload
			n++
		}
		q.spillNext = end
		q.mu.Unlock()
		runtime.Gosched() // let intake and workers take mu
		q.mu.Lock()
		q.spillNext = max(q.spillNext, q.head)
	}
	return n
}

// drop counts an item as dropped and releases its disk record and its td. Safe with or without
// mu held.
func (q *queue) drop(it item, reason string) {
	q.onDrop(reason, it.spans)
	it.release()
	if it.onDisk {
		if err := q.log.Ack([]diskqueue.Pos{it.pos}); err != nil {
			// The record is replayed after a restart: a duplicate of a drop, never a loss.
			q.logger.Warn("Acknowledging a dropped record in the disk buffer failed", zap.Error(err))
		}
	}
}

// take blocks until there is work and returns one item, or a run of consecutive items up to
// maxSpans spans and maxDeliveryBytes bytes when maxSpans > 0. ok is false when the worker must
// exit.
func (q *queue) take(maxSpans int64) (items []item, ok bool, err error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	var spans, bytes int64
	for {
		if q.stopped || (q.closed && q.log != nil) {
			if len(items) > 0 {
				return items, true, nil
			}
			return nil, false, nil
		}
		var it item
		// A partial batch in memory may wait to gather more (max_batch_wait); once a worker took
		// something, it fills its delivery with whatever is there.
		memoryReady := q.lenLocked() > 0 && (len(items) > 0 || q.batchReadyLocked(maxSpans))
		switch {
		case memoryReady:
			it = q.popLocked()
		case q.log != nil && q.log.HasUnread():
			q.mu.Unlock()
			rec, got, rerr := q.log.Next()
			q.mu.Lock()
			if rerr != nil {
				return items, len(items) > 0, fmt.Errorf("read disk buffer: %w", rerr)
			}
			if !got {
				continue
			}
			it = item{payload: rec.Payload, spans: rec.Spans, bytes: int64(len(rec.Payload)), enqueued: rec.Enqueued, pos: rec.Pos, onDisk: true}
		case q.lenLocked() > 0: // a partial batch still gathering
			q.wakeAtLocked(q.items[q.head].enqueued.Add(q.batchWait))
			q.cond.Wait()
			continue
		default:
			if len(items) > 0 {
				return items, true, nil
			}
			if q.closed {
				return nil, false, nil // memory only, drained
			}
			q.cond.Wait()
			continue
		}
		if len(items) > 0 && (spans+it.spans > maxSpans || bytes+it.bytes > maxDeliveryBytes) {
			q.pushFrontLocked(it)
			return items, true, nil
		}
		items = append(items, it)
		spans += it.spans
		bytes += it.bytes
		if maxSpans <= 0 || spans >= maxSpans {
			return items, true, nil
		}
	}
}

// batchReadyLocked reports whether the memory queue holds a delivery's worth of spans or bytes, or
// its oldest batch has waited max_batch_wait (or nothing may wait: no merging, no wait, closing).
// Without it, a light load would become one small bulk per request: each costs the exporter an
// HTTP request and a gzip stream, several times the CPU of the spans in it.
func (q *queue) batchReadyLocked(maxSpans int64) bool {
	if maxSpans <= 0 || q.batchWait <= 0 || q.closed || q.memSpans >= maxSpans || q.memBytes >= maxDeliveryBytes ||
		q.lenLocked() >= q.maxItems { // full: waiting would only refuse clients
		return true
	}
	return !time.Now().Before(q.items[q.head].enqueued.Add(q.batchWait))
}

// wakeAtLocked makes sure the waiting workers are woken at t (one timer serves them all).
func (q *queue) wakeAtLocked(t time.Time) {
	if q.wake != nil && !q.wakeAt.After(t) {
		return // an earlier or equal wake-up is pending
	}
	if q.wake != nil {
		q.wake.Stop()
	}
	q.wakeAt = t
	q.wake = time.AfterFunc(time.Until(t), func() {
		q.mu.Lock()
		defer q.mu.Unlock()
		q.wake, q.wakeAt = nil, time.Time{}
		q.cond.Broadcast()
	})
}

func (q *queue) stopWakeLocked() {
	if q.wake != nil {
		q.wake.Stop()
		q.wake, q.wakeAt = nil, time.Time{}
	}
}

// memorySpans returns the spans of the items that are only in memory (no disk record).
func memorySpans(items []item) int64 {
	var n int64
	for _, it := range items {
		if !it.onDisk {
			n += it.spans
		}
	}
	return n
}

// ack releases delivered (or dropped) items' disk records.
func (q *queue) ack(items []item) error {
	var ps []diskqueue.Pos
	for _, it := range items {
		if it.onDisk {
			ps = append(ps, it.pos)
		}
	}
	if len(ps) == 0 {
		return nil
	}
	return q.log.Ack(ps)
}

// close stops intake and wakes every waiting worker.
func (q *queue) close() {
	q.mu.Lock()
	q.signalRoomLocked() // waiting batches see closed and are refused
	q.closed = true
	q.stopWakeLocked()
	q.cond.Broadcast()
	q.mu.Unlock()
}

// stop makes workers exit at their next take.
func (q *queue) stop() {
	q.mu.Lock()
	q.stopped = true
	q.stopWakeLocked()
	q.cond.Broadcast()
	q.mu.Unlock()
}

// abandon handles a delivery that will not complete (shutdown): with storage, what is left of it
// (td: the items' batch, less the parts already delivered when partial) is written to disk as one
// record (disk items are simply left unacknowledged, to be replayed, unless that record is needed:
// some parts were delivered, or some items were only in memory); without, it is counted as
// dropped. It returns the spans that were lost.
func (q *queue) abandon(items []item, td ptrace.Traces, partial bool) int64 {
	memSpans := memorySpans(items)
	if memSpans == 0 && !partial {
		return 0 // every record is on disk, unacknowledged: replayed after restart
	}
	var m ptrace.ProtoMarshaler
	payload, err := m.MarshalTraces(td)
	return q.abandonPayload(items, payload, err, int64(td.SpanCount()))
}

// abandonPayload is abandon with what is left of the delivery serialized (payload, or the error
// serializing it), left spans.
func (q *queue) abandonPayload(items []item, payload []byte, err error, left int64) int64 {
	memSpans := memorySpans(items)
	if q.log == nil {
		q.onDrop(reasonShutdown, left)
		return left
	}
	if err == nil {
		// Beyond capacity_mib if need be: with the disk full (Elasticsearch down for long), the
		// alternative is losing acknowledged spans. What is written so is bounded by the memory
		// queue plus the deliveries in flight (README, storage.capacity_mib).
		err = q.log.AppendBeyondCapacity(payload, left, items[0].enqueued)
	}
	if err != nil {
		lost := min(memSpans, left) // the disk items' records are replayed
		q.onDrop(reasonShutdown, lost)
		return lost
	}
	// The merged record now holds the disk items' data too: release their old records, once the
	// new one is durable (one fsync, at shutdown). A failed sync keeps them: a duplicate after
	// restart, never a loss.
	if slices.ContainsFunc(items, func(it item) bool { return it.onDisk }) {
		if err := q.log.Sync(); err != nil {
			q.logger.Warn("Syncing the disk buffer at shutdown failed; its records stay for a replay", zap.Error(err))
			return 0
		}
	}
	_ = q.ack(items) // a failed ack only means a duplicate after restart
	return 0
}

// drain empties the memory queue at shutdown (after the workers exited) through abandon, item by
// item. It returns the spans that were lost.
func (q *queue) drain() int64 {
	q.mu.Lock()
	var rest []item
	for q.lenLocked() > 0 {
		rest = append(rest, q.popLocked())
	}
	q.mu.Unlock()
	var lost int64
	for _, it := range rest {
		if it.payload != nil { // serialized (see enterBacklog); a disk record is replayed
			if !it.onDisk {
				lost += q.abandonPayload([]item{it}, it.payload, nil, it.spans)
			}
			continue
		}
		lost += q.abandon([]item{it}, it.td, false)
		it.release()
	}
	return lost
}

// memStats returns the batches, spans and bytes in the memory queue.
func (q *queue) memStats() (batches, spans, bytes int64) {
	q.mu.Lock()
	defer q.mu.Unlock()
	return int64(q.lenLocked()), q.memSpans, q.memBytes
}
