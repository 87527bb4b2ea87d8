package durabletailsamplingprocessor

import (
	"context"
	"time"

	"go.opentelemetry.io/collector/consumer/consumererror"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.uber.org/zap"

	"github.com/tracegate/tracegate/processor/durabletailsamplingprocessor/internal/policy"
)

// retryDelay is the pause a refused client is asked to take, and the first pause before a
// refused delivery is tried again.
const retryDelay = time.Second

// maxRetryWait caps the doubling pause between attempts to pass on refused kept traces.
const maxRetryWait = 30 * time.Second

// decideDue decides the traces whose wait is over. The max_trace_wait scan runs once a second.
func (p *tailProcessor) decideDue(ctx context.Context, now time.Time) {
	p.mu.Lock()
	scan := now.Sub(p.lastScan) >= time.Second
	if scan {
		p.lastScan = now
	}
	dropped := p.decideLocked(ctx, p.pending.due(now, p.cfg.DecisionWait, p.cfg.MaxTraceWait, scan), now)
	p.publishLocked()
	p.mu.Unlock()
	p.finish(dropped)
}

// decideLocked applies the policies to traces already out of the store: kept ones join the
// outbox, dropped ones are returned for their log segments to be released.
func (p *tailProcessor) decideLocked(ctx context.Context, traces []*pendingTrace, now time.Time) []*pendingTrace {
	var dropped []*pendingTrace
	for _, t := range traces {
		d, name := p.policies.DecideObserved(t.id, t.obs, t.count, now)
		kept := d == policy.Sampled
		p.decisions.record(t.id, kept, now)
		p.tel.decided(ctx, t.count, kept, name)
		if kept {
			p.outbox = append(p.outbox, t)
			continue
		}
		p.heldBytes -= t.bytes
		dropped = append(dropped, t)
	}
	return dropped
}

// deliver passes the kept traces on, up to maxDeliverySpans per call, refused batches first. A
// refused batch stays held (clients are refused once memory is full) and is tried again after a
// pause; a permanent refusal drops it, counted. Kept traces are decoded one delivery at a time,
// and only once the refused ones went through: until then they wait encoded (on disk with
// storage), not as decoded spans.
func (p *tailProcessor) deliver(ctx context.Context) {
	if p.now().Before(p.retryAt) && !p.closingNow() {
		return
	}
	p.mu.Lock()
	retry := p.retry
	p.retry = nil
	var outbox []*pendingTrace
	if len(retry) == 0 {
		outbox, p.outbox = p.outbox, nil
	}
	p.mu.Unlock()
	for len(retry) > 0 || len(outbox) > 0 {
		var b *delivery
		if len(retry) > 0 {
			b, retry = retry[0], retry[1:]
		} else {
			b, outbox = p.merge(ctx, outbox)
		}
		if !p.send(ctx, b) {
			p.mu.Lock()
			p.retry = append(append([]*delivery{b}, retry...), p.retry...)
			p.outbox = append(outbox, p.outbox...)
			p.mu.Unlock()
			p.retryWait = min(max(2*p.retryWait, retryDelay), maxRetryWait)
			p.retryAt = p.now().Add(p.retryWait)
			return
		}
	}
	p.retryWait = 0
}

// send passes one delivery on; false: refused, to be tried again.
func (p *tailProcessor) send(ctx context.Context, b *delivery) bool {
	err := p.next.ConsumeTraces(ctx, b.td)
	if err != nil && !consumererror.IsPermanent(err) {
		p.tel.redelivery(ctx)
		p.logger.Warn("The next consumer refused kept traces; they are held and tried again",
			zap.Int64("spans", b.spans), zap.Error(err))
		return false
	}
	if err != nil {
		p.tel.lost(ctx, b.spans, reasonPermanentError)
		p.logger.Error("The next consumer refused kept traces permanently; they are dropped",
			zap.Int64("spans", b.spans), zap.Error(err))
	}
	p.mu.Lock()
	p.heldBytes -= b.bytes
	p.publishLocked()
	p.mu.Unlock()
	p.finish(b.traces)
	return true
}

func (p *tailProcessor) closingNow() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.closing
}

// merge decodes the first kept traces into one delivery of at most maxDeliverySpans spans (a
// larger trace goes alone) and returns the traces left.
func (p *tailProcessor) merge(ctx context.Context, traces []*pendingTrace) (*delivery, []*pendingTrace) {
	d := &delivery{td: ptrace.NewTraces()}
	for len(traces) > 0 {
		t := traces[0]
		if len(d.traces) > 0 && d.spans+t.count > maxDeliverySpans {
			break
		}
		traces = traces[1:]
		d.spans += t.count
		for _, h := range t.frags {
			td, err := p.load(h)
			if err != nil { // a disk read error, or damage past the checksum
				p.logger.Error("A part of a kept trace cannot be read back; it is lost", zap.Error(err))
				p.tel.lost(ctx, h.spans, reasonDiskError)
				d.spans -= h.spans
				continue
			}
			td.ResourceSpans().MoveAndAppendTo(d.td.ResourceSpans())
		}
		t.frags = nil
		d.traces = append(d.traces, t)
		d.bytes += t.bytes
	}
	return d, traces
}

// load decodes a held fragment, reading it back from the log when it is on disk.
func (p *tailProcessor) load(h heldFragment) (ptrace.Traces, error) {
	data := h.data
	if data == nil {
		data = make([]byte, h.n)
		if err := p.log.ReadAt(h.seg, h.at, data); err != nil {
			return ptrace.Traces{}, err
		}
	}
	return unmarshaler.UnmarshalTraces(data)
}
