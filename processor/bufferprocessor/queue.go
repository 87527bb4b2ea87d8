package bufferprocessor

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
	"go.uber.org/zap"

	"github.com/tracegate/tracegate/processor/bufferprocessor/internal/diskqueue"
)

// Limits that are not settings.
const (
	// maxMemoryBytes bounds the memory queue in serialized bytes, whatever `buffer` says, so a
	// few huge batches cannot exhaust the heap. A single batch above it is still held when the
	// queue is empty (otherwise it could never be accepted in memory-only mode).
	maxMemoryBytes = 256 << 20
	// maxDeliveryBytes bounds a merged delivery (max_batch_items > 0), in serialized bytes: about
	// the bulk size that suits Elasticsearch.
	maxDeliveryBytes = 8 << 20
)

// Drop reasons (the reason attribute of processor_buffer_dropped_spans, _log_records, _metric_points).
const (
	reasonFull        = "full"
	reasonPermanent   = "permanent_error"
	reasonExhausted   = "retry_exhausted"
	reasonShutdown    = "shutdown"
	reasonUndecodable = "undecodable"
)

// queueSettings configure a queue; fixed once it is made.
type queueSettings[T any] struct {
	sig        signal[T]
	maxBatches int            // queue_size
	log        *diskqueue.Log // nil: memory only
	writeAhead bool           // storage.mode write_ahead: every batch goes to disk first
	dropOldest bool           // when_full drop_oldest
	// batchWait (max_batch_wait) lets queued batches gather into one delivery: workers leave
	// fewer than a delivery's worth of items in memory until the oldest has waited this long.
	batchWait time.Duration
	// fullWait (full_wait) holds a batch that finds the memory-only queue full.
	fullWait time.Duration
	onDrop   func(reason string, items int64)
	logger   *zap.Logger
	clock    clock
}

// queue is the memory queue in front of the optional disk log. It owns the batches it holds (see
// batch.go) until a worker takes them.
type queue[T any] struct {
	queueSettings[T]

	// mu guards everything declared below, but breakerOpen (atomic).
	mu       sync.Mutex
	cond     *sync.Cond
	batches  []batch[T]
	head     int
	memItems int64
	memBytes int64
	// claimBatches and claimBytes are memory places reserved by write_ahead appends that may claim
	// their record: the decision is taken before the (unlocked) write and fsync, so without the
	// reservation concurrent appends could all decide there is room and overfill the queue.
	claimBatches int
	claimBytes   int64
	// roomFreed is closed (and forgotten) when a batch leaves memory, waking those waiting for
	// room (full_wait).
	roomFreed chan struct{}

	closed  bool // intake stopped
	stopped bool // workers must stop taking batches

	wake   timer // wakes the workers when the oldest batch's max_batch_wait is over
	wakeAt time.Time

	// diskOldest bounds from below when the oldest unread disk record was enqueued (zero:
	// unknown, as for the records a restart found).
	diskOldest time.Time

	// breakerOpen is set while the circuit breaker is not closed (see attemptFailed): batches are
	// then queued serialized. spillNext is where spill's pass over batches has got to, under mu.
	breakerOpen atomic.Bool
	spillNext   int
}

func newQueue[T any](set queueSettings[T]) *queue[T] {
	q := &queue[T]{queueSettings: set}
	q.cond = sync.NewCond(&q.mu)
	return q
}

func (q *queue[T]) refs() refs[T] { return refs[T]{q.sig} }

func (q *queue[T]) lenLocked() int { return len(q.batches) - q.head }

// fitsLocked reports whether a batch of size bytes fits in memory now, counting the places that
// write_ahead appends in progress reserved.
func (q *queue[T]) fitsLocked(size int64) bool {
	n := q.lenLocked() + q.claimBatches
	return n < q.maxBatches && (n == 0 || q.memBytes+q.claimBytes+size <= maxMemoryBytes)
}

func (q *queue[T]) pushLocked(b batch[T]) {
	q.batches = append(q.batches, b)
	q.memItems += b.items
	q.memBytes += b.bytes
	q.cond.Signal()
}

// roomLocked returns a channel closed when memory next frees room.
func (q *queue[T]) roomLocked() <-chan struct{} {
	if q.roomFreed == nil {
		q.roomFreed = make(chan struct{})
	}
	return q.roomFreed
}

