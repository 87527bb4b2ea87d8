package durabletailsamplingprocessor

import (
	"context"
	"fmt"

	"go.opentelemetry.io/collector/pdata/ptrace"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/tracegate/tracegate/processor/durabletailsamplingprocessor/internal/tracelog"
)

// ConsumeTraces holds each trace of the request until its decision. It returns nil only once the
// spans are held (with storage: written to the log, and fsynced with fsync: always); spans of a
// trace already kept are passed on at once, and the next consumer's answer is returned.
func (p *tailProcessor) ConsumeTraces(ctx context.Context, td ptrace.Traces) error {
	spans := int64(td.SpanCount())
	if spans == 0 {
		return nil
	}
	if reason := p.admit(0); reason != "" { // before any work: shutting down, too many traces
		return p.refuse(ctx, spans, reason, nil)
	}
	frags := splitByTrace(td)
	size, err := p.prepare(frags)
	if err != nil {
		return p.refuse(ctx, spans, reasonDiskError, err)
	}
	if reason := p.admit(size); reason != "" {
		return p.refuse(ctx, spans, reason, nil)
	}
	seg, logged, err := p.persist(ctx, frags)
	if err != nil {
		return p.refuse(ctx, spans, reasonDiskError, err)
	}
	late := p.hold(ctx, frags)
	if logged {
		p.log.Unref(seg) // the reference persist took for the request
	}
	if late.SpanCount() > 0 {
		return p.next.ConsumeTraces(ctx, late)
	}
	return nil
}

// admit returns why a request of size bytes cannot be held now, or "".
func (p *tailProcessor) admit(size int64) string {
	p.mu.Lock()
	defer p.mu.Unlock()
	switch {
	case p.closing:
		return reasonShuttingDown
	case p.heldBytes+size > p.cfg.MaxPendingMiB<<20:
		return reasonMemoryFull
	case uint64(len(p.pending.traces)) >= p.cfg.NumTraces:
		return reasonTooManyTraces
	case p.log != nil && p.log.Size()+size > p.cfg.Storage.CapacityMiB<<20:
		return reasonDiskFull
	}
	return ""
}

// prepare encodes each fragment (unless it is already) and lets the policies observe it, outside
// any lock; it returns the encoded size of them all.
func (p *tailProcessor) prepare(frags []*fragment) (int64, error) {
	size := int64(0)
	for _, f := range frags {
		if f.encoded == nil {
			b, err := marshaler.MarshalTraces(f.spans)
			if err != nil {
				return 0, err
			}
			f.encoded = b
		}
		size += int64(len(f.encoded))
		f.obs = p.policies.NewObservation()
		p.policies.Observe(f.obs, f.spans)
	}
	return size, nil
}

// persist writes the fragments as one log record and waits for it to be as durable as fsync says;
// the record's segment is referenced until the caller releases it.
func (p *tailProcessor) persist(ctx context.Context, frags []*fragment) (tracelog.SegmentID, bool, error) {
	if p.log == nil {
		return 0, false, nil
	}
	parts := recordParts(frags)
	p.logMu.Lock()
	seg, at, err := p.log.AppendPartsAt(recordSpans, parts...)
	if err == nil {
		p.log.Ref(seg)
	}
	p.logMu.Unlock()
	if err != nil {
		return 0, false, err
	}
	if err := p.log.Sync(ctx); err != nil {
		p.log.Unref(seg)
		return 0, false, err
	}
	for _, f := range frags { // each encoding follows its 4-byte length
		at += 4
		f.onDisk, f.seg, f.at = true, seg, at
		at += int64(len(f.encoded))
	}
	return seg, true, nil
}

// hold adds each fragment to its pending trace; a fragment of a trace decided already follows
// that decision: kept ones are returned to be passed on, dropped ones are counted.
func (p *tailProcessor) hold(ctx context.Context, frags []*fragment) ptrace.Traces {
	late := ptrace.NewTraces()
	var lateKept, lateDropped int64
	p.mu.Lock()
	now := p.now()
	for _, f := range frags {
		if decided, kept := p.decisions.lookup(f.id, now); decided {
			if kept {
				f.spans.ResourceSpans().MoveAndAppendTo(late.ResourceSpans())
				lateKept += f.count
			} else {
				lateDropped += f.count
			}
			continue
		}
		if p.pending.add(f, now) {
			p.log.Ref(f.seg)
		}
		if !f.onDisk {
			p.heldBytes += int64(len(f.encoded))
		}
	}
	p.publishLocked()
	p.mu.Unlock()
	p.tel.late(ctx, lateKept, lateDropped)
	return late
}

// refuse counts the request's spans and returns a retryable error: RESOURCE_EXHAUSTED with a
// RetryInfo, which OTLP/gRPC clients need to retry and OTLP/HTTP receivers answer with 429.
func (p *tailProcessor) refuse(ctx context.Context, spans int64, reason string, cause error) error {
	p.tel.refused(ctx, spans, reason)
	msg := "tail sampling cannot hold more spans now: " + reason
	if cause != nil {
		msg = fmt.Sprintf("%s: %v", msg, cause)
	}
	code := codes.ResourceExhausted
	if reason == reasonShuttingDown {
		code = codes.Unavailable
	}
	st, err := status.New(code, msg).WithDetails(&errdetails.RetryInfo{RetryDelay: durationpb.New(retryDelay)})
	if err != nil { // cannot happen: RetryInfo always marshals
		return status.Error(code, msg)
	}
	return st.Err()
}
