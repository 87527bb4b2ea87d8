package bufferprocessor

import (
	"context"
	"errors"
	"fmt"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/tracegate/tracegate/processor/bufferprocessor/internal/metadata"
)

// itemTelemetry is one signal's item counters and gauges: processor_buffer_<what>_spans,
// _log_records or _metric_points, as the exporters' sent_spans, sent_log_records and
// sent_metric_points. Batches, bytes, retries and times have one metric for every signal: the
// collector tells the signals apart by the otelcol.signal and otelcol.pipeline.id attributes.
type itemTelemetry struct {
	enqueued, delivered, refused, dropped          metric.Int64Counter
	registerMemory, registerDisk, registerInFlight func(metric.Int64Callback) error
	registerRetrying                               func(metric.Int64Callback) error
}

func spanTelemetry(tb *metadata.TelemetryBuilder) itemTelemetry {
	return itemTelemetry{
		enqueued: tb.ProcessorBufferEnqueuedSpans, delivered: tb.ProcessorBufferDeliveredSpans,
		refused: tb.ProcessorBufferRefusedSpans, dropped: tb.ProcessorBufferDroppedSpans,
		registerMemory: tb.RegisterProcessorBufferMemorySpansCallback, registerDisk: tb.RegisterProcessorBufferDiskSpansCallback,
		registerInFlight: tb.RegisterProcessorBufferInFlightSpansCallback, registerRetrying: tb.RegisterProcessorBufferRetryingSpansCallback,
	}
}

func logRecordTelemetry(tb *metadata.TelemetryBuilder) itemTelemetry {
	return itemTelemetry{
		enqueued: tb.ProcessorBufferEnqueuedLogRecords, delivered: tb.ProcessorBufferDeliveredLogRecords,
		refused: tb.ProcessorBufferRefusedLogRecords, dropped: tb.ProcessorBufferDroppedLogRecords,
		registerMemory: tb.RegisterProcessorBufferMemoryLogRecordsCallback, registerDisk: tb.RegisterProcessorBufferDiskLogRecordsCallback,
		registerInFlight: tb.RegisterProcessorBufferInFlightLogRecordsCallback, registerRetrying: tb.RegisterProcessorBufferRetryingLogRecordsCallback,
	}
}

func metricPointTelemetry(tb *metadata.TelemetryBuilder) itemTelemetry {
	return itemTelemetry{
		enqueued: tb.ProcessorBufferEnqueuedMetricPoints, delivered: tb.ProcessorBufferDeliveredMetricPoints,
		refused: tb.ProcessorBufferRefusedMetricPoints, dropped: tb.ProcessorBufferDroppedMetricPoints,
		registerMemory: tb.RegisterProcessorBufferMemoryMetricPointsCallback, registerDisk: tb.RegisterProcessorBufferDiskMetricPointsCallback,
		registerInFlight: tb.RegisterProcessorBufferInFlightMetricPointsCallback, registerRetrying: tb.RegisterProcessorBufferRetryingMetricPointsCallback,
	}
}

// bufferAttributes are on every measurement: the collector's Prometheus endpoint at v0.148.0
// drops the component attributes it puts on the meter, so the three signals' buffers (one
// component in three pipelines) would otherwise write the same series.
func bufferAttributes(id component.ID, signal string) metric.MeasurementOption {
	return metric.WithAttributeSet(attribute.NewSet(attribute.String("processor", id.String()), attribute.String("signal", signal)))
}

func (p *bufferProcessor[T]) registerGauges() error {
	// observe makes a gauge callback of v.
	observe := func(v func() int64) metric.Int64Callback {
		return func(_ context.Context, o metric.Int64Observer) error {
			o.Observe(v(), p.attrs)
			return nil
		}
	}
	mem := func(pick func(b, n, by int64) int64) func() int64 {
		return func() int64 { return pick(p.q.memStats()) }
	}
	errs := []error{
		p.tel.RegisterProcessorBufferMemoryBatchesCallback(observe(mem(func(b, _, _ int64) int64 { return b }))),
		p.items.registerMemory(observe(mem(func(_, n, _ int64) int64 { return n }))),
		p.tel.RegisterProcessorBufferMemoryBytesCallback(observe(mem(func(_, _, by int64) int64 { return by }))),
		p.tel.RegisterProcessorBufferMemoryCapacityCallback(observe(func() int64 { return int64(p.cfg.QueueSize) })),
		p.items.registerInFlight(observe(func() int64 { return p.inFlight.stats().items })),
		p.items.registerRetrying(observe(func() int64 { return p.inFlight.stats().retrying })),
		p.tel.RegisterProcessorBufferOldestAgeCallback(func(_ context.Context, o metric.Float64Observer) error {
			o.Observe(p.oldestAge(p.timing.clock.Now()).Seconds(), p.attrs)
			return nil
		}),
	}
	if p.log != nil {
		capacity := p.cfg.Storage.Get().CapacityMiB << 20
		errs = append(errs,
			p.items.registerDisk(observe(func() int64 { return p.log.Unread().Items })),
			p.tel.RegisterProcessorBufferDiskBytesCallback(observe(p.log.SizeBytes)),
			p.tel.RegisterProcessorBufferDiskCapacityCallback(observe(func() int64 { return capacity })),
		)
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("register gauges: %w", err)
	}
	return nil
}
