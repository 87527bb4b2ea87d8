// Handing a request's events to the pipeline, one call per signal, and the reply and counts for
// what the pipeline did with them.

package elasticapmreceiver

import (
	"context"
	"net/http"

	"go.opentelemetry.io/collector/consumer/consumererror"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.uber.org/zap"

	"github.com/tracegate/tracegate/internal/apmevent"
	"github.com/tracegate/tracegate/internal/refusalwait"
	"github.com/tracegate/tracegate/receiver/elasticapmreceiver/internal/convert"
)

// dataFormat is the format name in the receiver's standard telemetry.
const dataFormat = "elasticapm"

// consume offers each signal that has events; a refusal is answered 503 (the agent may send again
// later; 400 would tell it the events were bad), a permanent error 500.
func (r *intakeReceiver) consume(ctx context.Context, d *decoded, res *result) {
	ev := d.out.Events
	if r.cfg.Output == OutputAPMEvents {
		r.consumeSignal(ctx, res, "logs", r.next.Logs != nil, convert.EventTypes(), ev,
			func() error { return r.consumeEvents(ctx, d) })
		return
	}
	r.consumeSignal(ctx, res, "traces", r.next.Traces != nil, []convert.EventType{convert.Transaction, convert.Span}, ev,
		func() error { return r.consumeTraces(ctx, d) })
	r.consumeSignal(ctx, res, "logs", r.next.Logs != nil, []convert.EventType{convert.Error, convert.Log}, ev,
		func() error { return r.consumeLogs(ctx, d) })
	r.consumeSignal(ctx, res, "metrics", r.next.Metrics != nil, []convert.EventType{convert.Metricset}, ev,
		func() error { return r.consumeMetrics(ctx, d) })
}

func (r *intakeReceiver) consumeSignal(ctx context.Context, res *result, signal string, hasPipeline bool,
	types []convert.EventType, events convert.Counts, offer func() error,
) {
	n := 0
	for _, t := range types {
		n += events[t]
	}
	if n == 0 {
		return
	}
	if !hasPipeline {
		// Acknowledged: the configuration, not the agent, decided that these go nowhere.
		res.Accepted += n
		r.countEvents(ctx, types, events, outcomeNoPipeline)
		r.warnings.Warn("no_pipeline/"+signal, "otelcol.receiver.elasticapm.events{outcome=no_pipeline}",
			"intake events dropped: no "+signal+" pipeline takes this receiver", zap.String("signal", signal))
		return
	}
	err := offer()
	switch {
	case err == nil:
		res.Accepted += n
		r.countEvents(ctx, types, events, outcomeAccepted)
		return
	case consumererror.IsPermanent(err):
		res.add(http.StatusInternalServerError, "cannot handle stream: cannot process batch: "+err.Error(), "")
	default:
		res.add(http.StatusServiceUnavailable, "cannot handle stream: cannot process batch: "+err.Error(), "")
	}
	r.countEvents(ctx, types, events, outcomeRefused)
	r.warnings.Warn("refused/"+signal, "otelcol.receiver.elasticapm.events{outcome=refused}",
		"intake events refused by the pipeline", zap.String("signal", signal), zap.Error(err))
}

// signal is how one signal is handed on: the standard receiver counts around it (start, end),
// its data in an Output (of), and the next consumer.
type signal[T any] struct {
	start func(context.Context) context.Context
	end   func(ctx context.Context, format string, items int, err error)
	of    func(*convert.Output) T
	next  func(context.Context, T) error
	items int
}

// consumeSignal offers one signal's data, converted afresh for each re-offer, within one receiver
// operation, so that the standard accepted/refused counts see the true number.
func consumeSignal[T any](ctx context.Context, r *intakeReceiver, d *decoded, sig signal[T]) error {
	ctx = sig.start(ctx)
	data := sig.of(d.out)
	err := r.offer(ctx, func(attempt int) error {
		if attempt > 0 {
			data = sig.of(r.again(ctx, d))
		}
		return sig.next(ctx, data)
	})
	sig.end(ctx, dataFormat, sig.items, err)
	return err
}

func (r *intakeReceiver) consumeTraces(ctx context.Context, d *decoded) error {
	return consumeSignal(ctx, r, d, signal[ptrace.Traces]{
		start: r.obsrep.StartTracesOp, end: r.obsrep.EndTracesOp, next: r.next.Traces.ConsumeTraces,
		of: func(o *convert.Output) ptrace.Traces { return o.Traces }, items: d.out.Traces.SpanCount(),
	})
}

func (r *intakeReceiver) consumeLogs(ctx context.Context, d *decoded) error {
	return consumeSignal(ctx, r, d, signal[plog.Logs]{
		start: r.obsrep.StartLogsOp, end: r.obsrep.EndLogsOp, next: r.next.Logs.ConsumeLogs,
		of: func(o *convert.Output) plog.Logs { return o.Logs }, items: d.out.Logs.LogRecordCount(),
	})
}

func (r *intakeReceiver) consumeMetrics(ctx context.Context, d *decoded) error {
	return consumeSignal(ctx, r, d, signal[pmetric.Metrics]{
		start: r.obsrep.StartMetricsOp, end: r.obsrep.EndMetricsOp, next: r.next.Metrics.ConsumeMetrics,
		of: func(o *convert.Output) pmetric.Metrics { return o.Metrics }, items: d.out.Metrics.DataPointCount(),
	})
}

// consumeEvents hands the events on as they were decoded, one log record each, built afresh for
// each re-offer (a consumer may keep what it was given).
func (r *intakeReceiver) consumeEvents(ctx context.Context, d *decoded) error {
	ctx = r.obsrep.StartLogsOp(ctx)
	err := r.offer(ctx, func(int) error {
		logs := plog.NewLogs()
		if err := apmevent.Append(logs, d.events); err != nil {
			return consumererror.NewPermanent(err)
		}
		return r.next.Logs.ConsumeLogs(ctx, logs)
	})
	r.obsrep.EndLogsOp(ctx, dataFormat, len(d.events), err)
	return err
}

// offer re-offers refused data for refusal_wait.
func (r *intakeReceiver) offer(ctx context.Context, offer func(attempt int) error) error {
	return refusalwait.Offer(ctx, r.cfg.RefusalWait, offer)
}
