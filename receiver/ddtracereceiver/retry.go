// Re-offers of a payload the pipeline refused for a moment: the agent holds a tracer rather than
// drop its spans, and most tracers never resend a payload.

package ddtracereceiver

import (
	"context"
	"time"

	"go.opentelemetry.io/collector/consumer/consumererror"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/tracegate/tracegate/receiver/ddtracereceiver/internal/metadata"
)

// Backoff between offers of a refused payload: short, because the buffer frees room as soon as a
// delivery completes.
const (
	firstRefusalBackoff = 5 * time.Millisecond
	maxRefusalBackoff   = 100 * time.Millisecond
)

// consume hands td (spans spans) to the pipeline within one receiver operation, so the standard
// accepted/refused span counts see the true number.
func (r *ddReceiver) consume(ctx context.Context, td ptrace.Traces, spans int, again func() ptrace.Traces) error {
	ctx = r.obsrep.StartTracesOp(ctx)
	err := r.consumeWaiting(ctx, td, again)
	r.obsrep.EndTracesOp(ctx, metadata.Type.String(), spans, err)
	return err
}

// consumeWaiting offers td again while the pipeline refuses it with a retryable error, until
// refusal_wait has passed or the client went away. Each re-offer is a fresh translation (again):
// a processor before the refusing one may have changed td in place.
func (r *ddReceiver) consumeWaiting(ctx context.Context, td ptrace.Traces, again func() ptrace.Traces) error {
	deadline := time.Now().Add(r.cfg.RefusalWait)
	backoff := firstRefusalBackoff
	for {
		err := r.next.ConsumeTraces(ctx, td)
		left := time.Until(deadline)
		if err == nil || consumererror.IsPermanent(err) || left <= 0 {
			return err
		}
		t := time.NewTimer(min(backoff, left))
		select {
		case <-ctx.Done():
			t.Stop()
			return err
		case <-t.C:
		}
		backoff = min(2*backoff, maxRefusalBackoff)
		td = again()
	}
}
