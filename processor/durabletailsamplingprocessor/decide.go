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
		d, name := p.policies.Decide(t.id, &policy.Trace{Spans: t.spans, SpanCount: t.count}, now)
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
// refused batch stays held (clients are refused once memory is full) and is tried at the next
// tick; a permanent refusal drops it, counted.
func (p *tailProcessor) deliver(ctx context.Context) {
	if p.now().Before(p.retryAt) && !p.closingNow() {
		return
	}
	p.mu.Lock()
	batches := p.retry
	batches = append(batches, merge(p.outbox)...)
	p.retry, p.outbox = nil, nil
	p.mu.Unlock()
	for i, b := range batches {
		err := p.next.ConsumeTraces(ctx, b.td)
		if err != nil && !consumererror.IsPermanent(err) {
			p.tel.redelivery(ctx)
			p.logger.Warn("The next consumer refused kept traces; they are held and tried again",
				zap.Int64("spans", b.spans), zap.Error(err))
			p.mu.Lock()
			p.retry = append(batches[i:], p.retry...)
			p.mu.Unlock()
			p.retryWait = min(max(2*p.retryWait, retryDelay), maxRetryWait)
			p.retryAt = p.now().Add(p.retryWait)
			return
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
	}
	p.retryWait = 0
}

func (p *tailProcessor) closingNow() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.closing
}

// merge moves kept traces into deliveries of at most maxDeliverySpans spans (a larger trace goes
// alone).
func merge(traces []*pendingTrace) []*delivery {
	var out []*delivery
	var cur *delivery
	for _, t := range traces {
		if cur == nil || cur.spans+t.count > maxDeliverySpans {
			cur = &delivery{td: ptrace.NewTraces()}
			out = append(out, cur)
		}
		t.spans.ResourceSpans().MoveAndAppendTo(cur.td.ResourceSpans())
		cur.traces = append(cur.traces, t)
		cur.spans += t.count
		cur.bytes += t.bytes
	}
	return out
}
