package translator

import (
	"strconv"
	"strings"
)

// httpMethod returns the method as the conventions want it: one of the known methods, or
// "_OTHER" (the caller then keeps the original in http.request.method_original).
func httpMethod(m string) (string, bool) {
	switch m {
	case "GET", "POST", "PUT", "DELETE", "HEAD", "OPTIONS", "PATCH", "CONNECT", "TRACE", "QUERY":
		return m, true
	}
	if u := strings.ToUpper(m); u != m {
		if known, ok := httpMethod(u); ok {
			return known, true
		}
	}
	return "_OTHER", false
}

// dbSystemName normalises db.type and db.system values to the db.system.name values of the
// conventions where the Datadog value differs.
func dbSystemName(v string) string {
	switch strings.ToLower(v) {
	case "postgres", "postgresql", "pg":
		return "postgresql"
	case "sql-server", "sqlserver", "mssql":
		return "microsoft.sql_server"
	case "oracle":
		return "oracle.db"
	case "mysql":
		return "mysql"
	case "mongodb", "mongo":
		return "mongodb"
	}
	return v
}

// messagingSystem normalises messaging.system values.
func messagingSystem(v string) string {
	switch v {
	case "amazonsqs", "sqs":
		return "aws_sqs"
	case "googlepubsub", "pubsub":
		return "gcp_pubsub"
	}
	return v
}

// messagingOperationType maps the operation a tracer names to messaging.operation.type; "" when
// it is none of the conventions' types.
func messagingOperationType(op string) string {
	switch strings.ToLower(op) {
	case "produce", "publish", "send":
		return "send"
	case "consume", "process":
		return "process"
	case "receive", "poll":
		return "receive"
	case "create":
		return "create"
	case "settle", "commit", "ack":
		return "settle"
	}
	return ""
}

// grpcCodeNames are the gRPC status code names of the conventions, by code.
var grpcCodeNames = [...]string{
	"OK", "CANCELLED", "UNKNOWN", "INVALID_ARGUMENT", "DEADLINE_EXCEEDED", "NOT_FOUND",
	"ALREADY_EXISTS", "PERMISSION_DENIED", "RESOURCE_EXHAUSTED", "FAILED_PRECONDITION", "ABORTED",
	"OUT_OF_RANGE", "UNIMPLEMENTED", "INTERNAL", "UNAVAILABLE", "DATA_LOSS", "UNAUTHENTICATED",
}

// grpcStatusCode turns a gRPC status as tracers send it (a number, grpc-go's "NotFound", or
// "NOT_FOUND") into the name rpc.response.status_code takes for gRPC.
func grpcStatusCode(v string) string {
	if n, err := strconv.Atoi(v); err == nil {
		if n >= 0 && n < len(grpcCodeNames) {
			return grpcCodeNames[n]
		}
		return v
	}
	if v == "Canceled" {
		return "CANCELLED" // grpc-go spells it so
	}
	var b strings.Builder
	for i := 0; i < len(v); i++ {
		c := v[i]
		if 'a' <= c && c <= 'z' {
			c -= 'a' - 'A'
		} else if isUpper(c) && i > 0 && v[i-1] != '_' && !isUpper(v[i-1]) {
			b.WriteByte('_')
		}
		b.WriteByte(c)
	}
	return b.String()
}

// splitURL cuts an absolute URL into scheme, path and query (no fragment), as server spans carry
// them; ok is false when u is not absolute.
func splitURL(u string) (scheme, path, query string, ok bool) {
	i := strings.Index(u, "://")
	if i <= 0 {
		return "", "", "", false
	}
	scheme, rest := u[:i], u[i+3:]
	if j := strings.IndexAny(rest, "/?#"); j >= 0 {
		rest = rest[j:]
	} else {
		rest = ""
	}
	if j := strings.IndexByte(rest, '#'); j >= 0 {
		rest = rest[:j]
	}
	path, query, _ = strings.Cut(rest, "?")
	return scheme, path, query, true
}

// firstWord is the leading word of s if it is a plain keyword (letters only, at most 20), as
// the command of a Redis resource or the statement of a SQL one: a low-cardinality operation.
func firstWord(s string) string {
	s = strings.TrimLeft(s, " \t\r\n(")
	end := 0
	for end < len(s) && end <= 20 {
		c := s[end]
		if !isLetter(c) {
			break
		}
		end++
	}
	if end == 0 || end > 20 || end < len(s) && s[end] != ' ' && s[end] != '\t' && s[end] != '\n' && s[end] != '\r' {
		return ""
	}
	return strings.ToUpper(s[:end])
}

// maxNameResource is the longest resource used as a span name.
const maxNameResource = 100

// lowCardinality tells whether a resource can name spans: short, on one line, and with no
// number of two digits or more and no query string (an id, a timestamp, a raw URL).
func lowCardinality(r string) bool {
	if r == "" || len(r) > maxNameResource {
		return false
	}
	digits := 0
	for i := 0; i < len(r); i++ {
		c := r[i]
		switch {
		case c < ' ' || c == '?':
			return false
		case '0' <= c && c <= '9':
			digits++
			if digits >= 2 {
				return false
			}
		default:
			digits = 0
		}
	}
	return true
}

// urlHost is the host and explicit port of an absolute URL ("" when it has none).
func urlHost(u string) (host string, port int64) {
	i := strings.Index(u, "://")
	if i <= 0 {
		return "", 0
	}
	authority := u[i+3:]
	if j := strings.IndexAny(authority, "/?#"); j >= 0 {
		authority = authority[:j]
	}
	if j := strings.LastIndexByte(authority, '@'); j >= 0 {
		authority = authority[j+1:] // user info is never the host
	}
	return splitHostPort(authority)
}

// splitHostPort cuts "host:port" ("[::1]:80" for IPv6); port is 0 when there is none.
func splitHostPort(hostPort string) (host string, port int64) {
	host = hostPort
	// A port follows the last colon of "host:port" or "[v6]:port"; a bare IPv6 address has more
	// colons and no brackets.
	bare6 := strings.Count(hostPort, ":") > 1 && !strings.HasPrefix(hostPort, "[")
	if j := strings.LastIndexByte(hostPort, ':'); j >= 0 && !bare6 && !strings.HasSuffix(hostPort, "]") {
		if p, err := strconv.ParseInt(hostPort[j+1:], 10, 64); err == nil && p > 0 && p < 65536 {
			host, port = hostPort[:j], p
		}
	}
	return strings.TrimSuffix(strings.TrimPrefix(host, "["), "]"), port
}

func isUpper(c byte) bool { return 'A' <= c && c <= 'Z' }

func isLetter(c byte) bool { return 'a' <= c && c <= 'z' || isUpper(c) }
