package translator

import (
	"strings"

	"go.opentelemetry.io/collector/pdata/ptrace"
)

// semconvKind is the span kind: span.kind when the tracer sent it (all current tracers do for
// their integrations), else inferred from span.type and the operation name, inverting the
// Datadog Agent's kind-to-type mapping.
func semconvKind(kind, spanType, name string) ptrace.SpanKind {
	if k := spanKind(kind, ""); k != ptrace.SpanKindUnspecified {
		return k
	}
	switch spanType {
	case "web", "serverless":
		return ptrace.SpanKindServer
	case "http", "sql", "db", "cassandra", "redis", "valkey", "memcached", "cache", "mongodb",
		"elasticsearch", "opensearch", "leveldb", "consul", "dns", "aerospike":
		return ptrace.SpanKindClient
	case "grpc", "rpc":
		switch {
		case strings.Contains(name, "server"):
			return ptrace.SpanKindServer
		case strings.Contains(name, "client"):
			return ptrace.SpanKindClient
		}
	case "queue":
		switch {
		case containsAny(name, "produce", "send", "publish"):
			return ptrace.SpanKindProducer
		case containsAny(name, "consume", "process"):
			return ptrace.SpanKindConsumer
		case containsAny(name, "receive", "poll"):
			return ptrace.SpanKindClient // the conventions' receive spans are client spans
		}
	}
	return ptrace.SpanKindInternal
}

func containsAny(s string, subs ...string) bool {
	for _, sub := range subs {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}

// isDBType tells the span types of database clients.
func isDBType(spanType string) bool {
	switch spanType {
	case "sql", "db", "cassandra", "redis", "valkey", "memcached", "cache", "mongodb",
		"elasticsearch", "opensearch", "leveldb", "aerospike":
		return true
	}
	return false
}
