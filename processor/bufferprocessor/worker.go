package bufferprocessor

import (
	"errors"
	"time"

	"go.opentelemetry.io/collector/consumer/consumererror"
	"go.uber.org/zap"

	"github.com/tracegate/tracegate/processor/bufferprocessor/internal/diskqueue"
)

// worker delivers queued batches to the next consumer until the queue tells it to stop.
func (p *bufferProcessor[T]) worker() {
	defer p.wg.Done()
	for {
		batches, ok, err := p.q.take(int64(p.cfg.MaxBatchItems))
		if err != nil {
			p.logger.Warn("Reading the disk buffer failed; retrying", zap.Error(err))
			if len(batches) == 0 {
				// take reports ok false with a read error; the worker stays, or a few disk errors
				// would leave nobody to deliver.
				if !p.pauseUntil(p.timing.readErrorWait, nil) {
					return
				}
				continue
			}
		}
		if !ok {
			return
		}
		if len(batches) > 0 {
			id := p.inFlight.begin(batches)
			p.deliver(id, batches)
			p.inFlight.end(id)
		}
	}
}

// assemble decodes disk payloads and merges the batches into the one a delivery sends. Undecodable payloads
// (checksum fine, protobuf not) are dropped and acknowledged.
//
// Every batch assemble makes is marked as owned by the pipeline, which makes its one reference
// the buffer's (see batch): otherwise the next consumer's wrapper in the collector would take
// ownership and release the batch after the first attempt, and a retry would send freed data.
func (p *bufferProcessor[T]) assemble(batches []batch[T]) ([]batch[T], T) {
	kept := batches[:0]
	for _, b := range batches {
		if b.payload != nil {
			data, err := p.sig.unmarshal(b.payload)
			if err != nil {
				p.q.drop(b, reasonUndecodable)
				continue
			}
			p.sig.markOwned(data)
			b.data, b.payload = data, nil
		}
		kept = append(kept, b)
	}
	if len(kept) == 1 {
		return kept, kept[0].data
	}
	merged := p.sig.newOwned()
	for _, b := range kept {
		p.sig.moveAll(b.data, merged)
	}
	return kept, merged
}

// deliver sends the batches merged into one until the next consumer accepts it, it fails permanently, max_elapsed
// runs out, or shutdown stops retries.
func (p *bufferProcessor[T]) deliver(flight int, batches []batch[T]) {
	batches, data := p.assemble(batches)
	if len(batches) == 0 {
		return
	}
	if len(batches) == 1 {
		// The delivery holds the batch's one reference from here (released with it): while the
		// next consumer fails, deliverPart replaces the batch, and nothing may keep the old one.
		batches[0].data = var0[T]()
	}
	items, size := p.markDispatched(batches)
	// A single batch above maxDeliveryBytes (one huge ConsumeTraces call) goes in parts: a next consumer
	// with a size limit (an OTLP/HTTP gateway: 8 MiB) would refuse it whole, permanently.
	parts := []T{data}
	// The batches' sizes are known since push, so a normal delivery costs no size pass. Only a
	// single batch can be larger: take merges up to maxDeliveryBytes.
	if size > maxDeliveryBytes {
		parts = p.splitBySize(data, maxDeliveryBytes)
	}
	// A delivery in one part waits serialized between failed attempts (deliverPart); parts[0] is
	// then its only holder. The rare delivery in parts stays decoded.
	single := len(parts) == 1
	if single {
		data = var0[T]()
	} else {
		p.logger.Debug("Delivering a large batch in parts", zap.Int64(p.sig.field(), items), zap.Int("parts", len(parts)))
	}
	defer func() {
		if single {
			p.releaseDelivery(batches, parts[0])
			return
		}
		p.releaseParts(parts, data)
		p.releaseDelivery(batches, data)
	}()
	form := waitDecoded
	if single {
		form = waitSerialized
	}
	accepted, stopped := p.deliverParts(flight, batches, parts, form)
	if stopped {
		return
	}
	p.finish(batches)
	if !accepted {
		return // processor_buffer_time is the time to the next consumer's acceptance
	}
	now := p.timing.clock.Now()
	for _, b := range batches {
		p.tel.ProcessorBufferTime.Record(p.ctx, now.Sub(b.enqueued).Seconds(), p.attrs)
	}
}

