// Package tracesend sends traces to a collector over every protocol tracegate accepts, using real
// client libraries where Go has them (the OpenTelemetry Go SDK, zipkin-go) and hand-encoded Thrift
// for Jaeger, and returns the spans it sent so tests can look for each one in Elasticsearch. The
// end-to-end test and `make demo` share it.
package tracesend

import (
	"context"
	"fmt"
)

// Span is a sent span as the elasticsearch exporter's otel mapping must show it.
type Span struct {
	TraceID      string // lowercase hex
	SpanID       string
	ParentSpanID string // "" for a root span
	Name         string
	Kind         string // "Server", "Client", "Internal", "Producer", "Consumer"
	StatusCode   string // "Ok", "Error" or "" (unset)
	Service      string
	// Attributes are the span attributes the document must carry, with values as JSON decodes them
	// (numbers are float64).
	Attributes map[string]any
}

// Endpoints are the collector addresses the senders use (host:port).
type Endpoints struct {
	OTLPGRPC      string
	OTLPHTTP      string
	Zipkin        string
	JaegerHTTP    string
	JaegerCompact string // UDP
	DDTrace       string // the Datadog trace intake (ddtrace receiver)
	ElasticAPM    string // Elastic APM agents' intake (elasticapm receiver)
}

// Protocol sends n spans with the given service name and returns what it sent.
type Protocol struct {
	Name string
	Send func(ctx context.Context, ep Endpoints, service string, n int) ([]Span, error)
}

// Protocols lists every protocol, in a stable order.
func Protocols() []Protocol {
	return []Protocol{
		{Name: "otlp-grpc", Send: sendOTLPGRPC},
		{Name: "otlp-http", Send: sendOTLPHTTP},
		{Name: "zipkin-json", Send: sendZipkinJSON},
		{Name: "jaeger-thrift-http", Send: sendJaegerThriftHTTP},
		{Name: "jaeger-udp-compact", Send: sendJaegerCompactUDP},
		{Name: "ddtrace-v0.4", Send: sendDDTraceV04},
		{Name: "ddtrace-v0.5", Send: sendDDTraceV05},
	}
}

// plannedSpan is the protocol-independent shape of one span to send: every trace is a server span
// with a client child that fails and an internal (or, where the protocol has none, producer) child.
type plannedSpan struct {
	name   string
	kind   string
	parent int // index into the plan, -1 for a root
	failed bool
	// attributes, typed; protocols without typed attributes send them as strings.
	attrs map[string]any
}

// plan returns n spans in traces of up to three.
func plan(n int) []plannedSpan {
	spans := make([]plannedSpan, 0, n)
	for i := range n {
		switch i % 3 {
		case 0:
			spans = append(spans, plannedSpan{
				name: fmt.Sprintf("GET /cart/%d", i), kind: "Server", parent: -1,
				attrs: map[string]any{"http.request.method": "GET", "http.response.status_code": int64(200), "tracegate.test.index": int64(i)},
			})
		case 1:
			spans = append(spans, plannedSpan{
				name: "SELECT cart", kind: "Client", parent: i - 1, failed: true,
				attrs: map[string]any{"db.system": "postgresql", "tracegate.test.index": int64(i), "db.retry": true},
			})
		case 2:
			spans = append(spans, plannedSpan{
				name: "render", kind: "Internal", parent: i - 2,
				attrs: map[string]any{"tracegate.test.index": int64(i), "render.ratio": 0.5},
			})
		}
	}
	return spans
}
