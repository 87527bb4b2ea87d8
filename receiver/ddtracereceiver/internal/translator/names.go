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
	meta := func(keys ...string) string {
		for _, k := range keys {
			if v, ok := s.MetaValue(k); ok && v != "" {
				return v
			}
		}
		return ""
	}
	switch s.Name {
	case "http.request", "servlet.request", "web.request":
		method := meta("http.method", string(semconv.HTTPRequestMethodKey))
		if method == "" {
			return s.Name
		}
		if route := meta("http.route"); route != "" {
			return joinOrReuse(s.Resource, method, " ", route)
		}
		return method
	case "spring.handler":
		span.SetKind(ptrace.SpanKindInternal)
		if s.Resource != "" {
			return s.Resource
		}
		return s.Name
	case "postgresql.query", "redis.query":
		if summary := meta(string(semconv.DBQuerySummaryKey)); summary != "" {
			return summary
		}
		if op := meta("db.operation", string(semconv.DBOperationNameKey)); op != "" {
			if target := meta("db.instance", string(semconv.DBNamespaceKey), "peer.hostname"); target != "" {
				return op + " " + target
			}
			return op
		}
		if system := meta("db.type", "db.system"); system != "" {
			return system
		}
		return s.Name
	case "grpc.server", "grpc.client":
		service, method := meta("rpc.service"), meta("rpc.method")
		if service == "" || method == "" {
			full := strings.TrimPrefix(meta("rpc.grpc.full_method", "grpc.method.name"), "/")
			if full == "" {
				full = strings.TrimPrefix(s.Resource, "/")
			}
			if i := strings.LastIndexByte(full, '/'); i > 0 {
				service, method = full[:i], full[i+1:]
			}
		}
		if service == "" || method == "" {
			return s.Name
		}
		attrs.PutStr(string(semconv.RPCSystemNameKey), "grpc")
		attrs.PutStr(keyRPCService, service)
		attrs.PutStr(string(semconv.RPCMethodKey), method)
		return service + "/" + method
	case "aws.request", "aws.command":
		service, op := meta("aws.service", "aws_service"), meta("aws.operation")
		if service == "" || op == "" {
			return s.Name
		}
		attrs.PutStr(string(semconv.RPCSystemNameKey), "aws-api")
		return service + "/" + op
	}
	return s.Name
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
