package loadgen

import "fmt"

// DatakitPort is the port of Datakit's HTTP server, which serves every one of its trace inputs.
const DatakitPort = "9529"

// DatakitPath is the path Datakit serves protocol's encoding at on its port: the ddtrace input's
// /v0.4/traces and /v0.5/traces, the Jaeger input's /apis/traces (Thrift binary, as
// jaeger-thrift-http sends it), the Zipkin input's /api/v2/spans and the OpenTelemetry input's
// /otel/v1/traces. OTLP/gRPC, Jaeger UDP and the Elastic APM intake have no Datakit path.
func DatakitPath(protocol string) (string, error) {
	switch protocol {
	case DDTraceV04, DDTraceV05, ZipkinJSON, ZipkinProto:
		return path(protocol), nil // the same paths as the trace agent's and Zipkin's
	case JaegerThriftHTTP:
		return "/apis/traces", nil
	case OTLPHTTP:
		return "/otel" + path(protocol), nil
	}
	return "", fmt.Errorf("%s has no Datakit path (Datakit's port takes %s, %s, %s, %s, %s and %s)",
		protocol, DDTraceV04, DDTraceV05, JaegerThriftHTTP, ZipkinJSON, ZipkinProto, OTLPHTTP)
}

// urlPath is the path c's requests go to: the protocol's own receiver's, or Datakit's with
// c.Datakit.
func urlPath(c Config) (string, error) {
	if c.Datakit {
		return DatakitPath(c.Protocol)
	}
	return path(c.Protocol), nil
}
