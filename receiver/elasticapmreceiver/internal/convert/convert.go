// Package convert turns Elastic APM intake events (apm-data's modelpb) into OpenTelemetry data, the
// same as EDOT's elasticapmintake receiver v0.36.0 does, accumulating a whole request so that it is
// handed to the pipeline once per signal.
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
	// inferKinds gives spans the agent sent without a kind one (inferKind); EDOT leaves them unspecified.
	inferKinds bool
	// groupResources puts the spans of one resource under one ResourceSpans (group.go); EDOT
	// makes one per span.
	groupResources bool
	// enrich runs what EDOT runs before converting: errors' grouping key and message.
	enrich modelprocessor.Chained
}

// Options are where a Converter departs from EDOT's output.
type Options struct {
	// InferKinds gives spans without a kind the one their event type implies.
	InferKinds bool
	// GroupResources puts the spans of one resource under one ResourceSpans.
	GroupResources bool
}

// NewConverter returns a Converter that logs undecodable ids to logger.
func NewConverter(logger *zap.Logger, o Options) *Converter {
	return &Converter{
		logger:         logger,
		inferKinds:     o.InferKinds,
		groupResources: o.GroupResources,
		enrich: modelprocessor.Chained{
			modelprocessor.SetGroupingKey{NewHash: func() hash.Hash { return xxhash.New() }},
			modelprocessor.SetErrorMessage{},
		},
	}
}

// Append converts batch into out.
func (c *Converter) Append(ctx context.Context, batch *modelpb.Batch, out *Output) error {
	if err := c.enrich.ProcessBatch(ctx, batch); err != nil {
		return fmt.Errorf("enriching intake events: %w", err)
	}
	for _, event := range *batch {
		if err := c.appendEvent(event, out); err != nil {
			return err
		}
	}
	return nil
}

func (c *Converter) appendEvent(event *modelpb.APMEvent, out *Output) error {
	ts := event.GetTimestamp()
	switch event.Type() {
	case modelpb.MetricEventType:
		rm := out.Metrics.ResourceMetrics().AppendEmpty()
		c.setResourceAttributes(rm.Resource().Attributes(), event)
		if err := c.elasticMetricsToOtelMetrics(&rm, event, ts); err != nil {
			return err
		}
		out.Events[Metricset]++
	case modelpb.ErrorEventType:
		rl := out.Logs.ResourceLogs().AppendEmpty()
		c.setResourceAttributes(rl.Resource().Attributes(), event)
		c.elasticErrorToOtelLogRecord(&rl, event, ts)
		out.Events[Error]++
	case modelpb.LogEventType:
		rl := out.Logs.ResourceLogs().AppendEmpty()
		c.setResourceAttributes(rl.Resource().Attributes(), event)
		c.elasticLogToOtelLogRecord(&rl, event, ts)
		out.Events[Log]++
	case modelpb.SpanEventType, modelpb.TransactionEventType:
		s := c.newSpan(out, event, ts)
		if event.Type() == modelpb.TransactionEventType {
			c.elasticTransactionToOtelSpan(&s, event)
			out.Events[Transaction]++
		} else {
			c.elasticSpanToOTelSpan(&s, event)
			out.Events[Span]++
		}
		if c.inferKinds && s.Kind() == ptrace.SpanKindUnspecified {
			s.SetKind(inferKind(event))
		}
	default:
		return fmt.Errorf("unhandled event type %q", event.Type())
	}
	return nil
}
