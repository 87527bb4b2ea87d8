// Counts of data lost without a failed request (invalid spans, event attributes past the limit,
// traces the tracer dropped itself): nothing else would show them.

package ddtracereceiver

import (
	"context"
	"net/http"
	"strconv"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.uber.org/zap"

	"github.com/tracegate/tracegate/receiver/ddtracereceiver/internal/chunkfilter"
	"github.com/tracegate/tracegate/receiver/ddtracereceiver/internal/payload"
	"github.com/tracegate/tracegate/receiver/ddtracereceiver/internal/translator"
)

// countDropped counts the spans the translation dropped as invalid, per reason, and warns on the
// first of each reason.
func (r *ddReceiver) countDropped(ctx context.Context, ep endpoint, dropped map[string]int) {
	for reason, n := range dropped {
		r.countDroppedSpans(ctx, ep, reason, n)
		r.warnings.Warn("dropped_spans/"+reason, "otelcol.receiver.ddtrace.spans.dropped", "invalid spans dropped",
			zap.String("endpoint", ep.name), zap.String("reason", reason), zap.Int("spans", n))
	}
}

// countDroppedSpans counts spans dropped before the pipeline saw them: the standard receiver
// metrics count only what the pipeline took or refused.
func (r *ddReceiver) countDroppedSpans(ctx context.Context, ep endpoint, reason string, n int) {
	r.telemetry.ReceiverDdtraceSpansDropped.Add(ctx, int64(n), metric.WithAttributes(
		attribute.String("endpoint", ep.name), attribute.String("reason", reason),
	))
}

// countDroppedEventAttributes counts span event attributes past translator.MaxEventAttributes
// (also in each event's dropped_attributes_count, which reaches Elasticsearch).
func (r *ddReceiver) countDroppedEventAttributes(ctx context.Context, ep endpoint, n int) {
	if n == 0 {
		return
	}
	r.telemetry.ReceiverDdtraceEventAttributesDropped.Add(ctx, int64(n), ep.attrs.endpoint)
	r.warnings.Warn("event_attributes", "otelcol.receiver.ddtrace.event_attributes.dropped", "span event attributes past the limit dropped",
		zap.String("endpoint", ep.name), zap.Int("attributes", n), zap.Int("limit_per_event", translator.MaxEventAttributes))
}

// countClientDrops records the unsampled traces a tracer says it dropped before sending
// (dd-trace-py with client-side stats does, whatever /info says); nothing else would show them.
func (r *ddReceiver) countClientDrops(ctx context.Context, req *http.Request, ep endpoint) {
	spans := headerCount(req, "Datadog-Client-Dropped-P0-Spans")
	traces := headerCount(req, "Datadog-Client-Dropped-P0-Traces")
	if spans == 0 && traces == 0 {
		return
	}
	r.telemetry.ReceiverDdtraceClientDroppedP0Spans.Add(ctx, spans, ep.attrs.endpoint)
	r.telemetry.ReceiverDdtraceClientDroppedP0Traces.Add(ctx, traces, ep.attrs.endpoint)
	r.warnings.Warn("client_dropped_p0/"+ep.name, "otelcol.receiver.ddtrace.client.dropped_p0_spans",
		"a tracer drops unsampled traces before sending them; they never reach tracegate. Turn its client-side stats off "+
			"(DD_TRACE_STATS_COMPUTATION_ENABLED / DD_TRACE_COMPUTE_STATS=false) to receive every trace",
		zap.String("endpoint", ep.name), zap.String("lang", req.Header.Get("Datadog-Meta-Lang")),
		zap.Int64("spans", spans), zap.Int64("traces", traces))
}

// headerCount reads a non-negative count header; anything else counts as 0.
func headerCount(req *http.Request, name string) int64 {
	n, err := strconv.ParseInt(req.Header.Get(name), 10, 64)
	if err != nil || n < 0 {
		return 0
	}
	return n
}

// filterChunkReasons are the reason attributes of the filters' drops, built once.
var filterChunkReasons = func() (a [chunkfilter.NumReasons]metric.AddOption) {
	for r := range chunkfilter.NumReasons {
		a[r] = metric.WithAttributes(attribute.String("reason", r.String()))
	}
	return a
}()

// filterChunks drops the chunks that ignore_resources and filter_tags reject, and counts them.
func (r *ddReceiver) filterChunks(ctx context.Context, ep endpoint, payloads []payload.Payload) {
	if r.filter == nil {
		return
	}
	r.countFiltered(ctx, ep, r.filter.Payloads(payloads))
}

// dropRejected drops the chunks their tracer rejected when drop_rejected_chunks is on, and counts
// them with those the decoder left out (skipped). It runs after rate_by_service counted the
// request, so that the rates do not depend on it.
func (r *ddReceiver) dropRejected(ctx context.Context, ep endpoint, payloads []payload.Payload, skipped payload.Skipped) {
	if !r.cfg.DropRejectedChunks {
		return
	}
	c := chunkfilter.DropRejected(payloads)
	c.Chunks[chunkfilter.RejectedPriority] += skipped.Chunks
	c.Spans[chunkfilter.RejectedPriority] += skipped.Spans
	r.countFiltered(ctx, ep, c)
}

// countFiltered counts the chunks a filter dropped per reason, and their spans as dropped.
func (r *ddReceiver) countFiltered(ctx context.Context, ep endpoint, c chunkfilter.Counts) {
	for reason := range chunkfilter.NumReasons {
		if c.Chunks[reason] == 0 {
			continue
		}
		r.telemetry.ReceiverDdtraceChunksFiltered.Add(ctx, int64(c.Chunks[reason]), filterChunkReasons[reason])
		r.countDroppedSpans(ctx, ep, reason.String(), c.Spans[reason])
	}
}