// markDispatched records in the disk log that the delivery's records are about to be handed to
// the next consumer, and returns the delivery's items and serialized size (known since push, or
// the record's length).
func (p *bufferProcessor[T]) markDispatched(batches []batch[T]) (items, size int64) {
	var onDisk []diskqueue.Pos
	for _, b := range batches {
		items += b.items
		size += b.bytes
		if b.onDisk {
			onDisk = append(onDisk, b.pos)
		}
	}
	if len(onDisk) > 0 {
		if err := p.q.log.MarkDispatched(onDisk); err != nil {
			// Only the duplicate accounting after a crash suffers.
			p.logger.Warn("Recording a dispatch in the disk buffer failed", zap.Error(err))
		}
	}
	return items, size
}

// deliverParts delivers the parts in order; accepted: every part was accepted whole; stopped:
// shutdown stopped the delivery, and what was not delivered went to disk (or is counted as lost
// without storage).
func (p *bufferProcessor[T]) deliverParts(flight int, batches []batch[T], parts []T, form waitForm) (accepted, stopped bool) {
	accepted = true
	for i := range parts {
		switch p.deliverPart(flight, &parts[i], form) {
		case partStopped:
			rest := p.mergeParts(parts[i:])
			progress := nothingDelivered
			if i > 0 {
				progress = partlyDelivered
			}
			lost := p.q.abandon(batches, rest, progress)
			p.lostAtShutdown.Add(lost)
			p.keptAtShutdown.Add(p.sig.items(rest) - lost)
			if len(parts)-i > 1 {
				p.sig.unref(rest) // merged here
			}
			return false, true
		case partDropped:
			accepted = false
		}
	}
	return accepted, false
}

// partOutcome is how the delivery of one part ended.
type partOutcome int

const (
	partAccepted partOutcome = iota
	partDropped              // all or some of it refused permanently, or max_elapsed ran out: counted and logged
	partStopped              // shutdown stopped it
)

// waitForm is how a part waits between failed attempts.
type waitForm int

const (
	waitDecoded    waitForm = iota // one of several parts: parts stay decoded (they share the merged batch)
	waitSerialized                 // a delivery in one part: serialized, so the GC does not mark it again and again
)

// partRetry is one part's delivery across its attempts.
type partRetry[T comparable] struct {
	flight  int // the delivery's id in inFlight
	data    *T  // the part; a new batch (the same items) after waiting serialized
	form    waitForm
	items   int64
	start   time.Time
	attempt attempt // the next attempt's kind
}

// deliverPart sends *data until the next consumer accepts it, it fails permanently or max_elapsed
// runs out (both dropped and counted), or shutdown stops retries.
func (p *bufferProcessor[T]) deliverPart(flight int, data *T, form waitForm) partOutcome {
	r := &partRetry[T]{flight: flight, data: data, form: form, items: p.sig.items(*data), start: p.timing.clock.Now()}
	bo := newBackoff(p.cfg.Retry)
	headDropped := false // a probe's items were refused permanently: the part is not accepted whole
	for {
		var err error
		if r.attempt == attemptProbe && r.items > probeItems && !p.sig.probeWhole() {
			var outcome headOutcome
			switch outcome, err = p.probeWithHead(data); outcome {
			case headAccepted, headRefused:
				headDropped = headDropped || outcome == headRefused
				// The next consumer answered (it is back, or refused those items for good): the
				// rest of the batch is tried at once.
				r.items, r.attempt = p.sig.items(*data), attemptOrdinary
				continue
			case headStopped:
				return partStopped
			}
			// headFailed: the probe failed with a retryable error; the batch waits as below.
		} else {
			err = p.next(p.deliverCtx, *data)
			if outcome, done := p.attemptOutcome(r, err, headDropped); done {
				return outcome
			}
		}
		recovered := p.attemptFailed(r.attempt)
		p.inFlight.markRetrying(r.flight)
		now := p.timing.clock.Now()
		wait, again := bo.next(now.Sub(r.start))
		p.state.failed(err, wait, now)
		if !again {
			p.countExhausted(r.items, err)
			return partDropped
		}
		p.tel.ProcessorBufferRetries.Add(p.ctx, 1, p.attrs)
		if outcome := p.awaitRetry(r, wait, recovered); outcome != partAccepted {
			return outcome
		}
	}
}

