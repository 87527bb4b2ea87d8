// Admission control: a bounded number of requests is read and decoded at once, within a bounded
// decode memory, so the receiver's memory stays bounded whatever the number of connections.

package ddtracereceiver

import (
	"context"
	"fmt"
	"net/http"
	"time"
)

// decodeExpansion is the memory reserved per body byte before decoding: the worst crafted body
// takes 54 × decoded and translated (TestDecodeMemoryReservationCoversTheWorstBody), plus a margin.
const decodeExpansion = 64

// admitSlot takes a decoder slot within deadline, or drains the body and returns why not: the
// client went away, or errQueueTimeout. The caller releases the slot with releaseSlot.
func (r *ddReceiver) admitSlot(ctx context.Context, req *http.Request, deadline time.Time) error {
	if r.acquireSlot(ctx, deadline) {
		return nil
	}
	drain(req.Body)
	if ctx.Err() != nil {
		return ctx.Err()
	}
	// Not decoded, so its spans are unknown; the tracer's trace count goes into the log.
	if n := req.Header.Get("X-Datadog-Trace-Count"); n != "" {
		return fmt.Errorf("%w (X-Datadog-Trace-Count: %s)", errQueueTimeout, n)
	}
	return errQueueTimeout
}

func (r *ddReceiver) releaseSlot() { <-r.slots }

// acquireSlot takes a decoder slot, waiting until deadline (a free slot is taken at once, also
// with queue_timeout 0). false: none came in time, or the client went away.
func (r *ddReceiver) acquireSlot(ctx context.Context, deadline time.Time) bool {
	select {
	case r.slots <- struct{}{}:
		return true
	default:
	}
	timer := time.NewTimer(time.Until(deadline))
	defer timer.Stop()
	select {
	case r.slots <- struct{}{}:
		return true
	case <-timer.C:
		return false
	case <-ctx.Done():
		return false
	}
}

// admitDecode reserves decode memory for a body of bodyLen bytes within deadline and returns what
// it took (for r.decodeMemory.Release), or why not: the client went away, or errDecodeMemory.
func (r *ddReceiver) admitDecode(ctx context.Context, bodyLen int, deadline time.Time) (int64, error) {
	reserved, ok := r.reserveDecodeMemory(ctx, bodyLen, deadline)
	switch {
	case ok:
		return reserved, nil
	case ctx.Err() != nil:
		return 0, ctx.Err()
	}
	return 0, errDecodeMemory
}

// reserveDecodeMemory takes decodeExpansion × bodyLen of decode_memory_mib (all of it when that is
// more), waiting until deadline; room free now is taken even past it. false: none came in time.
func (r *ddReceiver) reserveDecodeMemory(ctx context.Context, bodyLen int, deadline time.Time) (int64, bool) {
	n := min(int64(bodyLen)*decodeExpansion, r.cfg.DecodeMemoryMiB<<20)
	if r.decodeMemory.TryAcquire(n) {
		return n, true
	}
	if !time.Now().Before(deadline) {
		return 0, false
	}
	wait, cancel := context.WithDeadline(ctx, deadline)
	defer cancel()
	if err := r.decodeMemory.Acquire(wait, n); err != nil {
		return 0, false
	}
	return n, true
}
