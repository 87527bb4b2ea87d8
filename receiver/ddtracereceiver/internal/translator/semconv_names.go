package translator

import (
	"strings"

	"go.opentelemetry.io/collector/pdata/ptrace"
	semconv "go.opentelemetry.io/otel/semconv/v1.40.0"

	"github.com/tracegate/tracegate/receiver/ddtracereceiver/internal/payload"
)

// write puts the attributes made from the facts: normalised values, a URL in the form the span
// kind wants, a fully qualified RPC method.
func (f *spanFacts) write(w *attrWriter, kind ptrace.SpanKind) {
	if f.method != "" {
		m, known := httpMethod(f.method)
		w.putStr(string(semconv.HTTPRequestMethodKey), m)
		if !known || m != f.method { // the conventions keep what the tracer sent when it differs
			w.putStr(string(semconv.HTTPRequestMethodOriginalKey), f.method)
		}
		f.method = m
	}
	if f.hostPort != "" && f.serverAddress == "" {
		host, port := splitHostPort(f.hostPort)
		w.putStr(string(semconv.ServerAddressKey), host)
		if port > 0 {
			w.putInt(string(semconv.ServerPortKey), port)
		}
		f.serverAddress = host
	}
	if f.url != "" {
		f.writeURL(w, kind)
	}
	if f.dbSystem != "" {
		f.dbSystem = dbSystemName(f.dbSystem)
		w.putStr(string(semconv.DBSystemNameKey), f.dbSystem)
	}
	if f.msgSystem != "" {
		w.putStr(string(semconv.MessagingSystemKey), messagingSystem(f.msgSystem))
	}
	if f.msgOperation != "" {
		if typ := messagingOperationType(f.msgOperation); typ != "" {
			w.putStr(string(semconv.MessagingOperationTypeKey), typ)
		}
		w.putStr(string(semconv.MessagingOperationNameKey), f.msgOperation)
	}
	f.writeRPC(w)
}

// writeURL writes a server span's URL as scheme, path and query, and a client's as url.full with
// server.address and server.port (required for HTTP clients) when no tag gave them.
func (f *spanFacts) writeURL(w *attrWriter, kind ptrace.SpanKind) {
	if kind == ptrace.SpanKindServer {
		scheme, path, query, ok := splitURL(f.url)
		if !ok { // a path, as some tracers send it
			path, query, _ = strings.Cut(f.url, "?")
		}
		if scheme != "" {
			w.putStr(string(semconv.URLSchemeKey), scheme)
		}
		w.putStr(string(semconv.URLPathKey), path)
		if query != "" {
			w.putStr(string(semconv.URLQueryKey), query)
		}
		return
	}
	w.putStr(string(semconv.URLFullKey), f.url)
	if f.serverAddress != "" {
		return
	}
	if host, port := urlHost(f.url); host != "" {
		w.putStr(string(semconv.ServerAddressKey), host)
		f.serverAddress = host
		if port > 0 {
			w.putInt(string(semconv.ServerPortKey), port)
		}
	}
}

// writeRPC writes rpc.method fully qualified ("pkg.Service/Method"), rpc.system.name and the
// status code.
func (f *spanFacts) writeRPC(w *attrWriter) {
	grpcTags := f.rpcFull != "" || f.grpcCode != "" // tags only gRPC integrations send
	full := strings.TrimPrefix(f.rpcFull, "/")
	if full == "" && f.rpcMethod != "" {
		full = f.rpcMethod
		if f.rpcService != "" {
			full = f.rpcService + "/" + f.rpcMethod
		}
	}
	f.rpcFull = full
	if full != "" {
		w.putStr(string(semconv.RPCMethodKey), full)
	}
	if f.rpcSystem == "" {
		switch {
		case f.aws:
			f.rpcSystem = "aws-api"
		case grpcTags:
			f.rpcSystem = "grpc"
		}
	}
	if f.rpcSystem != "" {
		w.putStr(string(semconv.RPCSystemNameKey), f.rpcSystem)
	}
	if f.grpcCode != "" {
		w.putStr(string(semconv.RPCResponseStatusCodeKey), grpcStatusCode(f.grpcCode))
	}
}

// name is the span name by the conventions for the span's kind and kind of call.
func (f *spanFacts) name(s *payload.Span, kind ptrace.SpanKind, resource string) string {
	switch {
	case f.dbSystem != "" || isDBType(s.Type):
		return f.dbName(resource, s.Name)
	case f.msgSystem != "" || f.msgDestination != "" || s.Type == "queue":
		return f.messagingName(s.Name, kind)
	case f.rpcFull != "":
		return f.rpcFull
	case f.rpcSystem != "":
		return f.rpcSystem
	case f.method != "":
		m := f.method
		if m == "_OTHER" {
			m = "HTTP"
		}
		if kind == ptrace.SpanKindServer && f.route != "" {
			return joinOrReuse(resource, m, " ", f.route)
		}
		return m
	case lowCardinality(resource):
		return resource
	}
	return s.Name
}

// dbName is "{operation} {target}", the operation from db.operation.name or the first keyword of
// the resource (the statement or command), never the query text itself.
func (f *spanFacts) dbName(resource, operation string) string {
	op := f.dbOperation
	if op == "" {
		op = firstWord(resource)
	}
	target := f.dbCollection
	if target == "" {
		target = f.dbNamespace
	}
	switch {
	case op != "" && target != "":
		return op + " " + target
	case op != "":
		return op
	case target != "":
		return target
	case f.dbSystem != "":
		return f.dbSystem
	}
	return operation
}

// messagingName is "{operation} {destination}"; the operation is the tracer's, or read from the
// Datadog operation name (kafka.produce, kafka.consume).
func (f *spanFacts) messagingName(operation string, kind ptrace.SpanKind) string {
	op := messagingOperationType(f.msgOperation)
	if op == "" {
		op = f.msgOperation
	}
	if op == "" {
		switch {
		case containsAny(operation, "produce", "send", "publish"):
			op = "send"
		case containsAny(operation, "consume", "process", "receive") && kind == ptrace.SpanKindConsumer:
			op = "process"
		case containsAny(operation, "consume", "process", "receive"):
			op = "receive"
		}
	}
	switch {
	case op != "" && f.msgDestination != "":
		return op + " " + f.msgDestination
	case op != "":
		return op
	}
	return operation
}