// attemptOutcome ends a part's delivery after an attempt that returned err, unless the error is
// retryable (done false).
func (p *bufferProcessor[T]) attemptOutcome(r *partRetry[T], err error, headDropped bool) (outcome partOutcome, done bool) {
	switch {
	case err != nil && p.deliverCtx.Err() != nil:
		// Shutdown's deadline cancelled the delivery: whatever the error says (permanent, or
		// max_elapsed running out now), the batch goes to disk when there is storage.
		return partStopped, true
	case err == nil:
		p.accepted(r.items, r.attempt)
		if headDropped {
			return partDropped, true
		}
		return partAccepted, true
	case consumererror.IsPermanent(err):
		p.refused(r.items, r.attempt, err)
		return partDropped, true
	}
	return partAccepted, false
}

// probeItems bounds what a probe sends (spans, log records; a metric batch is probed whole:
// signal.probeWhole). A probe asks whether the next consumer is back, and a few items answer that
// as well as thousands; the Elasticsearch exporter encodes whatever it is
// given before it finds the cluster gone, so a whole 2,048-span batch cost a core ~30 ms at every
// probe while clients waited for it (measured in docs/benchmarks.md).
const probeItems = 64

// headOutcome is how a probe made with a batch's first items ended.
type headOutcome int

const (
	headAccepted headOutcome = iota // delivered, and removed from the batch: the breaker closes
	headRefused                     // refused permanently: dropped (counted), removed from the batch
	headFailed                      // a retryable error: back in the batch, the probe failed
	headStopped                     // shutdown: back in the batch
)

// probeWithHead makes the circuit breaker's probe with the first probeItems items of *data instead
// of the whole batch. Items that go back to *data go back to its front: the batch keeps its order.
func (p *bufferProcessor[T]) probeWithHead(data *T) (headOutcome, error) {
	head := p.sig.moveLeading(*data, probeItems)
	defer p.sig.unref(head)
	n := p.sig.items(head)
	err := p.next(p.deliverCtx, head)
	switch {
	case err == nil:
		p.accepted(n, attemptProbe)
		return headAccepted, nil
	case p.deliverCtx.Err() != nil:
		p.putBack(head, *data)
		return headStopped, err
	case consumererror.IsPermanent(err):
		p.refused(n, attemptProbe, err)
		return headRefused, err
	}
	p.putBack(head, *data)
	return headFailed, err
}

// putBack returns the head a probe took to the front of data (two moves of the resource slices,
// no copy).
func (p *bufferProcessor[T]) putBack(head, data T) {
	p.sig.moveAll(data, head)
	p.sig.moveAll(head, data)
}

// accepted counts items the next consumer accepted; a success closes the circuit breaker.
func (p *bufferProcessor[T]) accepted(items int64, a attempt) {
	p.items.delivered.Add(p.ctx, items, p.attrs)
	if p.breaker.succeeded(a) {
		p.state.succeeded(p.timing.clock.Now())
		p.q.breakerOpen.Store(false)
		p.logger.Debug("A delivery succeeded: queued batches stay decoded again")
	}
}

// refused drops and counts items the next consumer refused permanently.
func (p *bufferProcessor[T]) refused(items int64, a attempt, err error) {
	p.breaker.abandonProbe(a)
	p.countDrop(reasonPermanent, items)
	p.logger.Error("Dropping "+p.sig.unit()+": the next consumer refused them permanently", zap.Int64(p.sig.field(), items), zap.Error(err))
}

func (p *bufferProcessor[T]) countExhausted(items int64, err error) {
	p.countDrop(reasonExhausted, items)
	p.logger.Error("Dropping "+p.sig.unit()+": retry.max_elapsed exceeded", zap.Int64(p.sig.field(), items), zap.Duration("max_elapsed", p.cfg.Retry.MaxElapsed), zap.Error(err))
}

