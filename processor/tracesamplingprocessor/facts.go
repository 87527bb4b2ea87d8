package tracesamplingprocessor

import (
	"encoding/binary"
	"math"
	"strconv"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	semconv "go.opentelemetry.io/otel/semconv/v1.40.0"
)

// Attributes the receivers write that the decisions read; the semantic conventions have no name
// for them.
const (
	attrPriority       = "sampling.priority"   // ddtrace: the chunk's sampling priority, on one span
	attrUnsampled      = "transaction.sampled" // elasticapm: false on a transaction the agent did not sample
	attrResourceName   = "resource.name"       // ddtrace: the span's resource
	attrOperationName  = "operation.name"      // ddtrace: the span's operation name
	attrSpanType       = "span.type"           // ddtrace: web, db, cache, ...
	attrHTTPStatusOld  = "http.status_code"    // older conventions and the datadogreceiver mapping
	attrEnvironmentOld = "deployment.environment"
	webSpanType        = "web"
	priorityNone       = int64(-128) // no span of the trace carries a priority
	priorityUserKeep   = 2
	datakitRateScale   = 10000
)

// spanRef locates a span in the batch.
type spanRef struct {
	rs, ss, s int
}

// traceFacts is what the decisions need to know about one trace: the spans of one trace id in
// this request (a Datadog chunk; an OTLP or Zipkin batch's share of a trace).
type traceFacts struct {
	id       pcommon.TraceID
	spans    int
	root     spanRef // the span without a parent, else the first span seen
	first    int32   // the trace's first span in the request (an index into scratch.refs)
	last     int32
	hasRoot  bool
	priority int64
	hasError bool
	closed   bool // a span matched datakit.close_resource
	omitted  bool // a web span answered a status in datakit.omit_err_status
	keep     bool
	reason   reason
}

// low64 is the trace id's low 64 bits: Datadog's trace id, and what Datakit's sampler reads.
func (t *traceFacts) low64() uint64 {
	return binary.BigEndian.Uint64(t.id[8:])
}

// span returns the span ref points at.
func span(td ptrace.Traces, ref spanRef) (ptrace.Span, pcommon.Resource) {
	rs := td.ResourceSpans().At(ref.rs)
	return rs.ScopeSpans().At(ref.ss).Spans().At(ref.s), rs.Resource()
}

// resourceOf is the span's resource name: ddtrace's resource.name, else the span name (what
// Datakit calls the resource of OpenTelemetry, Zipkin and Jaeger spans).
func resourceOf(s ptrace.Span) string {
	if v, ok := s.Attributes().Get(attrResourceName); ok {
		return v.AsString()
	}
	return s.Name()
}

// operationOf is the span's Datadog operation name, else its name.
func operationOf(s ptrace.Span) string {
	if v, ok := s.Attributes().Get(attrOperationName); ok {
		return v.AsString()
	}
	return s.Name()
}

// httpStatusOf is the span's HTTP response status code as a string, "" when it has none.
func httpStatusOf(s ptrace.Span) string {
	attrs := s.Attributes()
	if v, ok := attrs.Get(string(semconv.HTTPResponseStatusCodeKey)); ok {
		return v.AsString()
	}
	if v, ok := attrs.Get(attrHTTPStatusOld); ok {
		return v.AsString()
	}
	return ""
}

// isWebSpan is a span that served an HTTP request: Datadog's web type, or a server span.
func isWebSpan(s ptrace.Span) bool {
	if v, ok := s.Attributes().Get(attrSpanType); ok {
		return v.Str() == webSpanType
	}
	return s.Kind() == ptrace.SpanKindServer
}

// strAttr returns a string attribute, "" when absent.
func strAttr(m pcommon.Map, key string) string {
	if v, ok := m.Get(key); ok {
		return v.AsString()
	}
	return ""
}

// serviceOf and envOf read the resource as the receivers write it.
func serviceOf(res pcommon.Resource) string {
	return strAttr(res.Attributes(), string(semconv.ServiceNameKey))
}

func envOf(res pcommon.Resource) string {
	attrs := res.Attributes()
	if v, ok := attrs.Get(string(semconv.DeploymentEnvironmentNameKey)); ok {
		return v.AsString()
	}
	return strAttr(attrs, attrEnvironmentOld)
}

// isUnsampledTransaction is an Elastic APM transaction its agent did not sample.
func isUnsampledTransaction(s ptrace.Span) bool {
	v, ok := s.Attributes().Get(attrUnsampled)
	return ok && v.Type() == pcommon.ValueTypeBool && !v.Bool()
}

// priorityOf reads a sampling.priority value: an integer from the ddtrace receiver, a double or a
// string where a client set the OpenTracing tag itself; anything else leaves prev.
func priorityOf(v pcommon.Value, prev int64) int64 {
	switch v.Type() {
	case pcommon.ValueTypeInt:
		return v.Int()
	case pcommon.ValueTypeDouble:
		return int64(math.Floor(v.Double()))
	case pcommon.ValueTypeStr:
		if n, err := strconv.ParseInt(v.Str(), 10, 64); err == nil {
			return n
		}
	}
	return prev
}
