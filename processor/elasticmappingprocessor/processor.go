package elasticmappingprocessor

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/processor"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/tracegate/tracegate/internal/estemplates"
	"github.com/tracegate/tracegate/processor/elasticmappingprocessor/internal/metadata"
)

// MappingModeAttribute is the scope attribute the elasticsearch exporter reads the mapping from.
const MappingModeAttribute = "elastic.mapping.mode"

type mappingProcessor struct {
	cfg       *Config
	telemetry *metadata.TelemetryBuilder
	modeAttr  metric.MeasurementOption
	// ecsObjects are the top-level fields tracegate's ECS template maps as objects.
	ecsObjects map[string]bool
	// logHashers hold the SHA-256 state of log document ids (a processor is called concurrently).
	logHashers sync.Pool
}

func newMappingProcessor(set processor.Settings, cfg *Config) (*mappingProcessor, error) {
	objects, err := estemplates.ECSObjectFields()
	if err != nil {
		return nil, fmt.Errorf("the ECS template's object fields: %w", err)
	}
	tb, err := metadata.NewTelemetryBuilder(set.TelemetrySettings)
	if err != nil {
		return nil, err
	}
	return &mappingProcessor{
		cfg: cfg, telemetry: tb, ecsObjects: objects,
		modeAttr:   metric.WithAttributes(attribute.String("mode", cfg.Mode)),
		logHashers: sync.Pool{New: func() any { return newLogHasher() }},
	}, nil
}

func (p *mappingProcessor) shutdown(context.Context) error {
	p.telemetry.Shutdown()
	return nil
}

var _ component.ShutdownFunc = (*mappingProcessor)(nil).shutdown

func (p *mappingProcessor) processTraces(ctx context.Context, td ptrace.Traces) (ptrace.Traces, error) {
	ecs := p.cfg.Mode == ModeECS
	errorsCopied := 0
	for _, rs := range td.ResourceSpans().All() {
		if ecs {
			moveScalarsOffECSObjects(p.ecsObjects, rs.Resource().Attributes())
		}
		datadog := p.cfg.APMInputs && fillAPMResource(rs.Resource())
		for _, ss := range rs.ScopeSpans().All() {
			ss.Scope().Attributes().PutStr(MappingModeAttribute, p.cfg.Mode)
			if ecs || p.cfg.APMInputs {
				for _, span := range ss.Spans().All() {
					if p.mapSpan(span, datadog) {
						errorsCopied++
					}
				}
			}
			if p.cfg.DocumentIDs {
				setScopeDocumentIDs(ss.Spans(), p.cfg.Mode == ModeOTel)
			}
		}
	}
	p.telemetry.ProcessorElasticmappingSpans.Add(ctx, int64(td.SpanCount()), p.modeAttr)
	if errorsCopied > 0 {
		p.telemetry.ProcessorElasticmappingEcsErrors.Add(ctx, int64(errorsCopied))
	}
	return td, nil
}

// mapSpan fills span's APM inputs and ECS gaps; it reports whether an exception event
// was copied into the ECS error fields. datadog says the span is a Datadog tracer's.
func (p *mappingProcessor) mapSpan(span ptrace.Span, datadog bool) bool {
	if p.cfg.APMInputs {
		fillAPMInputs(span, datadog)
	}
	if p.cfg.Mode != ModeECS {
		return false
	}
	moveScalarsOffECSObjects(p.ecsObjects, span.Attributes())
	if p.cfg.ECSDuration {
		addDuration(span)
	}
	return p.cfg.ECSErrors && addErrorFields(span)
}

func (p *mappingProcessor) processLogs(ctx context.Context, ld plog.Logs) (plog.Logs, error) {
	for _, rl := range ld.ResourceLogs().All() {
		for _, sl := range rl.ScopeLogs().All() {
			sl.Scope().Attributes().PutStr(MappingModeAttribute, p.cfg.Mode)
		}
	}
	if p.cfg.DocumentIDs {
		lh := p.logHashers.Get().(*logHasher)
		lh.setLogDocumentIDs(ld)
		p.logHashers.Put(lh)
	}
	p.telemetry.ProcessorElasticmappingLogRecords.Add(ctx, int64(ld.LogRecordCount()), p.modeAttr)
	return ld, nil
}

