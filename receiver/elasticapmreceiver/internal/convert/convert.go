// Package convert maps Elastic APM intake events, as apm-data's decoder gives them
// (modelpb.APMEvent), to OpenTelemetry data: transactions and spans to spans, errors and logs to
// log records, metricsets to metrics. A request's events accumulate in one Output, handed to
// the pipeline once per signal.
package convert

import (
	"context"
	"fmt"
	"hash"

	"github.com/cespare/xxhash/v2"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.uber.org/zap"

	"github.com/elastic/apm-data/model/modelpb"
	"github.com/elastic/apm-data/model/modelprocessor"

	"github.com/tracegate/tracegate/receiver/elasticapmreceiver/internal/spanjson"
)

// EventType names an intake event type, as the telemetry's event.type attribute says it.
type EventType int

// The event types of intake v2, in the order Counts holds them.
const (
	Transaction EventType = iota
	Span
	Error
	Metricset
	Log
	numEventTypes
)

var eventTypeNames = [numEventTypes]string{"transaction", "span", "error", "metricset", "log"}

func (t EventType) String() string { return eventTypeNames[t] }

// EventTypes lists every event type.
func EventTypes() []EventType { return []EventType{Transaction, Span, Error, Metricset, Log} }

// Counts holds a number per event type.
type Counts [numEventTypes]int

// CountsOf counts events by type, for events handed on unconverted.
func CountsOf(events []*modelpb.APMEvent) Counts {
	var c Counts
	for _, e := range events {
		switch e.Type() {
		case modelpb.TransactionEventType:
			c[Transaction]++
		case modelpb.SpanEventType:
			c[Span]++
		case modelpb.ErrorEventType:
			c[Error]++
		case modelpb.LogEventType:
			c[Log]++
		case modelpb.MetricEventType:
			c[Metricset]++
		}
	}
	return c
}

// Total is the sum over event types.
func (c Counts) Total() int {
	n := 0
	for _, v := range c {
		n += v
	}
	return n
}

// Output is one request's events as OpenTelemetry data.
type Output struct {
	Traces  ptrace.Traces
	Metrics pmetric.Metrics
	Logs    plog.Logs
	// Events counts the events converted, by type.
	Events Counts

	resources resources
}

// NewOutput returns an empty Output.
func NewOutput() *Output {
	return &Output{Traces: ptrace.NewTraces(), Metrics: pmetric.NewMetrics(), Logs: plog.NewLogs()}
}

// Converter converts batches of events. It keeps no state between calls and is safe for
// concurrent use.
type Converter struct {
	logger *zap.Logger
	// inferKinds gives spans the agent sent without a kind the one their event type implies.
	inferKinds bool
	// errorFields gives errors what APM Server computes before storing them: the grouping key
	// Kibana groups errors by, and the message when only the exception or log has one.
	errorFields modelprocessor.Chained
}

// NewConverter returns a Converter that logs ids it cannot read to logger at debug level.
func NewConverter(logger *zap.Logger) *Converter {
	return &Converter{
		logger:     logger,
		inferKinds: true,
		errorFields: modelprocessor.Chained{
			modelprocessor.SetGroupingKey{NewHash: func() hash.Hash { return xxhash.New() }},
			modelprocessor.SetErrorMessage{},
		},
	}
}

// Append converts batch into out.
func (c *Converter) Append(ctx context.Context, batch *modelpb.Batch, out *Output) error {
	if err := c.errorFields.ProcessBatch(ctx, batch); err != nil {
		return fmt.Errorf("computing error fields: %w", err)
	}
	for _, e := range *batch {
		if err := c.appendEvent(e, out); err != nil {
			return err
		}
	}
	return nil
}

// AppendSpans converts the transaction and span events spanjson decoded that share one resource,
// the first's (the events of one request's metadata): the resource is looked up once, not per
// event. Their own labels are their Tags; their label maps hold the global ones, if any.
func (c *Converter) AppendSpans(events []spanjson.Event, out *Output) {
	if len(events) == 0 {
		return
	}
	spans := out.resources.spansOf(out.Traces, events[0].APMEvent)
	spans.EnsureCapacity(spans.Len() + len(events))
	for _, e := range events {
		s := spans.AppendEmpty()
		s.Attributes().EnsureCapacity(len(e.Tags) + spanAttributes)
		c.fillTraceEvent(s, e.APMEvent, out)
		putTags(s.Attributes(), e.Tags)
	}
}

// fillTraceEvent fills s from a transaction or span event.
func (c *Converter) fillTraceEvent(s ptrace.Span, e *modelpb.APMEvent, out *Output) {
	c.fillSpan(s, e, e.GetTimestamp())
	if e.Type() == modelpb.TransactionEventType {
		fillTransaction(s, e)
		out.Events[Transaction]++
	} else {
		fillSpanEvent(s, e)
		out.Events[Span]++
	}
}

func (c *Converter) appendEvent(e *modelpb.APMEvent, out *Output) error {
	ts := e.GetTimestamp()
	switch e.Type() {
	case modelpb.TransactionEventType, modelpb.SpanEventType:
		c.fillTraceEvent(out.resources.spanUnder(out.Traces, e), e, out)
	case modelpb.ErrorEventType:
		r := newRecord(out.Logs, e)
		c.fillRecord(r, e, ts)
		fillError(r, e)
		out.Events[Error]++
	case modelpb.LogEventType:
		r := newRecord(out.Logs, e)
		c.fillRecord(r, e, ts)
		fillLog(r)
		out.Events[Log]++
	case modelpb.MetricEventType:
		rm := out.Metrics.ResourceMetrics().AppendEmpty()
		putResource(rm.Resource().Attributes(), e)
		// A metricset's labels are its dimensions: they name the series, with the resource.
		putLabels(rm.Resource().Attributes(), e, false)
		putRequester(rm.Resource().Attributes(), e)
		if err := fillMetricset(rm, e, ts); err != nil {
			return err
		}
		out.Events[Metricset]++
	default:
		return fmt.Errorf("intake event of unknown type %q", e.Type())
	}
	return nil
}

// newRecord appends a log record under a resource of its own: errors and logs are few, and
// most requests carry none.
func newRecord(logs plog.Logs, e *modelpb.APMEvent) plog.LogRecord {
	rl := logs.ResourceLogs().AppendEmpty()
	putResource(rl.Resource().Attributes(), e)
	return rl.ScopeLogs().AppendEmpty().LogRecords().AppendEmpty()
}

// badID notes an id that is not hex; the event keeps an empty id.
func (c *Converter) badID(which, id string) {
	c.logger.Debug("intake event id is not hex", zap.String("id", which), zap.String("value", id))
}
