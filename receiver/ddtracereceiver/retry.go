// Re-offers of a payload the pipeline refused for a moment: the agent holds a tracer rather than
// drop its spans, and most tracers never resend a payload.

package ddtracereceiver

import (
	"context"

	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/tracegate/tracegate/internal/refusalwait"
	"github.com/tracegate/tracegate/receiver/ddtracereceiver/internal/metadata"
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
// refusal_wait has passed or the client went away. Each re-offer is a fresh translation (again).
func (r *ddReceiver) consumeWaiting(ctx context.Context, td ptrace.Traces, again func() ptrace.Traces) error {
	return refusalwait.Offer(ctx, r.cfg.RefusalWait, func(attempt int) error {
		if attempt > 0 {
			td = again()
		}
		return r.next.ConsumeTraces(ctx, td)
	})
}
