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
		next, d, err := p.q.take(int64(p.cfg.MaxBatchItems))
		if err != nil {
			p.logger.Warn("Reading the disk buffer failed; retrying", zap.Error(err))
		}
		switch next {
		case takeExit:
			return
		case takePause:
			// The worker stays, or a few disk errors would leave nobody to deliver.
			if !p.pauseUntil(p.timing.readErrorWait, nil) {
				return
			}
		case takeDeliver:
			id := p.inFlight.begin(d.batches)
			p.deliver(id, &d)
			p.inFlight.end(id)
		}
	}
}

// assemble decodes the payloads of the batches d holds and returns the batch the delivery sends:
// the one batch itself (its data and reference move to the delivery, see batch.go), or the batches
// merged into a new one. Undecodable payloads (checksum fine, protobuf not) are dropped and
// acknowledged; when none is left, d holds no batch and the delivery is over.
func (p *bufferProcessor[T]) assemble(d *done[T]) batch[T] {
	for i := 0; i < len(d.batches); {
		if b := &d.batches[i]; b.form == formSerialized {
			if err := p.refs().decode(b); err != nil {
				d.drop(i, reasonUndecodable)
				continue
			}
		}
		i++
	}
	switch len(d.batches) {
	case 0:
		return batch[T]{}
	case 1:
		return d.batches[0].moveOut()
	}
	merged := batch[T]{form: formDecoded, data: p.refs().newOwned()}
	for _, b := range d.batches {
		p.sig.moveAll(b.data, merged.data)
		merged.items += b.items
		merged.bytes += b.bytes
	}
	return merged
}

