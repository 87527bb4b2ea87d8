// The receiver's own counts: events by type and outcome, requests by reply status.

package elasticapmreceiver

import (
	"context"
	"errors"
	"net/http"
	"strings"

	"github.com/elastic/apm-data/input/elasticapm"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.uber.org/zap"

	"github.com/tracegate/tracegate/receiver/elasticapmreceiver/internal/convert"
)

// What became of events (the outcome attribute).
const (
	outcomeAccepted   = "accepted"
	outcomeRefused    = "refused"
	outcomeInvalid    = "invalid"
	outcomeTooLarge   = "too_large"
	outcomeNoPipeline = "no_pipeline"
)

func statusAttr(status int) metric.MeasurementOption {
	return metric.WithAttributeSet(attribute.NewSet(attribute.Int("http.response.status_code", status)))
}

func (r *intakeReceiver) countEvent(ctx context.Context, eventType, outcome string, n int) {
	r.telemetry.ReceiverElasticapmEvents.Add(ctx, int64(n), metric.WithAttributeSet(attribute.NewSet(
		attribute.String("event.type", eventType), attribute.String("outcome", outcome))))
}

// The decoder attribute's two values, built once.
var (
	bySpanjson = metric.WithAttributeSet(attribute.NewSet(attribute.String("decoder", "spanjson")))
	byAPMData  = metric.WithAttributeSet(attribute.NewSet(attribute.String("decoder", "apm-data")))
)

// countDecoded counts a request's events by the decoder that read them.
func (r *intakeReceiver) countDecoded(ctx context.Context, d *decoded) {
	if d.bySpanjson > 0 {
		r.telemetry.ReceiverElasticapmDecodedEvents.Add(ctx, int64(d.bySpanjson), bySpanjson)
	}
	if n := d.total() - d.bySpanjson; n > 0 {
		r.telemetry.ReceiverElasticapmDecodedEvents.Add(ctx, int64(n), byAPMData)
	}
}

func (r *intakeReceiver) countEvents(ctx context.Context, types []convert.EventType, events convert.Counts, outcome string) {
	for _, t := range types {
		if n := events[t]; n > 0 {
			r.countEvent(ctx, t.String(), outcome, n)
		}
	}
}

// recordInvalid answers and counts the events apm-data refused. It keeps the first five errors
// (their lines name the event type); the rest are counted under event.type unknown.
func (r *intakeReceiver) recordInvalid(ctx context.Context, stream *elasticapm.Result, res *result) {
	typed := map[string]int{} // outcome → events counted with their type
	for _, err := range stream.Errors {
		var invalid *elasticapm.InvalidInputError
		if !errors.As(err, &invalid) {
			continue
		}
		outcome := outcomeInvalid
		if invalid.TooLarge {
			outcome = outcomeTooLarge
		}
		res.add(http.StatusBadRequest, invalid.Message, invalid.Document)
		eventType := eventTypeOf(invalid.Document)
		r.countEvent(ctx, eventType, outcome, 1)
		typed[outcome]++
		r.warnings.Warn(outcome+"/"+eventType, "otelcol.receiver.elasticapm.events{outcome="+outcome+"}",
			"intake events dropped as "+strings.ReplaceAll(outcome, "_", " "), zap.String("event.type", eventType),
			zap.String("error", invalid.Message))
	}
	if n := stream.Invalid - typed[outcomeInvalid]; n > 0 {
		r.countEvent(ctx, "unknown", outcomeInvalid, n)
	}
	if n := stream.TooLarge - typed[outcomeTooLarge]; n > 0 {
		r.countEvent(ctx, "unknown", outcomeTooLarge, n)
	}
}

// eventTypeOf reads the event type from an NDJSON line ({"span": ...}), or says unknown.
func eventTypeOf(line string) string {
	line = strings.TrimLeft(line, " \t\r\n")
	if !strings.HasPrefix(line, `{"`) {
		return "unknown"
	}
	key, _, ok := strings.Cut(line[2:], `"`)
	if !ok {
		return "unknown"
	}
	switch key {
	case "transaction", "span", "error", "metricset", "log", "metadata":
		return key
	}
	return "unknown"
}
