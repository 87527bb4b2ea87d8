package durabletailsamplingprocessor

import (
	"context"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/tracegate/tracegate/processor/durabletailsamplingprocessor/internal/metadata"
	"github.com/tracegate/tracegate/processor/durabletailsamplingprocessor/internal/policy"
)

// Reasons, as in the metrics' reason attribute.
const (
	reasonMemoryFull     = "memory_full"
	reasonDiskFull       = "disk_full"
	reasonTooManyTraces  = "too_many_traces"
	reasonDiskError      = "disk_error"
	reasonShuttingDown   = "shutting_down"
	reasonPermanentError = "permanent_error"
	reasonShutdown       = "shutdown"
)

// telemetry records the processor's metrics with attribute sets built once.
type telemetry struct {
	tb *metadata.TelemetryBuilder
	// decision options by policy name, kept and dropped.
	keptBy, droppedBy map[string]metric.MeasurementOption
	lateKept          metric.MeasurementOption
	lateDropped       metric.MeasurementOption
}

func newTelemetry(set component.TelemetrySettings, p *tailProcessor) (*telemetry, error) {
	tb, err := metadata.NewTelemetryBuilder(set)
	if err != nil {
		return nil, err
	}
	for _, register := range []error{
		tb.RegisterProcessorDurableTailSamplingTracesPendingCallback(observe(p.gaugeTraces.Load)),
		tb.RegisterProcessorDurableTailSamplingSpansPendingCallback(observe(p.gaugeSpans.Load)),
		tb.RegisterProcessorDurableTailSamplingHeldBytesCallback(observe(p.gaugeHeld.Load)),
		tb.RegisterProcessorDurableTailSamplingDiskBytesCallback(observe(p.diskBytes)),
	} {
		if register != nil {
			return nil, register
		}
	}
	t := &telemetry{
		tb: tb, keptBy: map[string]metric.MeasurementOption{}, droppedBy: map[string]metric.MeasurementOption{},
		lateKept:    decisionOption("kept"),
		lateDropped: decisionOption("dropped"),
	}
	for _, name := range append(p.policies.Names(), policy.NoPolicy) {
		t.keptBy[name] = metric.WithAttributeSet(attribute.NewSet(attribute.String("decision", "kept"), attribute.String("policy", name)))
		t.droppedBy[name] = metric.WithAttributeSet(attribute.NewSet(attribute.String("decision", "dropped"), attribute.String("policy", name)))
	}
	return t, nil
}

func observe(value func() int64) metric.Int64Callback {
	return func(_ context.Context, o metric.Int64Observer) error {
		o.Observe(value())
		return nil
	}
}

func decisionOption(d string) metric.MeasurementOption {
	return metric.WithAttributeSet(attribute.NewSet(attribute.String("decision", d)))
}

func (t *telemetry) decided(ctx context.Context, spans int64, kept bool, policyName string) {
	opt := t.droppedBy[policyName]
	if kept {
		opt = t.keptBy[policyName]
	}
	t.tb.ProcessorDurableTailSamplingTracesDecided.Add(ctx, 1, opt)
	t.tb.ProcessorDurableTailSamplingSpansDecided.Add(ctx, spans, opt)
}

func (t *telemetry) late(ctx context.Context, kept, dropped int64) {
	if kept > 0 {
		t.tb.ProcessorDurableTailSamplingLateSpans.Add(ctx, kept, t.lateKept)
	}
	if dropped > 0 {
		t.tb.ProcessorDurableTailSamplingLateSpans.Add(ctx, dropped, t.lateDropped)
	}
}

func (t *telemetry) refused(ctx context.Context, spans int64, reason string) {
	t.tb.ProcessorDurableTailSamplingRefusedSpans.Add(ctx, spans, reasonOption(reason))
}

func (t *telemetry) lost(ctx context.Context, spans int64, reason string) {
	t.tb.ProcessorDurableTailSamplingLostSpans.Add(ctx, spans, reasonOption(reason))
}

func (t *telemetry) damaged(n int64) {
	t.tb.ProcessorDurableTailSamplingDamagedBytes.Add(context.Background(), n)
}

func (t *telemetry) redelivery(ctx context.Context) {
	t.tb.ProcessorDurableTailSamplingRedeliveries.Add(ctx, 1)
}

func reasonOption(r string) metric.MeasurementOption {
	return metric.WithAttributeSet(attribute.NewSet(attribute.String("reason", r)))
}

// publishLocked copies the store's sizes for the gauges; mu is held.
func (p *tailProcessor) publishLocked() {
	p.gaugeTraces.Store(int64(len(p.pending.traces)))
	p.gaugeSpans.Store(p.pending.spans)
	p.gaugeHeld.Store(p.heldBytes)
}

func (p *tailProcessor) diskBytes() int64 {
	p.mu.Lock()
	log := p.log
	p.mu.Unlock()
	if log == nil {
		return 0
	}
	return log.Size()
}
