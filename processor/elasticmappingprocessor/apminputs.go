package elasticmappingprocessor

import (
	"strings"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// fillAPMInputs gives a span the attributes Elastic's APM enrichment (the elasticapm processor)
// reads, where a receiver delivers the same fact under another name: OpenTracing's tags (Jaeger
// clients), Zipkin's remote endpoint given as an IP only, and a fully qualified rpc.method without
// rpc.service. Attributes the span already has win; nothing is removed. It reports whether it
// added anything.
func fillAPMInputs(span ptrace.Span) bool {
	attrs := span.Attributes()
	added := false
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

// asInt reads a port given as an int or as a decimal string (OpenTracing tags are often strings).
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