// signalRoomLocked wakes the batches waiting for room.
func (q *queue[T]) signalRoomLocked() {
	if q.roomFreed != nil {
		close(q.roomFreed)
		q.roomFreed = nil
	}
}

func (q *queue[T]) popLocked() batch[T] {
	q.signalRoomLocked()
	b := q.batches[q.head]
	q.batches[q.head] = batch[T]{} // release the batch for the GC
	q.head++
	if q.head > len(q.batches)/2 && q.head > 64 {
		q.batches = append(q.batches[:0], q.batches[q.head:]...)
		q.spillNext = max(q.spillNext-q.head, 0)
		q.head = 0
	}
	q.memItems -= b.items
	q.memBytes -= b.bytes
	return b
}

// pushFrontLocked returns a batch a worker took but cannot use now (it did not fit a merge).
func (q *queue[T]) pushFrontLocked(b batch[T]) {
	if q.head > 0 {
		q.head--
		q.batches[q.head] = b
	} else {
		q.batches = append([]batch[T]{b}, q.batches...)
		q.spillNext++
	}
	q.memItems += b.items
	q.memBytes += b.bytes
}

// push holds b, a decoded batch ConsumeTraces adopted (batch.go), in memory or written to disk
// per the fsync policy, and returns nil only then. push owns b: what it does not hold, it releases.
func (q *queue[T]) push(ctx context.Context, b batch[T]) error {
	var payload []byte
	if q.log == nil || !q.writeAhead {
		if q.breakerOpen.Load() {
			var err error
			if payload, err = q.serialize(b.data); err != nil {
				q.refs().release(&b)
				return err
			}
			q.refs().toSerialized(&b, payload)
			b.bytes = int64(len(payload))
		} else {
			b.bytes = int64(q.sig.size(b.data))
		}
		switch res := q.pushToMemory(ctx, b); res.outcome {
		case memoryHeld:
			return nil
		case memoryRefused:
			q.refs().release(&b)
			return res.err
		}
	}

	// Overflow to disk, or write-ahead. Serialize outside every lock.
	if payload == nil {
		var err error
		if payload, err = q.serialize(b.data); err != nil {
			q.refs().release(&b)
			return err
		}
		// In write_ahead the size comes from the serialized payload: one pass over the batch less.
		b.bytes = int64(len(payload))
	}
	return q.appendToDisk(b, payload)
}

// memoryOutcome is what an attempt at holding a batch in memory decided.
type memoryOutcome int

const (
	memoryHeld     memoryOutcome = iota // in memory: the queue owns the batch
	memoryOverflow                      // memory is full: the batch is for the disk log
	memoryFull                          // memory is full and there is no disk log: the batch may wait for room
	memoryRefused                       // refused with an error
)

// memoryAttempt is the outcome of an attempt at holding a batch in memory.
type memoryAttempt struct {
	outcome memoryOutcome
	room    <-chan struct{} // memoryFull: closed when memory next frees room
	err     error           // memoryRefused
}

// pushToMemory holds b in the memory queue, waiting up to full_wait for room when there is no
// storage. It never returns memoryFull. Unless b is held, the caller still owns it.
func (q *queue[T]) pushToMemory(ctx context.Context, b batch[T]) memoryAttempt {
	var wait timer
	defer func() {
		if wait != nil {
			wait.Stop()
		}
	}()
	refused := func(err error) memoryAttempt { return memoryAttempt{outcome: memoryRefused, err: err} }
	for {
		res := q.tryPush(b)
		if res.outcome != memoryFull {
			return res
		}
		if wait == nil {
			wait = q.clock.NewTimer(q.fullWait)
		}
		select {
		case <-res.room: // try again
		case <-wait.Chan():
			return refused(fmt.Errorf("buffer processor: memory queue held %d batches for full_wait (%v): %w", q.maxBatches, q.fullWait, ErrFull))
		case <-ctx.Done():
			return refused(fmt.Errorf("buffer processor: memory queue full until the caller gave up (%w): %w", ctx.Err(), ErrFull))
		}
	}
}