// processMetrics sets the mapping mode only: metric documents need no id of their own, as
// Elasticsearch's time-series data streams (otel mode) derive it from the dimensions and timestamp.
func (p *mappingProcessor) processMetrics(ctx context.Context, md pmetric.Metrics) (pmetric.Metrics, error) {
	for _, rm := range md.ResourceMetrics().All() {
		for _, sm := range rm.ScopeMetrics().All() {
			sm.Scope().Attributes().PutStr(MappingModeAttribute, p.cfg.Mode)
		}
	}
	p.telemetry.ProcessorElasticmappingDataPoints.Add(ctx, int64(md.DataPointCount()), p.modeAttr)
	return md, nil
}

// addDuration writes span.duration.us, as Elastic APM's ECS documents carry it. A span without
// both timestamps, or ending before it starts, gets none: a duration from a missing start would
// be decades, and would skew every aggregation over the field.
func addDuration(span ptrace.Span) {
	if end, start := span.EndTimestamp(), span.StartTimestamp(); start != 0 && end != 0 && end >= start {
		span.Attributes().PutInt("span.duration.us", int64(uint64(end-start)/1000))
	}
}

// addErrorFields copies the last exception event into the ECS error fields, unless the span
// already has them; it reports whether it did.
func addErrorFields(span ptrace.Span) bool {
	events := span.Events()
	for i := events.Len() - 1; i >= 0; i-- {
		ev := events.At(i)
		if ev.Name() != "exception" {
			continue
		}
		attrs := span.Attributes()
		copied := false
		for from, to := range map[string]string{
			"exception.type":       "error.type",
			"exception.message":    "error.message",
			"exception.stacktrace": "error.stack_trace",
		} {
			v, ok := ev.Attributes().Get(from)
			if !ok {
				continue
			}
			if _, exists := attrs.Get(to); exists {
				continue
			}
			attrs.PutStr(to, v.AsString())
			copied = true
		}
		return copied
	}
	return false
}

// moveScalarsOffECSObjects moves each plain-valued attribute named like one of objects (the
// top-level fields tracegate's ECS template maps as objects) into that object. The exporter writes
// an attribute it does not know under its own name at the top of the document, so a plain value
// there would sit where Elasticsearch expects an object, and the whole document is rejected
// (mapper_parsing_exception; ignore_malformed does not cover it). Zipkin and Jaeger spans carry
// such an `error` tag (Brave sets it to the exception message). An `error` message to error.message (when the span has none), anything else to
// <name>.value (or <name>.original, then <name>.valueN, when taken).
func moveScalarsOffECSObjects(objects map[string]bool, attrs pcommon.Map) {
	var names []string
	for k, v := range attrs.All() {
		if objects[k] && v.Type() != pcommon.ValueTypeMap {
			names = append(names, k)
		}
	}
	for _, name := range names {
		v, _ := attrs.Get(name)
		candidates := []string{name + ".value", name + ".original"}
		if name == "error" && v.Type() == pcommon.ValueTypeStr && !isBoolString(v.Str()) {
			candidates = append([]string{"error.message"}, candidates...)
		}
		// The first free name; past the candidates, <name>.value2, .value3, …: nothing is
		// overwritten.
		to := ""
		for i := 0; to == ""; i++ {
			c := name + ".value" + strconv.Itoa(i)
			if i < len(candidates) {
				c = candidates[i]
			}
			if _, taken := attrs.Get(c); !taken {
				to = c
			}
		}
		moved := pcommon.NewValueEmpty() // v points into attrs, which PutEmpty may reallocate
		v.CopyTo(moved)
		moved.MoveTo(attrs.PutEmpty(to))
		attrs.Remove(name)
	}
}

// isBoolString: Zipkin's and OpenTracing's `error` tag is often just "true".
func isBoolString(s string) bool {
	return strings.EqualFold(s, "true") || strings.EqualFold(s, "false")
}
