package elasticmappingprocessor

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/pdata/pcommon"
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
	return &mappingProcessor{cfg: cfg, telemetry: tb, ecsObjects: objects,
		modeAttr: metric.WithAttributes(attribute.String("mode", cfg.Mode))}, nil
}

func (p *mappingProcessor) shutdown(context.Context) error {
	p.telemetry.Shutdown()
	return nil
}

var _ component.ShutdownFunc = (*mappingProcessor)(nil).shutdown

func (p *mappingProcessor) processTraces(ctx context.Context, td ptrace.Traces) (ptrace.Traces, error) {
	ecs := p.cfg.Mode == ModeECS
	errorsCopied := 0
	rss := td.ResourceSpans()
	for i := 0; i < rss.Len(); i++ {
		sss := rss.At(i).ScopeSpans()
		if ecs {
			moveScalarsOffECSObjects(p.ecsObjects, rss.At(i).Resource().Attributes())
		}
		for j := 0; j < sss.Len(); j++ {
			ss := sss.At(j)
			ss.Scope().Attributes().PutStr(MappingModeAttribute, p.cfg.Mode)
			if !ecs {
				continue
			}
			spans := ss.Spans()
			for k := 0; k < spans.Len(); k++ {
				span := spans.At(k)
				moveScalarsOffECSObjects(p.ecsObjects, span.Attributes())
				if p.cfg.ECSDuration {
					addDuration(span)
				}
				if p.cfg.ECSErrors && addErrorFields(span) {
					errorsCopied++
				}
			}
		}
	}
	p.telemetry.ProcessorElasticmappingSpans.Add(ctx, int64(td.SpanCount()), p.modeAttr)
	if errorsCopied > 0 {
		p.telemetry.ProcessorElasticmappingEcsErrors.Add(ctx, int64(errorsCopied))
	}
	return td, nil
}

// addDuration writes span.duration.us, as Elastic APM's ECS documents carry it. A span without
// both timestamps, or ending before it starts, gets none: a duration from a missing start would
// be decades, and would skew every aggregation over the field.
func addDuration(span ptrace.Span) {
	if end, start := span.EndTimestamp(), span.StartTimestamp(); start != 0 && end != 0 && end >= start {
		span.Attributes().PutInt("span.duration.us", int64(uint64(end-start)/1000)) //nolint:gosec // < 2^54 after the division
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
