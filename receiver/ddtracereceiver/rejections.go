// The answer to a request not taken: every one counted by cause, only the first of each cause
// logged, since a misbehaving tracer or a full pipeline would otherwise log once per request.

package ddtracereceiver

import (
	"context"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.uber.org/zap"
)

const rejectedMetric = "otelcol.receiver.ddtrace.requests.rejected"

// reject maps err to the reply (spans: how many the pipeline refused, 0 when it never saw them,
// for the log), counts the request in requests.rejected and warns on the first of its cause;
// later ones go to the debug log.
func (r *ddReceiver) reject(ctx context.Context, ep endpoint, realStatus bool, spans int, err error) *reply {
	cause := causeOf(err)
	rep := replyFor(cause, err, realStatus, r.cfg.RefusalStatus)
	r.telemetry.ReceiverDdtraceRequestsRejected.Add(ctx, 1, metric.WithAttributes(
		attribute.String("endpoint", ep.name), attribute.String("reason", cause),
	))
	msg := "bad trace request"
	if rep.refused {
		msg = "trace payload refused"
	}
	fields := []zap.Field{
		zap.String("endpoint", ep.name), zap.String("reason", cause), zap.Int("spans", spans),
		zap.Int("status", rep.status), zap.Error(err),
	}
	if !r.warnings.Warn("request/"+cause, rejectedMetric, msg, fields...) {
		r.set.Logger.Debug(msg, fields...)
	}
	return &rep
}
