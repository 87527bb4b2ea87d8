// Handing a request's events to the pipeline, one call per signal, and the reply and counts for
// what the pipeline did with them.

package elasticapmreceiver

import (
	"context"
	"net/http"

	"go.opentelemetry.io/collector/consumer/consumererror"
	"go.uber.org/zap"

	"github.com/tracegate/tracegate/internal/refusalwait"
	"github.com/tracegate/tracegate/receiver/elasticapmreceiver/internal/convert"
)

// dataFormat is the format name in the receiver's standard telemetry.
const dataFormat = "elasticapm"

// consume offers each signal that has events; a refusal is answered 503 (the agent may send again
// later; 400 would tell it the events were bad), a permanent error 500.
func (r *intakeReceiver) consume(ctx context.Context, d *decoded, res *result) {
	ev := d.out.Events
	r.consumeSignal(ctx, res, "traces", r.nextTraces != nil, []convert.EventType{convert.Transaction, convert.Span}, ev,
		func() error { return r.consumeTraces(ctx, d) })
	r.consumeSignal(ctx, res, "logs", r.nextLogs != nil, []convert.EventType{convert.Error, convert.Log}, ev,
		func() error { return r.consumeLogs(ctx, d) })
	r.consumeSignal(ctx, res, "metrics", r.nextMetrics != nil, []convert.EventType{convert.Metricset}, ev,
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

func (r *intakeReceiver) consumeTraces(ctx context.Context, d *decoded) error {
	ctx = r.obsrep.StartTracesOp(ctx)
	td := d.out.Traces
	err := r.offer(ctx, func(attempt int) error {
		if attempt > 0 {
			td = r.again(ctx, d).Traces
		}
		return r.nextTraces.ConsumeTraces(ctx, td)
	})
	r.obsrep.EndTracesOp(ctx, dataFormat, d.out.Traces.SpanCount(), err)
	return err
}

func (r *intakeReceiver) consumeLogs(ctx context.Context, d *decoded) error {
	ctx = r.obsrep.StartLogsOp(ctx)
	ld := d.out.Logs
	err := r.offer(ctx, func(attempt int) error {
		if attempt > 0 {
			ld = r.again(ctx, d).Logs
		}
		return r.nextLogs.ConsumeLogs(ctx, ld)
	})
	r.obsrep.EndLogsOp(ctx, dataFormat, d.out.Logs.LogRecordCount(), err)
	return err
}

func (r *intakeReceiver) consumeMetrics(ctx context.Context, d *decoded) error {
	ctx = r.obsrep.StartMetricsOp(ctx)
	md := d.out.Metrics
	err := r.offer(ctx, func(attempt int) error {
		if attempt > 0 {
			md = r.again(ctx, d).Metrics
		}
		return r.nextMetrics.ConsumeMetrics(ctx, md)
	})
	r.obsrep.EndMetricsOp(ctx, dataFormat, d.out.Metrics.DataPointCount(), err)
	return err
}

// offer re-offers refused data for refusal_wait.
func (r *intakeReceiver) offer(ctx context.Context, offer func(attempt int) error) error {
	return refusalwait.Offer(ctx, r.cfg.RefusalWait, offer)
}
