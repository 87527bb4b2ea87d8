package translator

import (
	"strings"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	semconv "go.opentelemetry.io/otel/semconv/v1.40.0"

	"github.com/tracegate/tracegate/receiver/ddtracereceiver/internal/payload"
)

// spanName turns the Datadog operation names of common integrations into OpenTelemetry span
// names (as contrib's processSpanByName does) and sets the attributes those names imply. Any other
// operation name is kept.
func spanName(s *payload.Span, span ptrace.Span, attrs pcommon.Map) string {
	var name string
	switch s.Name {
	case "http.request", "servlet.request", "web.request":
		name = httpSpanName(s)
	case "spring.handler":
		span.SetKind(ptrace.SpanKindInternal)
		name = s.Resource
	case "postgresql.query", "redis.query":
		name = dbSpanName(s)
	case "grpc.server", "grpc.client":
		name = grpcSpanName(s, attrs)
	case "aws.request", "aws.command":
		name = awsSpanName(s, attrs)
	}
	if name == "" {
		return s.Name
	}
	return name
}

// metaOf is the first non-empty value of the span's meta keys, in the order given.
func metaOf(s *payload.Span, keys ...string) string {
	for _, k := range keys {
		if v, ok := s.MetaValue(k); ok && v != "" {
			return v
		}
	}
	return ""
}

// httpSpanName is "{method} {route}", or the method alone; "" without a method.
func httpSpanName(s *payload.Span) string {
	method := metaOf(s, "http.method", string(semconv.HTTPRequestMethodKey))
	if method == "" {
		return ""
	}
	if route := metaOf(s, "http.route"); route != "" {
		return joinOrReuse(s.Resource, method, " ", route)
	}
	return method
}

// dbSpanName is the query summary, else "{operation} {target}" or the operation alone, else the
// database system; "" when the span has none of them.
func dbSpanName(s *payload.Span) string {
	if summary := metaOf(s, string(semconv.DBQuerySummaryKey)); summary != "" {
		return summary
	}
	if op := metaOf(s, "db.operation", string(semconv.DBOperationNameKey)); op != "" {
		if target := metaOf(s, "db.instance", string(semconv.DBNamespaceKey), "peer.hostname"); target != "" {
			return op + " " + target
		}
		return op
	}
	return metaOf(s, "db.type", "db.system")
}

// grpcSpanName is "{service}/{method}", from their tags or the full method (tag or resource), and
// writes the RPC attributes; "" when either part is missing.
func grpcSpanName(s *payload.Span, attrs pcommon.Map) string {
	service, method := metaOf(s, "rpc.service"), metaOf(s, "rpc.method")
	if service == "" || method == "" {
		full := strings.TrimPrefix(metaOf(s, "rpc.grpc.full_method", "grpc.method.name"), "/")
		if full == "" {
			full = strings.TrimPrefix(s.Resource, "/")
		}
		if i := strings.LastIndexByte(full, '/'); i > 0 {
			service, method = full[:i], full[i+1:]
		}
	}
	if service == "" || method == "" {
		return ""
	}
	attrs.PutStr(string(semconv.RPCSystemNameKey), "grpc")
	attrs.PutStr(keyRPCService, service)
	attrs.PutStr(string(semconv.RPCMethodKey), method)
	return service + "/" + method
}

// awsSpanName is "{service}/{operation}" of an AWS SDK call, and writes rpc.system.name; "" when
// either is missing.
func awsSpanName(s *payload.Span, attrs pcommon.Map) string {
	service, op := metaOf(s, "aws.service", "aws_service"), metaOf(s, "aws.operation")
	if service == "" || op == "" {
		return ""
	}
	attrs.PutStr(string(semconv.RPCSystemNameKey), "aws-api")
	return service + "/" + op
}

// joinOrReuse returns a+sep+b. Tracers usually put exactly that in the resource (web spans:
// "GET /route"), so when they did the resource is returned instead: it is a substring of the
// request body already, and the span name then costs no allocation.
func joinOrReuse(resource, a, sep, b string) string {
	if len(resource) == len(a)+len(sep)+len(b) && strings.HasPrefix(resource, a) &&
		resource[len(a):len(a)+len(sep)] == sep && strings.HasSuffix(resource, b) {
		return resource
	}
	return a + sep + b
}
