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
	in := spanInputs{attrs: attrs}
	if datadog {
		in.moveDatadogSpanType()
	}
	in.added = typeEnrichmentInts(attrs) || in.added
	// Zipkin and Jaeger local spans carry no kind; the specification lets a receiver of
	// UNSPECIFIED assume INTERNAL, which the enrichment types app/internal (else unknown).
	if span.Kind() == ptrace.SpanKindUnspecified {
		span.SetKind(ptrace.SpanKindInternal)
		in.added = true
	}
	in.derive(openTracingTags)
	in.peer(span.Kind())
	in.derive(reshapedInputs)
	// Errors: an OpenTracing error log (event "error", error.kind, error.object, message, stack)
	// is what the enrichment makes error documents of, an exception event.
	for _, ev := range span.Events().All() {
		in.added = fillExceptionEvent(ev) || in.added
	}
	return in.added
}

// spanInputs adds to a span's attributes and remembers whether it changed them.
type spanInputs struct {
	attrs pcommon.Map
	added bool
}

// put sets k to a copy of v, unless the span has k or v is empty.
func (in *spanInputs) put(k string, v pcommon.Value) {
	if _, ok := in.attrs.Get(k); ok || v.Type() == pcommon.ValueTypeEmpty {
		return
	}
	value := pcommon.NewValueEmpty() // v may point into attrs, which PutEmpty may reallocate
	v.CopyTo(value)
	value.MoveTo(in.attrs.PutEmpty(k))
	in.added = true
}

// moveDatadogSpanType moves a Datadog tracer's span.type to datadog.span.type: its types (web,
// http, sql, cache, ...) are not Elastic's (db, external, messaging, app), and span.type is the
// enrichment's to derive.
func (in *spanInputs) moveDatadogSpanType() {
	v, ok := in.attrs.Get("span.type")
	if !ok {
		return
	}
	value := pcommon.NewValueEmpty() // v points into attrs
	v.CopyTo(value)
	in.attrs.Remove("span.type")
	if _, taken := in.attrs.Get("datadog.span.type"); !taken {
		value.MoveTo(in.attrs.PutEmpty("datadog.span.type"))
	}
	in.added = true
}

// derivedInput is an attribute the enrichment reads (to), made from one a receiver delivers
// (from) where the span has neither to nor any of unless. value returns an empty Value where
// from's value says nothing the enrichment can use.
type derivedInput struct {
	from, to string
	unless   []string
	value    func(pcommon.Value) pcommon.Value
}

// derive adds every input of table that the span lacks, in the table's order.
func (in *spanInputs) derive(table []derivedInput) {
	for _, d := range table {
		if hasAny(in.attrs, d.unless...) {
			continue
		}
		if v, ok := in.attrs.Get(d.from); ok {
			in.put(d.to, d.value(v))
		}
	}
}

// openTracingTags: databases (db.type, db.instance) and messaging (message_bus.destination).
var openTracingTags = []derivedInput{
	{"db.type", "db.system.name", []string{"db.system"}, func(v pcommon.Value) pcommon.Value {
		return pcommon.NewValueStr(dbSystemOfType(v.AsString()))
	}},
	{"db.instance", "db.namespace", []string{"db.name"}, func(v pcommon.Value) pcommon.Value {
		return pcommon.NewValueStr(v.AsString())
	}},
	{"message_bus.destination", "messaging.destination.name", nil, func(v pcommon.Value) pcommon.Value { return v }},
}

// reshapedInputs: facts the enrichment reads in another shape. Zipkin's tags are strings, and the
// enrichment reads an integer status code only; a fully qualified rpc.method ("pkg.Service/Method",
// the conventions since 1.39) names the service the enrichment uses as the target.
var reshapedInputs = []derivedInput{
	{"http.status_code", "http.response.status_code", nil, func(v pcommon.Value) pcommon.Value {
		if n, isInt := asInt(v); v.Type() == pcommon.ValueTypeStr && isInt {
			return pcommon.NewValueInt(n)
		}
		return pcommon.NewValueEmpty()
	}},
	{"rpc.method", "rpc.service", nil, func(v pcommon.Value) pcommon.Value {
		if service, _, found := strings.Cut(strings.TrimPrefix(v.AsString(), "/"), "/"); found && service != "" {
			return pcommon.NewValueStr(service)
		}
		return pcommon.NewValueEmpty()
	}},
}

// peer names the peer of an exit span as the enrichment reads it (server.address, or
// net.peer.name), from the address and port a Jaeger or Zipkin span gives.
func (in *spanInputs) peer(kind ptrace.SpanKind) {
	if (kind != ptrace.SpanKindClient && kind != ptrace.SpanKindProducer) ||
		hasAny(in.attrs, "server.address", "net.peer.name", "url.full", "http.url") {
		return
	}
	v, ok := firstOf(in.attrs, "peer.hostname", "net.peer.ip", "network.peer.address", "peer.ipv4", "peer.ipv6")
	if !ok {
		return
	}
	in.put("server.address", v)
	if port, ok := firstOf(in.attrs, "peer.port", "net.peer.port", "network.peer.port"); ok {
		if n, isInt := asInt(port); isInt {
			in.put("server.port", pcommon.NewValueInt(n))
		}
	}
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

// dbSystems maps OpenTracing's db.type (in lower case) to db.system.name where they differ: "sql"
// names no system, which the conventions call other_sql.
var dbSystems = map[string]string{
	"sql":      "other_sql",
	"postgres": "postgresql", "pg": "postgresql",
	"mongo": "mongodb",
	"mssql": "microsoft.sql_server", "sql-server": "microsoft.sql_server", "sqlserver": "microsoft.sql_server",
}

func dbSystemOfType(t string) string {
	if s, ok := dbSystems[strings.ToLower(t)]; ok {
		return s
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