// attemptFailed records a retryable failure with the circuit breaker and, when the breaker opens
// with it, serializes the memory queue's decoded batches. It returns the channel closed when a
// probe succeeds.
func (p *bufferProcessor[T]) attemptFailed(a attempt) <-chan struct{} {
	opened, recovered := p.breaker.failed(a)
	if opened {
		p.q.breakerOpen.Store(true)
		n := p.q.spill()
		p.logger.Debug("The next consumer fails: queued batches wait serialized until a delivery succeeds", zap.Int("batches_serialized", n))
	}
	return recovered
}

// awaitRetry waits for the part's next attempt: its own backoff (wait, cut short when a probe
// succeeds: recovered), then its turn with the circuit breaker, the part serialized meanwhile when
// r.form says so. It sets r.attempt and returns partAccepted to make it, partStopped (shutdown) or
// partDropped (max_elapsed ran out waiting for a turn, or the serialized part does not decode;
// counted).
func (p *bufferProcessor[T]) awaitRetry(r *partRetry[T], wait time.Duration, recovered <-chan struct{}) partOutcome {
	var payload []byte
	if r.form == waitSerialized {
		payload = p.spillBatch(r.data)
	}
	outcome := partAccepted
	wake := recovered
	r.attempt = attemptOrdinary
	for {
		if !p.pauseUntil(wait, wake) {
			outcome = partStopped
			break
		}
		ok, a, w, closed := p.breaker.turn()
		if ok {
			r.attempt = a
			break
		}
		if maxElapsed := p.cfg.Retry.MaxElapsed; maxElapsed > 0 && p.timing.clock.Now().Sub(r.start) >= maxElapsed {
			p.countExhausted(r.items, errors.New("the next consumer kept failing"))
			outcome = partDropped
			break
		}
		wait, wake = w, closed
	}
	if payload != nil {
		if err := p.restoreBatch(r.data, payload); err != nil {
			p.breaker.abandonProbe(r.attempt)
			p.countDrop(reasonUndecodable, r.items)
			p.logger.Error("Dropping "+p.sig.unit()+": a batch serialized while the next consumer failed does not decode", zap.Int64(p.sig.field(), r.items), zap.Error(err))
			return partDropped
		}
	}
	return outcome
}

// pauseUntil waits d, or until wake is closed (nil: never); false when retries are stopped
// (shutdown).
func (p *bufferProcessor[T]) pauseUntil(d time.Duration, wake <-chan struct{}) bool {
	t := p.timing.clock.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.Chan():
		return true
	case <-wake:
		return true
	case <-p.stopRetry:
		return false
	}
}

// spillBatch serializes *data and gives back its reference, so that the batch's memory can go
// while a retry waits; nil (data kept) if it cannot be serialized.
func (p *bufferProcessor[T]) spillBatch(data *T) []byte {
	payload, err := p.sig.marshal(*data)
	if err != nil {
		return nil
	}
	p.sig.unref(*data)
	*data = var0[T]()
	return payload
}

// restoreBatch decodes what spillBatch serialized into *data, a batch owned by the buffer (see
// assemble). The same bytes decode to the same batch: the retry sends what the failed attempt sent.
func (p *bufferProcessor[T]) restoreBatch(data *T, payload []byte) error {
	d, err := p.sig.unmarshal(payload)
	if err != nil {
		return err
	}
	p.sig.markOwned(d)
	*data = d
	return nil
}

// releaseDelivery gives back the references of a delivery's batches and of the batch merged from
// them (see batch and assemble): once the delivery is over, nothing of it is read again.
func (p *bufferProcessor[T]) releaseDelivery(batches []batch[T], data T) {
	if data != var0[T]() {
		p.sig.unref(data)
	}
	for i := range batches {
		batches[i].release(p.sig)
	}
}

// finish acknowledges batches that left the buffer.
func (p *bufferProcessor[T]) finish(batches []batch[T]) {
	if err := p.q.ack(batches); err != nil {
		// The records will be delivered again after a restart: duplicates, never a loss.
		p.logger.Warn("Acknowledging records in the disk buffer failed", zap.Error(err))
	}
}