// tryPush makes one attempt at holding b in memory, dropping the oldest batches first when
// when_full says so and there is no storage.
func (q *queue[T]) tryPush(b batch[T]) memoryAttempt {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.closed {
		return memoryAttempt{outcome: memoryRefused, err: fmt.Errorf("buffer processor: %w", ErrShuttingDown)}
	}
	for !q.fitsLocked(b.bytes) && q.log == nil && q.dropOldest && q.lenLocked() > 0 {
		q.drop(q.popLocked(), reasonFull)
	}
	switch {
	case q.fitsLocked(b.bytes):
		q.pushLocked(b)
		return memoryAttempt{outcome: memoryHeld}
	case q.log != nil:
		return memoryAttempt{outcome: memoryOverflow}
	case q.fullWait <= 0 || q.dropOldest:
		return memoryAttempt{outcome: memoryRefused, err: fmt.Errorf("buffer processor: memory queue holds %d batches: %w", q.maxBatches, ErrFull)}
	}
	return memoryAttempt{outcome: memoryFull, room: q.roomLocked()}
}

// serialize is the batch's protobuf form, for the disk log or while the circuit breaker is not
// closed (see attemptFailed); a batch that cannot be serialized never will be.
func (q *queue[T]) serialize(data T) ([]byte, error) {
	payload, err := q.sig.marshal(data)
	if err != nil {
		return nil, consumererror.NewPermanent(fmt.Errorf("buffer processor: serialize batch: %w", err))
	}
	return payload, nil
}

// appendToDisk writes b, serialized as payload, to the log as one record, applying when_full
// when the log is full. It owns b, as push does.
func (q *queue[T]) appendToDisk(b batch[T], payload []byte) error {
	for {
		claim := q.reserveClaim(b.bytes)
		pos, claimed, err := q.log.Append(payload, b.items, b.enqueued, claim)
		if err == nil {
			q.appended(b, payload, pos, claimed, claim)
			return nil
		}
		err = q.appendError(len(payload), q.appendFailed(b, pos, claimed, claim, err))
		if err == nil {
			var placed bool
			placed, err = q.makeRoom(b)
			if placed {
				return nil
			}
		}
		if err != nil {
			q.refs().release(&b)
			return err
		}
	}
}

// reserveClaim decides whether a write_ahead append may claim its record into memory (see
// claimBatches), and if so reserves its place.
func (q *queue[T]) reserveClaim(size int64) diskqueue.Claim {
	if !q.writeAhead {
		return diskqueue.NoClaim
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.closed || !q.fitsLocked(size) {
		return diskqueue.NoClaim
	}
	q.claimBatches++
	q.claimBytes += size
	return diskqueue.ClaimIfNext
}

// unreserveLocked gives reserveClaim's place back, under the same lock as the push that replaces
// it, so no other append sees the place free in between.
func (q *queue[T]) unreserveLocked(claim diskqueue.Claim, size int64) {
	if claim == diskqueue.ClaimIfNext {
		q.claimBatches--
		q.claimBytes -= size
	}
}

// appended places b once its record (payload) is written: in memory when the log let it claim
// the record, decoded or, while the circuit breaker is not closed, serialized (see attemptFailed);
// else a worker reads the record from disk and b is released.
func (q *queue[T]) appended(b batch[T], payload []byte, pos diskqueue.Pos, claimed bool, claim diskqueue.Claim) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.unreserveLocked(claim, b.bytes)
	switch {
	case claimed && !q.closed:
		if q.breakerOpen.Load() && b.form == formDecoded {
			q.refs().toSerialized(&b, payload)
		}
		b.pos, b.onDisk = pos, true
		q.pushLocked(b)
		return
	case claimed:
		// Shutting down: the record stays unacknowledged on disk and is replayed.
	default:
		q.noteUnreadLocked(b.enqueued)
		q.cond.Signal() // a worker reads it from disk
	}
	q.refs().release(&b)
}

// noteUnreadLocked keeps diskOldest a lower bound of the oldest unread disk record's enqueue
// time: the log is read in order, so after reading a record none unread is older than it.
func (q *queue[T]) noteUnreadLocked(enqueued time.Time) {
	if q.diskOldest.IsZero() || enqueued.Before(q.diskOldest) {
		q.diskOldest = enqueued
	}
}

// appendFailed cleans up after a failed append and returns its error.
func (q *queue[T]) appendFailed(b batch[T], pos diskqueue.Pos, claimed bool, claim diskqueue.Claim, err error) error {
	q.mu.Lock()
	q.unreserveLocked(claim, b.bytes)
	q.mu.Unlock()
	if claimed {
		// Written but not synced (fsync failed): the client is told it failed and may send
		// again, so release the record instead of pinning its segment until a restart.
		if aerr := q.log.Ack([]diskqueue.Pos{pos}); aerr != nil {
			err = errors.Join(err, aerr)
		}
		return err
	}
	// If it was written and only its fsync failed, it stays in the log and is delivered (the
	// client may also send it again: a duplicate at worst): wake a worker for it.
	q.mu.Lock()
	q.cond.Signal()
	q.mu.Unlock()
	return err
}

