package tracesend

import (
	"context"
	"fmt"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
)

func sendOTLPGRPC(ctx context.Context, ep Endpoints, service string, n int) ([]Span, error) {
	exp, err := otlptracegrpc.New(ctx, otlptracegrpc.WithEndpoint(ep.OTLPGRPC), otlptracegrpc.WithInsecure(),
		otlptracegrpc.WithRetry(otlptracegrpc.RetryConfig{Enabled: false}))
	if err != nil {
		return nil, err
	}
	return sendWithSDK(ctx, exp, service, n)
}

func sendOTLPHTTP(ctx context.Context, ep Endpoints, service string, n int) ([]Span, error) {
	exp, err := otlptracehttp.New(ctx, otlptracehttp.WithEndpoint(ep.OTLPHTTP), otlptracehttp.WithInsecure(),
		otlptracehttp.WithRetry(otlptracehttp.RetryConfig{Enabled: false}))
	if err != nil {
		return nil, err
	}
	return sendWithSDK(ctx, exp, service, n)
}

// sendWithSDK creates the planned spans with the OpenTelemetry SDK, records them, and exports them
// in one call so an export error is returned rather than logged.
func sendWithSDK(ctx context.Context, exp sdktrace.SpanExporter, service string, n int) (sent []Span, err error) {
	defer func() {
		if serr := exp.Shutdown(context.WithoutCancel(ctx)); err == nil && serr != nil {
			err = serr
		}
	}()
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(
		sdktrace.WithResource(resource.NewSchemaless(attribute.String("service.name", service))),
		sdktrace.WithSpanProcessor(rec),
	)
	tracer := tp.Tracer("github.com/tracegate/tracegate/internal/testbed/tracesend")
	p := plan(n)
	spans := make([]trace.Span, len(p))
	for i, ps := range p {
		parent := ctx
		if ps.parent >= 0 {
			parent = trace.ContextWithSpan(ctx, spans[ps.parent])
		}
		_, span := tracer.Start(parent, ps.name, trace.WithSpanKind(otelKind(ps.kind)), trace.WithAttributes(otelAttrs(ps.attrs)...))
		if ps.failed {
			span.SetStatus(codes.Error, "connection refused")
		}
		span.End()
		spans[i] = span
	}
	ended := rec.Ended()
	if err := exp.ExportSpans(ctx, ended); err != nil {
		return nil, fmt.Errorf("export: %w", err)
	}
	for i, s := range ended {
		sent = append(sent, Span{
			TraceID:      s.SpanContext().TraceID().String(),
			SpanID:       s.SpanContext().SpanID().String(),
			ParentSpanID: parentID(s.Parent()),
			Name:         s.Name(),
			Kind:         p[i].kind,
			StatusCode:   statusName(p[i].failed),
			Service:      service,
			Attributes:   jsonValues(p[i].attrs),
		})
	}
	return sent, nil
}

func parentID(sc trace.SpanContext) string {
	if !sc.IsValid() {
		return ""
	}
	return sc.SpanID().String()
}

func otelKind(k string) trace.SpanKind {
	switch k {
	case "Server":
		return trace.SpanKindServer
	case "Client":
		return trace.SpanKindClient
	case "Producer":
		return trace.SpanKindProducer
	case "Consumer":
		return trace.SpanKindConsumer
	default:
		return trace.SpanKindInternal
	}
}

func otelAttrs(m map[string]any) []attribute.KeyValue {
	var kvs []attribute.KeyValue
	for k, v := range m {
		switch t := v.(type) {
		case string:
			kvs = append(kvs, attribute.String(k, t))
		case int64:
			kvs = append(kvs, attribute.Int64(k, t))
		case bool:
			kvs = append(kvs, attribute.Bool(k, t))
		case float64:
			kvs = append(kvs, attribute.Float64(k, t))
		}
	}
	return kvs
}

// statusName is the status the OTel SDK and OTLP carry: Error for failed spans, unset otherwise.
func statusName(failed bool) string {
	if failed {
		return "Error"
	}
	return ""
}

// jsonValues turns typed attribute values into what encoding/json decodes from the document.
func jsonValues(m map[string]any) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		if i, ok := v.(int64); ok {
			out[k] = float64(i)
			continue
		}
		out[k] = v
	}
	return out
}