// deliver sends what d holds to the next consumer until it accepts it, it fails permanently,
// max_elapsed runs out, or shutdown stops retries; then it settles d.
func (p *bufferProcessor[T]) deliver(flight int, d *done[T]) {
	data := p.assemble(d)
	if len(d.batches) == 0 {
		return
	}
	items, size := p.markDispatched(d.batches)
	// A single batch above maxDeliveryBytes (one huge ConsumeTraces call) goes in parts: a next
	// consumer with a size limit (an OTLP/HTTP gateway: 8 MiB) would refuse it whole, permanently.
	// The batches' sizes are known since push, so a normal delivery costs no size pass. Only a
	// single batch can be larger: take merges up to maxDeliveryBytes.
	parts := []batch[T]{data}
	if size > maxDeliveryBytes {
		parts = p.splitParts(data, maxDeliveryBytes)
	}
	if len(parts) > 1 {
		p.logger.Debug("Delivering a large batch in parts", zap.Int64(p.sig.field(), items), zap.Int("parts", len(parts)))
	}
	defer p.refs().releaseAll(parts) // once d is settled below: nothing of the delivery is read again
	res := p.deliverParts(flight, parts)
	if res.outcome == deliveryStopped {
		p.saveRest(d, parts, res.stoppedAt)
		return
	}
	d.delivered()
	if res.outcome != deliveryAccepted {
		return // processor_buffer_time is the time to the next consumer's acceptance
	}
	now := p.timing.clock.Now()
	for _, b := range d.batches {
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

// deliveryOutcome is how a delivery's parts went.
type deliveryOutcome int

const (
	deliveryAccepted deliveryOutcome = iota // every part accepted whole
	deliveryDropped                         // some items dropped (refused permanently, max_elapsed): counted and logged
	deliveryStopped                         // shutdown stopped it
)

type deliveryResult struct {
	outcome   deliveryOutcome
	stoppedAt int // deliveryStopped: the first part not delivered whole
}

// deliverParts delivers the parts in order. A delivery in one part waits serialized between failed
// attempts; the rare delivery in parts stays decoded.
func (p *bufferProcessor[T]) deliverParts(flight int, parts []batch[T]) deliveryResult {
	form := waitDecoded
	if len(parts) == 1 {
		form = waitSerialized
	}
	res := deliveryResult{outcome: deliveryAccepted}
	for i := range parts {
		switch p.deliverPart(flight, &parts[i], form) {
		case partStopped:
			return deliveryResult{outcome: deliveryStopped, stoppedAt: i}
		case partDropped:
			res.outcome = deliveryDropped
		}
	}
	return res
}

// saveRest settles a delivery that shutdown stopped at parts[from]: what the next consumer did not
// get goes to disk with storage, or is counted as lost without (done.stopped).
func (p *bufferProcessor[T]) saveRest(d *done[T], parts []batch[T], from int) {
	left := make([]T, 0, len(parts)-from)
	for _, part := range parts[from:] {
		left = append(left, part.data)
	}
	rest := p.mergeParts(left)
	progress := nothingDelivered
	if from > 0 {
		progress = partlyDelivered
	}
	lost := d.stopped(rest, progress)
	p.lostAtShutdown.Add(lost)
	p.keptAtShutdown.Add(p.sig.items(rest) - lost)
	if len(left) > 1 {
		p.refs().releaseData(rest) // merged here
	}
}

// partOutcome is how the delivery of one part ended.
type partOutcome int

const (
	partAccepted partOutcome = iota
	partDropped              // all or some of it refused permanently, or max_elapsed ran out: counted and logged
	partStopped              // shutdown stopped it
	// partRetrying is not an end: an attempt failed with a retryable error (attemptOutcome only).
	partRetrying
)

// waitForm is how a part waits between failed attempts.
type waitForm int

const (
	waitDecoded    waitForm = iota // one of several parts: parts stay decoded
	waitSerialized                 // a delivery in one part: serialized, so the GC does not mark it again and again
)

// partRetry is one part's delivery across its attempts.
type partRetry[T any] struct {
	flight  int       // the delivery's id in inFlight
	part    *batch[T] // decoded when an attempt is made; serialized while it waits (waitSerialized)
	form    waitForm
	items   int64
	start   time.Time
	attempt attempt // the next attempt's kind
}

// deliverPart sends the part until the next consumer accepts it, it fails permanently or
// max_elapsed runs out (both dropped and counted), or shutdown stops retries.
func (p *bufferProcessor[T]) deliverPart(flight int, part *batch[T], form waitForm) partOutcome {
	r := &partRetry[T]{flight: flight, part: part, form: form, items: p.sig.items(part.data), start: p.timing.clock.Now()}
	bo := newBackoff(p.cfg.Retry)
	headDropped := false // a probe's items were refused permanently: the part is not accepted whole
	for {
		var err error
		if r.attempt == attemptProbe && r.items > probeItems && !p.sig.probeWhole() {
			var outcome headOutcome
			switch outcome, err = p.probeWithHead(part); outcome {
			case headAccepted, headRefused:
				headDropped = headDropped || outcome == headRefused
				// The next consumer answered (it is back, or refused those items for good): the
				// rest of the batch is tried at once.
				r.items, r.attempt = p.sig.items(part.data), attemptOrdinary
				continue
			case headStopped:
				return partStopped
			}
			// headFailed: the probe failed with a retryable error; the batch waits as below.
		} else {
			err = p.next(p.deliverCtx, part.data)
			if outcome := p.attemptOutcome(r, err, headDropped); outcome != partRetrying {
				return outcome
			}
			p.keepHandedBack(r, err)
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
		switch p.awaitRetry(r, wait, recovered) {
		case retryStopped:
			return partStopped
		case retryGaveUp:
			return partDropped
		}
	}
}

// attemptOutcome is how an attempt that returned err ends the part's delivery, or partRetrying
// when the error is retryable.
func (p *bufferProcessor[T]) attemptOutcome(r *partRetry[T], err error, headDropped bool) partOutcome {
	switch {
	case err != nil && p.deliverCtx.Err() != nil:
		// Shutdown's deadline cancelled the delivery: whatever the error says (permanent, or
		// max_elapsed running out now), the batch goes to disk when there is storage.
		return partStopped
	case err == nil:
		p.accepted(r.items, r.attempt)
		if headDropped {
			return partDropped
		}
		return partAccepted
	case consumererror.IsPermanent(err):
		p.refused(r.items, r.attempt, err)
		return partDropped
	}
	return partRetrying
}

// keepHandedBack narrows a part the next consumer took in part to what it handed back in its
// retryable error (the Elasticsearch exporters hand back the documents refused with 429 or 5xx):
// sending the accepted items again would only make copies, encoded and refused (409) again.
func (p *bufferProcessor[T]) keepHandedBack(r *partRetry[T], err error) {
	back, ok := p.sig.handedBack(err)
	if !ok {
		return
	}
	left := p.sig.items(back)
	if left == 0 || left >= r.items {
		return
	}
	p.items.delivered.Add(p.ctx, r.items-left, p.attrs)
	rest := p.refs().newOwned()
	p.sig.copyAll(back, rest) // back may be the consumer's: copied, not moved
	p.refs().release(r.part)
	r.part.form, r.part.data = formDecoded, rest
	r.items = left
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

// probeWithHead makes the circuit breaker's probe with the first probeItems items of the part
// instead of all of it. Items that go back to the part go back to its front: it keeps its order.
func (p *bufferProcessor[T]) probeWithHead(part *batch[T]) (headOutcome, error) {
	head := p.refs().split(part.data, probeItems)
	defer p.refs().releaseData(head)
	n := p.sig.items(head)
	err := p.next(p.deliverCtx, head)
	switch {
	case err == nil:
		p.accepted(n, attemptProbe)
		return headAccepted, nil
	case p.deliverCtx.Err() != nil:
		p.putBack(head, part.data)
		return headStopped, err
	case consumererror.IsPermanent(err):
		p.refused(n, attemptProbe, err)
		return headRefused, err
	}
	p.putBack(head, part.data)
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

// retryTurn is how a part's wait for its next attempt ended.
type retryTurn int

const (
	retryNow     retryTurn = iota // make the attempt r.attempt says
	retryStopped                  // shutdown stopped retries
	// retryGaveUp: dropped and counted: max_elapsed ran out waiting for a turn, or the part,
	// serialized while it waited, does not decode.
	retryGaveUp
)

// awaitRetry waits for the part's next attempt (waitForTurn), the part serialized meanwhile when
// r.form says so, and sets r.attempt.
func (p *bufferProcessor[T]) awaitRetry(r *partRetry[T], wait time.Duration, recovered <-chan struct{}) retryTurn {
	serialized := r.form == waitSerialized && p.spillPart(r.part)
	turn := p.waitForTurn(r, wait, recovered)
	if serialized {
		if err := p.refs().decode(r.part); err != nil {
			p.breaker.abandonProbe(r.attempt)
			p.countDrop(reasonUndecodable, r.items)
			p.logger.Error("Dropping "+p.sig.unit()+": a batch serialized while the next consumer failed does not decode", zap.Int64(p.sig.field(), r.items), zap.Error(err))
			return retryGaveUp
		}
	}
	return turn
}

// waitForTurn waits out the part's own backoff (wait, cut short when a probe succeeds:
// recovered), then its turn with the circuit breaker, and sets r.attempt.
func (p *bufferProcessor[T]) waitForTurn(r *partRetry[T], wait time.Duration, recovered <-chan struct{}) retryTurn {
	wake := recovered
	r.attempt = attemptOrdinary
	for {
		if !p.pauseUntil(wait, wake) {
			return retryStopped
		}
		g := p.breaker.turn()
		if g.granted {
			r.attempt = g.attempt
			return retryNow
		}
		if maxElapsed := p.cfg.Retry.MaxElapsed; maxElapsed > 0 && p.timing.clock.Now().Sub(r.start) >= maxElapsed {
			p.countExhausted(r.items, errors.New("the next consumer kept failing"))
			return retryGaveUp
		}
		wait, wake = g.wait, g.closed
	}
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

// spillPart serializes the part and gives back its reference, so that its memory can go while a
// retry waits; false (the part stays decoded) when it cannot be serialized.
func (p *bufferProcessor[T]) spillPart(part *batch[T]) bool {
	payload, err := p.sig.marshal(part.data)
	if err != nil {
		return false
	}
	p.refs().toSerialized(part, payload)
	return true
}