// appendError is what push returns for a failed append of size bytes, or nil when drop_oldest may
// make room.
func (q *queue[T]) appendError(size int, err error) error {
	switch {
	case errors.Is(err, diskqueue.ErrTooLarge) && !q.writeAhead:
		// It only overflowed because memory was full at that moment: memory takes it once
		// deliveries have made room, so the client should retry, not drop it.
		return fmt.Errorf("buffer processor: memory queue full, and a batch of %d bytes can never fit storage.capacity_mib: %w (%w)", size, ErrFull, err)
	case errors.Is(err, diskqueue.ErrTooLarge):
		return consumererror.NewPermanent(fmt.Errorf("buffer processor: batch of %d bytes can never fit storage.capacity_mib: %w", size, err))
	case errors.Is(err, diskqueue.ErrClosed):
		return fmt.Errorf("buffer processor: %w", ErrShuttingDown)
	case !errors.Is(err, diskqueue.ErrFull):
		return fmt.Errorf("buffer processor: write to disk: %w", err)
	case !q.dropOldest:
		return fmt.Errorf("buffer processor: %w (%w)", ErrFull, err)
	}
	return nil
}

// makeRoom applies drop_oldest when the log is full: it drops the oldest unread disk records,
// else the oldest memory batch. In overflow mode the new batch then takes that batch's place in
// memory, in its form (placed true: the queue owns it). It returns ErrFull when nothing can be
// dropped: every byte on disk belongs to deliveries in flight.
func (q *queue[T]) makeRoom(b batch[T]) (placed bool, err error) {
	dropped, progressed, err := q.log.DropOldest()
	if err != nil {
		return false, fmt.Errorf("buffer processor: drop oldest: %w", err)
	}
	if progressed {
		if dropped.Items > 0 {
			q.onDrop(reasonFull, dropped.Items)
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
		q.pushLocked(b)
		return true, nil
	}
	return false, nil
}

// spillChunk is how many queued batches spill serializes per hold of mu: intake waits for at most
// that many serializations.
const spillChunk = 16

// spill serializes the batches the memory queue holds decoded, while the circuit breaker is not
// closed (see attemptFailed), a few at a time. It returns how many it serialized.
func (q *queue[T]) spill() int {
	n := 0
	q.mu.Lock()
	defer q.mu.Unlock()
	q.spillNext = q.head
	for q.spillNext < len(q.batches) && q.breakerOpen.Load() {
		end := min(q.spillNext+spillChunk, len(q.batches))
		for i := q.spillNext; i < end; i++ {
			b := &q.batches[i]
			if b.form != formDecoded {
				continue
			}
			payload, err := q.sig.marshal(b.data)
			if err != nil {
				continue // it stays decoded
			}
			q.refs().toSerialized(b, payload)
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

// drop counts a batch as dropped and releases its disk record and its data. Safe with or without
// mu held.
func (q *queue[T]) drop(b batch[T], reason string) {
	q.onDrop(reason, b.items)
	q.refs().release(&b)
	if b.onDisk {
		if err := q.log.Ack([]diskqueue.Pos{b.pos}); err != nil {
			// The record is replayed after a restart: a duplicate of a drop, never a loss.
			q.logger.Warn("Acknowledging a dropped record in the disk buffer failed", zap.Error(err))
		}
	}
}

// takeOutcome is what take tells a worker to do.
type takeOutcome int

const (
	takeDeliver takeOutcome = iota // deliver the batches taken; their done settles them
	takePause                      // a disk read failed before anything was taken: pause, then take again
	takeExit                       // exit: the workers are stopped, or memory only and drained
)

// take blocks until there is work and hands the worker one batch, or a run of consecutive batches
// up to maxItems items and maxDeliveryBytes bytes when maxItems > 0, with the done that settles
// them: the worker owns them from here (see batch.go). err is a failed disk read, reported with
// takeDeliver when batches were taken before it, else with takePause.
func (q *queue[T]) take(maxItems int64) (takeOutcome, done[T], error) {
	batches, err := q.collect(maxItems)
	switch {
	case len(batches) > 0:
		return takeDeliver, done[T]{q: q, batches: batches}, err
	case err != nil:
		return takePause, done[T]{}, err
	}
	return takeExit, done[T]{}, nil
}

// collect is take's wait and pick; no batches and no error: the worker must exit.
func (q *queue[T]) collect(maxItems int64) (batches []batch[T], err error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	var items, bytes int64
	for {
		if q.stopped || (q.closed && q.log != nil) {
			return batches, nil
		}
		var b batch[T]
		// A partial batch in memory may wait to gather more (max_batch_wait); once a worker took
		// something, it fills its delivery with whatever is there.
		memoryReady := q.lenLocked() > 0 && (len(batches) > 0 || q.batchReadyLocked(maxItems))
		switch {
		case memoryReady:
			b = q.popLocked()
		case q.log != nil && q.log.HasUnread():
			q.mu.Unlock()
			rec, got, rerr := q.log.Next()
			q.mu.Lock()
			if rerr != nil {
				return batches, fmt.Errorf("read disk buffer: %w", rerr)
			}
			if !got {
				continue
			}
			b = serializedBatch[T](rec.Payload, rec.Items, rec.Enqueued)
			b.pos, b.onDisk = rec.Pos, true
			q.diskOldest = rec.Enqueued
		case q.lenLocked() > 0: // a partial batch still gathering
			q.wakeAtLocked(q.batches[q.head].enqueued.Add(q.batchWait))
			q.cond.Wait()
			continue
		default:
			if len(batches) > 0 || q.closed { // memory only, drained
				return batches, nil
			}
			q.cond.Wait()
			continue
		}
		if len(batches) > 0 && (items+b.items > maxItems || bytes+b.bytes > maxDeliveryBytes) {
			q.pushFrontLocked(b)
			return batches, nil
		}
		batches = append(batches, b)
		items += b.items
		bytes += b.bytes
		if maxItems <= 0 || items >= maxItems {
			return batches, nil
		}
	}
}

// batchReadyLocked reports whether the memory queue holds a delivery's worth of items or bytes, or
// its oldest batch has waited max_batch_wait (or nothing may wait: no merging, no wait, closing).
// Without it, a light load would become one small bulk per ConsumeTraces call: each costs the exporter
// an HTTP request and a gzip stream, several times the CPU of the items in it.
func (q *queue[T]) batchReadyLocked(maxItems int64) bool {
	if maxItems <= 0 || q.batchWait <= 0 || q.closed || q.memItems >= maxItems || q.memBytes >= maxDeliveryBytes ||
		q.lenLocked() >= q.maxBatches { // full: waiting would only refuse clients
		return true
	}
	return !q.clock.Now().Before(q.batches[q.head].enqueued.Add(q.batchWait))
}

// wakeAtLocked makes sure the waiting workers are woken at t (one timer serves them all).
func (q *queue[T]) wakeAtLocked(t time.Time) {
	if q.wake != nil && !q.wakeAt.After(t) {
		return // an earlier or equal wake-up is pending
	}
	if q.wake != nil {
		q.wake.Stop()
	}
	q.wakeAt = t
	q.wake = q.clock.AfterFunc(t.Sub(q.clock.Now()), func() {
		q.mu.Lock()
		defer q.mu.Unlock()
		q.wake, q.wakeAt = nil, time.Time{}
		q.cond.Broadcast()
	})
}

func (q *queue[T]) stopWakeLocked() {
	if q.wake != nil {
		q.wake.Stop()
		q.wake, q.wakeAt = nil, time.Time{}
	}
}

// memoryItems returns the items of the batches that are only in memory (no disk record).
func memoryItems[T any](batches []batch[T]) int64 {
	var n int64
	for _, b := range batches {
		if !b.onDisk {
			n += b.items
		}
	}
	return n
}

// ack releases delivered (or dropped) batches' disk records.
func (q *queue[T]) ack(batches []batch[T]) error {
	var ps []diskqueue.Pos
	for _, b := range batches {
		if b.onDisk {
			ps = append(ps, b.pos)
		}
	}
	if len(ps) == 0 {
		return nil
	}
	return q.log.Ack(ps)
}

// close stops intake and wakes every waiting worker.
func (q *queue[T]) close() {
	q.mu.Lock()
	q.signalRoomLocked() // waiting batches see closed and are refused
	q.closed = true
	q.stopWakeLocked()
	q.cond.Broadcast()
	q.mu.Unlock()
}

// stop makes workers exit at their next take.
func (q *queue[T]) stop() {
	q.mu.Lock()
	q.stopped = true
	q.stopWakeLocked()
	q.cond.Broadcast()
	q.mu.Unlock()
}

// deliveryProgress says whether a stopped delivery had handed some of its parts over.
type deliveryProgress int

const (
	nothingDelivered deliveryProgress = iota
	partlyDelivered                   // data holds only what is left: the batches' disk records hold more
)

// abandon handles a delivery that will not complete (shutdown): with storage, what is left of it
// (data: the batches merged, less the parts already delivered when partlyDelivered) is written to disk as one
// record (disk batches are simply left unacknowledged, to be replayed, unless that record is needed:
// some parts were delivered, or some batches were only in memory); without, it is counted as
// dropped. It returns the items that were lost.
func (q *queue[T]) abandon(batches []batch[T], data T, progress deliveryProgress) int64 {
	if memoryItems(batches) == 0 && progress == nothingDelivered {
		return 0 // every record is on disk, unacknowledged: replayed after restart
	}
	payload, err := q.sig.marshal(data)
	return q.abandonPayload(batches, payload, err, q.sig.items(data))
}

// abandonPayload is abandon with what is left of the delivery serialized (payload, or the error
// serializing it), left items.
func (q *queue[T]) abandonPayload(batches []batch[T], payload []byte, err error, left int64) int64 {
	memItems := memoryItems(batches)
	if q.log == nil {
		q.onDrop(reasonShutdown, left)
		return left
	}
	if err == nil {
		// Beyond capacity_mib if need be: with the disk full (Elasticsearch down for long), the
		// alternative is losing acknowledged data. What is written so is bounded by the memory
		// queue plus the deliveries in flight (README, storage.capacity_mib).
		err = q.log.AppendBeyondCapacity(payload, left, batches[0].enqueued)
	}
	if err != nil {
		lost := min(memItems, left) // the disk batches' records are replayed
		q.onDrop(reasonShutdown, lost)
		return lost
	}
	// The merged record now holds the disk batches' data too: release their old records, once the
	// new one is durable (one fsync, at shutdown). A failed sync keeps them: a duplicate after
	// restart, never a loss.
	if slices.ContainsFunc(batches, func(b batch[T]) bool { return b.onDisk }) {
		if err := q.log.Sync(); err != nil {
			q.logger.Warn("Syncing the disk buffer at shutdown failed; its records stay for a replay", zap.Error(err))
			return 0
		}
	}
	_ = q.ack(batches) // a failed ack only means a duplicate after restart
	return 0
}

// drain empties the memory queue at shutdown (after the workers exited) through abandon, batch by
// batch. It returns the items that were lost.
func (q *queue[T]) drain() int64 {
	q.mu.Lock()
	var rest []batch[T]
	for q.lenLocked() > 0 {
		rest = append(rest, q.popLocked())
	}
	q.mu.Unlock()
	var lost int64
	for _, b := range rest {
		switch b.form {
		case formSerialized: // see attemptFailed; a disk record is replayed
			if !b.onDisk {
				lost += q.abandonPayload([]batch[T]{b}, b.payload, nil, b.items)
			}
		case formDecoded:
			lost += q.abandon([]batch[T]{b}, b.data, nothingDelivered)
		}
		q.refs().release(&b)
	}
	return lost
}

// oldestEnqueued returns when the oldest batch in the memory queue or unread on disk was enqueued
// (zero when there is none, or only disk records a restart found).
func (q *queue[T]) oldestEnqueued() time.Time {
	q.mu.Lock()
	defer q.mu.Unlock()
	var oldest time.Time
	if q.log != nil && q.log.HasUnread() {
		oldest = q.diskOldest
	}
	for _, b := range q.batches[q.head:] {
		if oldest.IsZero() || b.enqueued.Before(oldest) {
			oldest = b.enqueued
		}
	}
	return oldest
}

// memStats returns the batches, items and bytes in the memory queue.
func (q *queue[T]) memStats() (batches, items, bytes int64) {
	q.mu.Lock()
	defer q.mu.Unlock()
	return int64(q.lenLocked()), q.memItems, q.memBytes
}
