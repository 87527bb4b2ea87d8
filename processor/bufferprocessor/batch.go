package bufferprocessor

import (
	"time"

	"go.uber.org/zap"

	"github.com/tracegate/tracegate/processor/bufferprocessor/internal/diskqueue"
)

// Who owns a batch's pdata, and when its reference is taken and given back.
//
// The pipeline lends ConsumeTraces (ConsumeLogs, ConsumeMetrics) its data and releases it when the
// call returns: with the collector's pdata.useProtoPooling gate, into pdata's pools for the next
// request. The buffer keeps batches far longer (queued, merged, retried), so it holds a pdata
// reference (xpdata/pref) of its own on every batch it keeps decoded:
//
//	ConsumeTraces ── adopt: +1 ──▶ decoded batch
//	                                    │ push
//	      ┌───────────────────────── queued (queue.go) ─────────────────────────┐
//	      │  decoded ── breaker open, spill ──▶ serialized (toSerialized: −1)   │
//	      │  written to the disk log, unread: no batch in memory (release: −1)  │
//	      │  dropped (drop_oldest): record acknowledged (release: −1)           │
//	      └──────────────────────────────┬──────────────────────────────────────┘
//	                                     │ take: the batches and their done go to one worker
//	                                     ▼
//	      delivery (worker.go): payloads decoded (+1 each), several batches merged into a new
//	      one (+1); a part waiting to retry serialized (−1) and decoded again (+1)
//	                                     │ accepted, dropped and counted, or stopped by shutdown
//	                                     ▼
//	      done: disk records acknowledged (or what is left saved, at shutdown); the batches'
//	      references released (−1 each), then the delivery's parts' (−1 each)
//
// The rule: a decoded batch carries exactly one buffer reference, owned by whoever holds the batch
// (a queue slot, then the worker that took it); handing a batch on hands its reference on; whoever
// serializes, drops or finishes a batch gives its reference back. refs is the only code that
// takes or gives back references: nothing else calls the signal's ref, unref or markOwned.

// batchForm is how a batch holds its items.
type batchForm uint8

const (
	// formNone: no items in memory. A batch a delivery took the data of (moveOut), or a released one.
	formNone batchForm = iota
	// formDecoded: data, carrying one buffer reference.
	formDecoded
	// formSerialized: payload, the items in protobuf; no reference. While the circuit breaker is not
	// closed (see attemptFailed), and as read back from disk.
	formSerialized
)

// batch is one queued batch: what one ConsumeTraces call handed over, or one record read back
// from disk. A batch onDisk owns a disk record that must be acknowledged once delivered or
// dropped (done).
type batch[T any] struct {
	form     batchForm
	data     T      // formDecoded
	payload  []byte // formSerialized
	items    int64
	bytes    int64 // serialized size: known since push, or the record's length
	enqueued time.Time
	pos      diskqueue.Pos
	onDisk   bool
}

// serializedBatch is a batch holding payload, which carries no reference.
func serializedBatch[T any](payload []byte, items int64, enqueued time.Time) batch[T] {
	return batch[T]{form: formSerialized, payload: payload, items: items, bytes: int64(len(payload)), enqueued: enqueued}
}

// moveOut returns a batch holding b's items and its reference; b keeps its accounting (items,
// enqueue time, disk record) and holds nothing.
func (b *batch[T]) moveOut() batch[T] {
	out := *b
	var zero T
	b.form, b.data, b.payload = formNone, zero, nil
	return out
}

// refs takes and gives back the buffer's pdata references (see the rule above).
type refs[T any] struct{ sig signal[T] }

func (p *bufferProcessor[T]) refs() refs[T] { return refs[T]{p.sig} }

// adopt makes a decoded batch of data that ConsumeTraces was lent: the buffer's own reference.
func (r refs[T]) adopt(data T, items int64, enqueued time.Time) batch[T] {
	r.sig.ref(data)
	return batch[T]{form: formDecoded, data: data, items: items, enqueued: enqueued}
}

// toSerialized gives back b's reference and has it hold payload, its items serialized, instead.
func (r refs[T]) toSerialized(b *batch[T], payload []byte) {
	r.release(b)
	b.form, b.payload = formSerialized, payload
}

// decode makes serialized b decoded: a new batch owned by the buffer, so that the next consumer's
// wrapper in the collector leaves it alone (otherwise it would take ownership and release the
// batch after the first attempt, and a retry would send freed data). The same bytes decode to the
// same batch: a retry sends what the failed attempt sent. On error b is left as it was.
func (r refs[T]) decode(b *batch[T]) error {
	data, err := r.decodeData(b.payload)
	if err != nil {
		return err
	}
	b.form, b.data, b.payload = formDecoded, data, nil
	return nil
}

// release gives back b's reference, if it holds one; b then holds nothing.
func (r refs[T]) release(b *batch[T]) {
	if b.form == formDecoded {
		r.sig.unref(b.data)
	}
	var zero T
	b.form, b.data, b.payload = formNone, zero, nil
}

// releaseAll releases every batch of bs.
func (r refs[T]) releaseAll(bs []batch[T]) {
	for i := range bs {
		r.release(&bs[i])
	}
}

// The data-level forms of the above, for the batches a delivery makes and lets go within one
// function (merged rests, probes' heads, parts).

// newOwned returns an empty batch owned by the buffer (see decode), with its reference.
func (r refs[T]) newOwned() T { return r.sig.newOwned() }

// decodeData decodes payload into data owned by the buffer (see decode), with its reference.
func (r refs[T]) decodeData(payload []byte) (T, error) {
	data, err := r.sig.unmarshal(payload)
	if err != nil {
		return data, err
	}
	r.sig.markOwned(data)
	return data, nil
}

// split moves about the first n items of data into new data owned by the buffer, with its
// reference (signal.moveLeading).
func (r refs[T]) split(data T, n int) T { return r.sig.moveLeading(data, n) }

// releaseData gives back the reference of data made by newOwned, decodeData or split.
func (r refs[T]) releaseData(data T) { r.sig.unref(data) }

// done settles what a worker took from the queue (take), as the persistent queue's Done does:
// until then the worker owns the batches, their references and their unacknowledged disk records.
// The worker calls delivered or stopped once its delivery is over (a second call does nothing);
// drop lets go of a batch that cannot be delivered before that.
type done[T any] struct {
	q       *queue[T]
	batches []batch[T]
	settled bool
}

// drop counts batches[i] as dropped for reason, acknowledges its record, releases it and removes
// it from the delivery.
func (d *done[T]) drop(i int, reason string) {
	d.q.drop(d.batches[i], reason)
	d.batches = append(d.batches[:i], d.batches[i+1:]...)
}

// delivered settles batches the next consumer accepted, or that were dropped and counted: their
// disk records are acknowledged and their references released.
func (d *done[T]) delivered() {
	if d.settled {
		return
	}
	d.settled = true
	if err := d.q.ack(d.batches); err != nil {
		// The records will be delivered again after a restart: duplicates, never a loss.
		d.q.logger.Warn("Acknowledging records in the disk buffer failed", zap.Error(err))
	}
	refs[T]{d.q.sig}.releaseAll(d.batches)
}

// stopped settles a delivery shutdown stopped: rest is what the next consumer did not get (all of
// it with nothingDelivered), saved to disk with storage and counted as dropped without (see
// queue.abandon). It returns the items lost.
func (d *done[T]) stopped(rest T, progress deliveryProgress) (lost int64) {
	if d.settled {
		return 0
	}
	d.settled = true
	lost = d.q.abandon(d.batches, rest, progress)
	refs[T]{d.q.sig}.releaseAll(d.batches)
	return lost
}
