package elasticmappingprocessor

import (
	"strings"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// fillAPMResource gives a resource what Elastic's APM enrichment reads of it where a receiver
// says it otherwise: a Jaeger client's name and version (the Jaeger receiver turns the process tag
// jaeger.version "Go-2.30.0" into opencensus.exporterversion "Jaeger-Go-2.30.0") become agent.name
// "Jaeger/Go" and agent.version "2.30.0", as APM Server's Jaeger intake named them (Kibana shows
// its Jaeger icon for them), where no SDK or agent names itself. It reports whether the resource
// is a Datadog tracer's (the ddtrace receiver's telemetry.sdk.name).
func fillAPMResource(res pcommon.Resource) (datadog bool) {
	attrs := res.Attributes()
	if v, ok := attrs.Get("telemetry.sdk.name"); ok {
		return v.Str() == "datadog"
	}
	if hasAny(attrs, "agent.name") {
		return false
	}
	if v, ok := attrs.Get("opencensus.exporterversion"); ok {
		if rest, found := strings.CutPrefix(v.Str(), "Jaeger-"); found {
			name, version := "Jaeger", ""
			if lang, ver, ok := strings.Cut(rest, "-"); ok && lang != "" {
				name, version = "Jaeger/"+lang, ver
			}
			attrs.PutStr("agent.name", name)
			if version != "" && !hasAny(attrs, "agent.version") {
				attrs.PutStr("agent.version", version)
			}
		}
	}
	return false
}

// enrichmentAttributes is about how many attributes Elastic's enrichment adds to a span
// (processor.event, timestamp.us, transaction.* or span.*, event.outcome, ...).
const enrichmentAttributes = 14

// fillAPMInputs gives a span the attributes Elastic's APM enrichment (the elasticapm processor)
// reads, where a receiver delivers the same fact under another name: OpenTracing's tags and error
// logs (Jaeger clients), Zipkin's remote endpoint given as an IP only and its string status codes,
// a fully qualified rpc.method without rpc.service. Attributes the span already has win. Three
// things change rather than add: Datadog's span.type (a Datadog tracer's span, datadog) moves to
// datadog.span.type, since the enrichment would keep it as Elastic's span type; an unspecified
// kind becomes internal; an OpenTracing error log becomes an exception event. It reports whether
// it changed anything.
func fillAPMInputs(span ptrace.Span, datadog bool) bool {
	attrs := span.Attributes()
	// Room for what the enrichment adds next (up to 14 transaction or span fields): one
	// allocation instead of the slice doubling two or three times under its Puts.
	attrs.EnsureCapacity(attrs.Len() + enrichmentAttributes)
	added := false
	// Datadog's span types (web, http, sql, cache, ...) are not Elastic's (db, external,
	// messaging, app): moved aside, span.type is the enrichment's to derive.
	if v, ok := attrs.Get("span.type"); datadog && ok {
		value := pcommon.NewValueEmpty() // v points into attrs
		v.CopyTo(value)
		attrs.Remove("span.type")
		if _, taken := attrs.Get("datadog.span.type"); !taken {
			value.MoveTo(attrs.PutEmpty("datadog.span.type"))
		}
		added = true
	}
	if typeEnrichmentInts(attrs) {
		added = true
	}
	// Zipkin and Jaeger local spans carry no kind; the specification lets a receiver of
	// UNSPECIFIED assume INTERNAL, which the enrichment types app/internal (else unknown).
	if span.Kind() == ptrace.SpanKindUnspecified {
		span.SetKind(ptrace.SpanKindInternal)
		added = true
	}
	put := func(k string, v pcommon.Value) {
		if _, ok := attrs.Get(k); ok || v.Type() == pcommon.ValueTypeEmpty {
			return
		}
		value := pcommon.NewValueEmpty() // v may point into attrs, which PutEmpty may reallocate
		v.CopyTo(value)
		value.MoveTo(attrs.PutEmpty(k))
		added = true
	}
	// Databases: OpenTracing's db.type and db.instance.
	if !hasAny(attrs, "db.system", "db.system.name") {
		if v, ok := attrs.Get("db.type"); ok {
			put("db.system.name", pcommon.NewValueStr(dbSystemOfType(v.AsString())))
		}
	}
	if !hasAny(attrs, "db.name", "db.namespace") {
		if v, ok := attrs.Get("db.instance"); ok {
			put("db.namespace", pcommon.NewValueStr(v.AsString()))
		}
	}
	// Messaging: OpenTracing's message_bus.destination.
	if v, ok := attrs.Get("message_bus.destination"); ok {
		put("messaging.destination.name", v)
	}
	// The peer of an exit span: the enrichment reads server.address (or net.peer.name) only.
	if k := span.Kind(); (k == ptrace.SpanKindClient || k == ptrace.SpanKindProducer) &&
		!hasAny(attrs, "server.address", "net.peer.name", "url.full", "http.url") {
		if v, ok := firstOf(attrs, "peer.hostname", "net.peer.ip", "network.peer.address", "peer.ipv4", "peer.ipv6"); ok {
			put("server.address", v)
			if port, ok := firstOf(attrs, "peer.port", "net.peer.port", "network.peer.port"); ok {
				if n, isInt := asInt(port); isInt {
					put("server.port", pcommon.NewValueInt(n))
				}
			}
		}
	}
	// HTTP: Zipkin's tags are strings, and the enrichment reads an integer status code only.
	if !hasAny(attrs, "http.response.status_code") {
		if v, ok := attrs.Get("http.status_code"); ok && v.Type() == pcommon.ValueTypeStr {
			if n, isInt := asInt(v); isInt {
				put("http.response.status_code", pcommon.NewValueInt(n))
			}
		}
	}
	// Errors: an OpenTracing error log (event "error", error.kind, error.object, message, stack)
	// is what the enrichment makes error documents of, an exception event.
	for _, ev := range span.Events().All() {
		if fillExceptionEvent(ev) {
			added = true
		}
	}
	// RPC: a fully qualified method ("pkg.Service/Method", the conventions since 1.39) names the
	// service the enrichment uses as the target.
	if !hasAny(attrs, "rpc.service") {
		if v, ok := attrs.Get("rpc.method"); ok {
			if service, _, found := strings.Cut(strings.TrimPrefix(v.AsString(), "/"), "/"); found && service != "" {
				put("rpc.service", pcommon.NewValueStr(service))
			}
		}
	}
	return added
}

// typeEnrichmentInts makes the integers the enrichment reads (with Value.Int, which reads a string
// as 0) ints where they are decimal strings, in place: Zipkin's tags are all strings, those of
// OpenTelemetry's Zipkin exporter too, and a status code "503" would give transaction.result
// "Success" and no failure, a port "5432" a service target without its port. It reports whether it
// changed one.
func typeEnrichmentInts(attrs pcommon.Map) bool {
	changed := false
	for k, v := range attrs.All() {
		if v.Type() != pcommon.ValueTypeStr {
			continue
		}
		switch k {
		case "http.response.status_code", "server.port", "net.peer.port", "url.port", "rpc.grpc.status_code":
			if n, ok := asInt(v); ok {
				v.SetInt(n)
				changed = true
			}
		}
	}
	return changed
}

// fillExceptionEvent turns an OpenTracing error log into an exception event: its name, and
// exception.type, exception.message and exception.stacktrace beside the fields it had.
func fillExceptionEvent(ev ptrace.SpanEvent) bool {
	if ev.Name() != "error" {
		return false
	}
	attrs := ev.Attributes()
	kind, hasKind := attrs.Get("error.kind")
	msg, hasMsg := firstOf(attrs, "message", "error.object")
	if !hasKind && !hasMsg {
		return false
	}
	ev.SetName("exception")
	var typ, message, stack string
	if hasKind {
		typ = kind.AsString()
	}
	if hasMsg {
		message = msg.AsString()
	}
	if v, ok := attrs.Get("stack"); ok {
		stack = v.AsString()
	}
	for k, v := range map[string]string{"exception.type": typ, "exception.message": message, "exception.stacktrace": stack} {
		if _, ok := attrs.Get(k); !ok && v != "" {
			attrs.PutStr(k, v)
		}
	}
	return true
}

// dbSystemOfType maps OpenTracing's db.type to db.system.name: "sql" names no system, which the
// conventions call other_sql.
func dbSystemOfType(t string) string {
	switch strings.ToLower(t) {
	case "sql":
		return "other_sql"
	case "postgres", "pg":
		return "postgresql"
	case "mongo":
		return "mongodb"
	case "mssql", "sql-server", "sqlserver":
		return "microsoft.sql_server"
	}
	return t
}

func hasAny(attrs pcommon.Map, keys ...string) bool {
	_, ok := firstOf(attrs, keys...)
	return ok
}

func firstOf(attrs pcommon.Map, keys ...string) (pcommon.Value, bool) {
	for _, k := range keys {
		if v, ok := attrs.Get(k); ok {
			return v, true
		}
	}
	return pcommon.Value{}, false
}

// asInt reads a port or a status code given as an int or as a decimal string (OpenTracing and
// Zipkin tags are often strings).
func asInt(v pcommon.Value) (int64, bool) {
	switch v.Type() {
	case pcommon.ValueTypeInt:
		return v.Int(), true
	case pcommon.ValueTypeStr:
		var n int64
		s := v.Str()
		if s == "" || len(s) > 5 {
			return 0, false
		}
		for i := 0; i < len(s); i++ {
			if s[i] < '0' || s[i] > '9' {
				return 0, false
			}
			n = n*10 + int64(s[i]-'0')
		}
		return n, true
	}
	return 0, false
}
