// Package tracemodel is the load generator's traces (realistic services with web, database, HTTP
// client and template spans) and the encodings of them that need no tracer or client library:
// OTLP pdata, the Datadog tracers' msgpack (v0.4, v0.5) and the Elastic APM intake's NDJSON.
// Components' benchmarks import it alone; the Jaeger and Zipkin encodings and the senders live in
// loadgen and tracesend, with the libraries they need.
package tracemodel

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"time"
)

// AttrSamplingPriority is the OpenTracing tag every generated span carries with value 1.
const AttrSamplingPriority = "sampling.priority"

// AttrType is the type of an attribute value.
type AttrType int

// Attribute value types.
const (
	AttrString AttrType = iota
	AttrInt
	AttrFloat
	AttrBool
)

// Attr is one span attribute.
type Attr struct {
	Key   string
	Type  AttrType
	Str   string
	Int   int64
	Float float64
	Bool  bool
}

// String returns the value as text (for protocols whose tags are strings).
func (a Attr) String() string {
	switch a.Type {
	case AttrInt:
		return strconv.FormatInt(a.Int, 10)
	case AttrFloat:
		return fmt.Sprint(a.Float)
	case AttrBool:
		return strconv.FormatBool(a.Bool)
	default:
		return a.Str
	}
}

// Kind is a span kind.
type Kind string

// Span kinds.
const (
	KindServer   Kind = "server"
	KindClient   Kind = "client"
	KindInternal Kind = "internal"
)

// Span is one span of a generated trace.
type Span struct {
	SpanID, ParentID uint64 // ParentID 0 for the root
	// Name is the operation (Datadog's "name", e.g. http.request); Resource what it acted on
	// (e.g. "GET /api/orders/{id}"). Protocols without a resource use Resource as the span name.
	Name, Resource string
	Kind           Kind
	Start          time.Time
	Duration       time.Duration
	Error          bool
	Attrs          []Attr
}

// Trace is one request's worth of spans: a single trace of one service.
type Trace struct {
	TraceHi, TraceLo uint64
	Service          string
	Host             string
	Spans            []Span
}

// markID returns a random id whose two top bits are "10". Every id in a payload has that form, so
// each encoding of it has a fixed width (msgpack uint64: 9 bytes; Thrift compact zigzag varint: 10
// bytes; hex: 16 digits), and an id can be replaced in the encoded bytes without moving anything.
func markID(r *rand.Rand) uint64 { return FixID(r.Uint64()) }

func FixID(x uint64) uint64 { return x&^(3<<62) | 1<<63 }

var (
	routes   = []string{"/api/orders/{id}", "/api/cart", "/api/users/{id}/profile", "/api/checkout", "/api/search"}
	methods  = []string{"GET", "POST", "PUT", "GET", "GET"}
	tables   = []string{"orders", "carts", "users", "payments", "products"}
	services = []string{"inventory", "pricing", "payments", "recommendations"}
)

// NewTrace builds a realistic trace of n spans for service: a server root span, then database
// calls, outgoing HTTP calls and internal work as its children, each with about ten attributes.
func NewTrace(r *rand.Rand, service string, n int, now time.Time) Trace {
	t := Trace{TraceHi: markID(r), TraceLo: markID(r), Service: service, Host: fmt.Sprintf("%s-%d", service, r.IntN(8))}
	if n <= 0 {
		return t
	}
	route := r.IntN(len(routes))
	total := time.Duration(5+r.IntN(200)) * time.Millisecond
	start := now.Add(-total)
	common := func(i int) []Attr {
		return []Attr{
			{Key: "deployment.environment", Str: "production"},
			{Key: "service.version", Str: "1.4.2"},
			{Key: "thread.id", Type: AttrInt, Int: int64(100 + r.IntN(64))},
			{Key: "tracegen.index", Type: AttrInt, Int: int64(i)},
			{Key: AttrSamplingPriority, Type: AttrFloat, Float: 1},
		}
	}
	for i := range n {
		s := Span{SpanID: markID(r), Start: start, Duration: total}
		switch {
		case i == 0:
			s.Name, s.Resource, s.Kind = "http.request", methods[route]+" "+routes[route], KindServer
			status := int64(200)
			if r.IntN(50) == 0 {
				status, s.Error = 500, true
			}
			s.Attrs = append(common(i),
				Attr{Key: "http.request.method", Str: methods[route]},
				Attr{Key: "http.route", Str: routes[route]},
				Attr{Key: "http.response.status_code", Type: AttrInt, Int: status},
				Attr{Key: "url.path", Str: fmt.Sprintf("/api/orders/%d", r.IntN(1_000_000))},
				Attr{Key: "user_agent.original", Str: "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 Chrome/124.0"},
			)
		case i%3 == 1:
			table := tables[r.IntN(len(tables))]
			s.Name, s.Resource, s.Kind = "postgresql.query", "SELECT "+table, KindClient
			s.Attrs = append(common(i),
				Attr{Key: "db.system", Str: "postgresql"},
				Attr{Key: "db.name", Str: "shop"},
				Attr{Key: "db.statement", Str: "SELECT id, status, total FROM " + table + " WHERE id = $1"},
				Attr{Key: "db.rows", Type: AttrInt, Int: int64(r.IntN(100))},
				Attr{Key: "db.cached", Type: AttrBool, Bool: r.IntN(2) == 0},
			)
		case i%3 == 2:
			svc := services[r.IntN(len(services))]
			s.Name, s.Resource, s.Kind = "http.client.request", "GET /"+svc, KindClient
			s.Attrs = append(common(i),
				Attr{Key: "http.request.method", Str: "GET"},
				Attr{Key: "server.address", Str: svc + ".svc.cluster.local"},
				Attr{Key: "server.port", Type: AttrInt, Int: 8080},
				Attr{Key: "http.response.status_code", Type: AttrInt, Int: 200},
				Attr{Key: "network.protocol.version", Str: "1.1"},
			)
		default:
			s.Name, s.Resource, s.Kind = "template.render", "render order", KindInternal
			s.Attrs = append(common(i),
				Attr{Key: "template.name", Str: "order.html"},
				Attr{Key: "template.bytes", Type: AttrInt, Int: int64(1000 + r.IntN(50000))},
				Attr{Key: "template.cache_hit", Type: AttrBool, Bool: true},
				Attr{Key: "render.ratio", Type: AttrFloat, Float: r.Float64()},
				Attr{Key: "code.function", Str: "renderOrder"},
			)
		}
		if i > 0 {
			s.ParentID = t.Spans[0].SpanID
			off := time.Duration(r.Int64N(int64(total) / 2))
			s.Start = start.Add(off)
			s.Duration = time.Duration(r.Int64N(int64(total-off))) + time.Microsecond
		}
		t.Spans = append(t.Spans, s)
	}
	return t
}
