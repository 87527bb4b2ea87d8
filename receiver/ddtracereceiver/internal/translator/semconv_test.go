package translator

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/tracegate/tracegate/receiver/ddtracereceiver/internal/payload"
)

// semconvSpan translates one span with the semconv mapping.
func semconvSpan(t *testing.T, s payload.Span) ptrace.Span {
	t.Helper()
	if s.TraceID == 0 {
		s.TraceID = 1
	}
	if s.SpanID == 0 {
		s.SpanID = 2
	}
	res := New(Options{}).ToTraces(one(s), Headers{})
	require.Equal(t, 1, res.Spans)
	return spansOf(res)[0]
}

// userAttributes are a span's attributes without the three every semconv span has.
func userAttributes(span ptrace.Span) map[string]any {
	m := span.Attributes().AsRaw()
	delete(m, "operation.name")
	delete(m, "resource.name")
	delete(m, "span.type")
	return m
}

// TestSemconvTagTable has one vector per row of the mapping tables (README, "Mapping"): a span
// with the one Datadog tag gets the attribute under the conventions' name and type, and the
// Datadog name is gone.
func TestSemconvTagTable(t *testing.T) {
	for _, tt := range []struct {
		key, value string
		kind       string // span.kind tag, where the mapping depends on it
		spanType   string
		want       map[string]any
	}{
		// HTTP
		{"http.method", "GET", "", "", map[string]any{"http.request.method": "GET"}},
		{"http.method", "get", "", "", map[string]any{"http.request.method": "GET", "http.request.method_original": "get"}},
		{"http.method", "PURGE", "", "", map[string]any{"http.request.method": "_OTHER", "http.request.method_original": "PURGE"}},
		{"http.status_code", "404", "", "", map[string]any{"http.response.status_code": int64(404)}},
		{"http.status_code", "n/a", "", "", map[string]any{"http.response.status_code": "n/a"}},
		{"http.response.status_code", "503", "", "", map[string]any{"http.response.status_code": int64(503)}},
		{"http.request.body.size", "512", "", "", map[string]any{"http.request.body.size": int64(512)}},
		{"http.response.body.size", "2048", "", "", map[string]any{"http.response.body.size": int64(2048)}},
		{"http.url", "https://shop:8443/cart?id=1#top", "client", "", map[string]any{"url.full": "https://shop:8443/cart?id=1#top", "server.address": "shop", "server.port": int64(8443)}},
		{"http.url", "https://shop:8443/cart?id=1#top", "server", "", map[string]any{"url.scheme": "https", "url.path": "/cart", "url.query": "id=1"}},
		{"http.url", "/cart?id=1", "server", "", map[string]any{"url.path": "/cart", "url.query": "id=1"}},
		{"http.route", "/cart/:id", "", "", map[string]any{"http.route": "/cart/:id"}},
		{"http.useragent", "curl/8", "", "", map[string]any{"user_agent.original": "curl/8"}},
		{"http.client_ip", "10.0.0.1", "", "", map[string]any{"client.address": "10.0.0.1"}},
		{"network.client.ip", "10.0.0.1", "", "", map[string]any{"client.address": "10.0.0.1"}},
		{"http.host", "shop", "", "", map[string]any{"server.address": "shop"}},
		{"http.host", "shop:8080", "", "", map[string]any{"server.address": "shop", "server.port": int64(8080)}},
		{"http.hostname", "shop", "", "", map[string]any{"server.address": "shop"}},
		{"http.server_name", "shop", "", "", map[string]any{"server.address": "shop"}},
		{"http.version", "1.1", "", "", map[string]any{"network.protocol.version": "1.1"}},
		{"http.request.content_length", "12", "", "", map[string]any{"http.request.body.size": int64(12)}},
		{"http.response.content_length", "34", "", "", map[string]any{"http.response.body.size": int64(34)}},
		{"http.referer", "https://a/", "", "", map[string]any{"http.request.header.referer": []any{"https://a/"}}},
		{"http.request.headers.x-id", "abc", "", "", map[string]any{"http.request.header.x-id": []any{"abc"}}},
		{"http.response.headers.Content-Type", "text/plain", "", "", map[string]any{"http.response.header.content-type": []any{"text/plain"}}},
		{"http.endpoint", "/cart", "", "", map[string]any{"http.endpoint": "/cart"}},

		// Databases
		{"db.type", "postgres", "", "", map[string]any{"db.system.name": "postgresql"}},
		{"db.type", "postgresql", "", "", map[string]any{"db.system.name": "postgresql"}},
		{"db.type", "sql-server", "", "", map[string]any{"db.system.name": "microsoft.sql_server"}},
		{"db.type", "mssql", "", "", map[string]any{"db.system.name": "microsoft.sql_server"}},
		{"db.type", "oracle", "", "", map[string]any{"db.system.name": "oracle.db"}},
		{"db.type", "redis", "", "", map[string]any{"db.system.name": "redis"}},
		{"db.system", "mysql", "", "", map[string]any{"db.system.name": "mysql"}},
		{"db.instance", "shop", "", "", map[string]any{"db.namespace": "shop"}},
		{"db.name", "shop", "", "", map[string]any{"db.namespace": "shop"}},
		{"mongodb.db", "shop", "", "", map[string]any{"db.namespace": "shop"}},
		{"out.redis_db", "2", "", "", map[string]any{"db.namespace": "2"}},
		{"db.redis.dbIndex", "2", "", "", map[string]any{"db.namespace": "2"}},
		{"db.redis.database_index", "2", "", "", map[string]any{"db.namespace": "2"}},
		{"sql.query", "SELECT 1", "", "", map[string]any{"db.query.text": "SELECT 1"}},
		{"db.statement", "SELECT 1", "", "", map[string]any{"db.query.text": "SELECT 1"}},
		{"mongodb.query", "{}", "", "", map[string]any{"db.query.text": "{}"}},
		{"redis.raw_command", "GET k", "", "", map[string]any{"db.query.text": "GET k"}},
		{"elasticsearch.body", "{}", "", "", map[string]any{"db.query.text": "{}"}},
		{"db.operation", "SELECT", "", "", map[string]any{"db.operation.name": "SELECT"}},
		{"db.sql.table", "cart", "", "", map[string]any{"db.collection.name": "cart"}},
		{"mongodb.collection", "cart", "", "", map[string]any{"db.collection.name": "cart"}},
		{"db.mongodb.collection", "cart", "", "", map[string]any{"db.collection.name": "cart"}},
		{"db.row_count", "3", "", "", map[string]any{"db.response.returned_rows": int64(3)}},
		{"sql.rows", "3", "", "", map[string]any{"db.response.returned_rows": int64(3)}},
		{"db.pool.name", "main", "", "", map[string]any{"db.client.connection.pool.name": "main"}},
		{"db.user", "shop", "", "", map[string]any{"db.user": "shop"}},
		{"elasticsearch.method", "POST", "", "", map[string]any{"http.request.method": "POST"}},
		{"elasticsearch.url", "http://es:9200/_bulk", "", "", map[string]any{"url.full": "http://es:9200/_bulk"}},

		// Messaging
		{"kafka.topic", "orders", "", "", map[string]any{"messaging.destination.name": "orders"}},
		{"messaging.destination.name", "orders", "", "", map[string]any{"messaging.destination.name": "orders"}},
		{"amqp.queue", "orders", "", "", map[string]any{"messaging.destination.name": "orders"}},
		{"amqp.exchange", "orders", "", "", map[string]any{"messaging.destination.name": "orders"}},
		{"aws.queue.name", "orders", "", "", map[string]any{"messaging.destination.name": "orders"}},
		{"aws.sqs.queue_name", "orders", "", "", map[string]any{"messaging.destination.name": "orders"}},
		{"kafka.partition", "3", "", "", map[string]any{"messaging.destination.partition.id": "3"}},
		{"messaging.kafka.partition", "3", "", "", map[string]any{"messaging.destination.partition.id": "3"}},
		{"partition", "3", "", "queue", map[string]any{"messaging.destination.partition.id": "3"}},
		{"partition", "3", "", "web", map[string]any{"partition": "3"}},
		{"kafka.message.offset", "42", "", "", map[string]any{"messaging.kafka.offset": int64(42)}},
		{"kafka.message_offset", "42", "", "", map[string]any{"messaging.kafka.offset": int64(42)}},
		{"kafka.offset", "42", "", "", map[string]any{"messaging.kafka.offset": int64(42)}},
		{"offset", "42", "", "queue", map[string]any{"messaging.kafka.offset": int64(42)}},
		{"offset", "42", "", "", map[string]any{"offset": "42"}},
		{"kafka.group", "g", "", "", map[string]any{"messaging.consumer.group.name": "g"}},
		{"kafka.group_id", "g", "", "", map[string]any{"messaging.consumer.group.name": "g"}},
		{"kafka.message_key", "k", "", "", map[string]any{"messaging.kafka.message.key": "k"}},
		{"messaging.kafka.key", "k", "", "", map[string]any{"messaging.kafka.message.key": "k"}},
		{"kafka.tombstone", "true", "", "", map[string]any{"messaging.kafka.message.tombstone": true}},
		{"tombstone", "false", "", "queue", map[string]any{"messaging.kafka.message.tombstone": false}},
		{"amqp.routing_key", "r", "", "", map[string]any{"messaging.rabbitmq.destination.routing_key": "r"}},
		{"kombu.routing_key", "r", "", "", map[string]any{"messaging.rabbitmq.destination.routing_key": "r"}},
		{"messaging.system", "kafka", "", "", map[string]any{"messaging.system": "kafka"}},
		{"messaging.system", "amazonsqs", "", "", map[string]any{"messaging.system": "aws_sqs"}},
		{"messaging.system", "googlepubsub", "", "", map[string]any{"messaging.system": "gcp_pubsub"}},
		{"messaging.operation", "produce", "", "", map[string]any{"messaging.operation.type": "send", "messaging.operation.name": "produce"}},
		{"messaging.operation", "consume", "", "", map[string]any{"messaging.operation.type": "process", "messaging.operation.name": "consume"}},
		{"messaging.operation", "peek", "", "", map[string]any{"messaging.operation.name": "peek"}},
		{"messaging.kafka.bootstrap.servers", "k1:9092", "", "", map[string]any{"messaging.kafka.bootstrap.servers": "k1:9092"}},

		// RPC
		{"rpc.grpc.full_method", "/shop.Cart/Get", "", "", map[string]any{"rpc.method": "shop.Cart/Get", "rpc.system.name": "grpc"}},
		{"grpc.method.name", "/shop.Cart/Get", "", "", map[string]any{"rpc.method": "shop.Cart/Get", "rpc.system.name": "grpc"}},
		{"grpc.method.path", "/shop.Cart/Get", "", "", map[string]any{"rpc.method": "shop.Cart/Get", "rpc.system.name": "grpc"}},
		{"rpc.method", "Get", "", "", map[string]any{"rpc.method": "Get"}},
		{"rpc.service", "shop.Cart", "", "", map[string]any{}},
		{"grpc.method.service", "Cart", "", "", map[string]any{}},
		{"grpc.method.package", "shop", "", "", map[string]any{}},
		{"rpc.system", "grpc", "", "", map[string]any{"rpc.system.name": "grpc"}},
		{"grpc.code", "NotFound", "", "", map[string]any{"rpc.response.status_code": "NOT_FOUND", "rpc.system.name": "grpc"}},
		{"grpc.status.code", "5", "", "", map[string]any{"rpc.response.status_code": "NOT_FOUND", "rpc.system.name": "grpc"}},
		{"grpc.method.kind", "unary", "", "", map[string]any{"grpc.method.kind": "unary"}},
		{"aws.operation", "GetObject", "", "", map[string]any{"rpc.method": "GetObject", "rpc.system.name": "aws-api"}},

		// Network and peer
		{"out.host", "db1", "", "", map[string]any{"server.address": "db1"}},
		{"peer.hostname", "db1", "", "", map[string]any{"server.address": "db1"}},
		{"network.destination.name", "db1", "", "", map[string]any{"server.address": "db1"}},
		{"out.port", "5432", "", "", map[string]any{"server.port": int64(5432)}},
		{"network.destination.port", "5432", "", "", map[string]any{"server.port": int64(5432)}},
		{"peer.port", "5432", "", "", map[string]any{"server.port": int64(5432)}},
		{"server.port", "8443", "", "", map[string]any{"server.port": int64(8443)}},
		{"client.port", "50123", "", "", map[string]any{"client.port": int64(50123)}},
		{"network.peer.port", "5432", "", "", map[string]any{"network.peer.port": int64(5432)}},
		{"network.local.port", "8080", "", "", map[string]any{"network.local.port": int64(8080)}},
		{"rpc.grpc.status_code", "5", "", "", map[string]any{"rpc.grpc.status_code": int64(5)}},
		{"messaging.batch.message_count", "10", "", "", map[string]any{"messaging.batch.message_count": int64(10)}},
		{"thread.id", "17", "", "", map[string]any{"thread.id": int64(17)}},
		{"code.line.number", "42", "", "", map[string]any{"code.line.number": int64(42)}},
		{"thread.id", "main", "", "", map[string]any{"thread.id": "main"}},
		{"network.destination.ip", "10.0.0.2", "", "", map[string]any{"network.peer.address": "10.0.0.2"}},
		{"peer.ipv4", "10.0.0.2", "", "", map[string]any{"network.peer.address": "10.0.0.2"}},
		{"peer.ipv6", "::1", "", "", map[string]any{"network.peer.address": "::1"}},
		{"peer.service", "billing", "", "", map[string]any{"peer.service": "billing"}},

		// Platform tags, as contrib names them
		{"kube_namespace", "prod", "", "", map[string]any{"k8s.namespace.name": "prod"}},
		{"pod_name", "web-1", "", "", map[string]any{"k8s.pod.name": "web-1"}},
		{"region", "eu-west-1", "", "", map[string]any{"cloud.region": "eu-west-1"}},

		// Unknown user tags stay as they are
		{"customer.tier", "gold", "", "", map[string]any{"customer.tier": "gold"}},
		{"Customer.Tier", "gold", "", "", map[string]any{"Customer.Tier": "gold"}},
	} {
		t.Run(tt.key+"="+tt.value+"/"+tt.kind+tt.spanType, func(t *testing.T) {
			meta := []payload.KV{{Key: tt.key, Value: tt.value}}
			if tt.kind != "" {
				meta = append(meta, payload.KV{Key: "span.kind", Value: tt.kind})
			}
			span := semconvSpan(t, payload.Span{Service: "svc", Name: "op", Type: tt.spanType, Meta: meta})
			assert.Equal(t, tt.want, userAttributes(span))
		})
	}
}

// TestSemconvDropsBookkeeping: tracer and agent bookkeeping, process facts (on the resource) and
// error tags (status and exception event) are not span attributes, as meta or as metrics.
func TestSemconvDropsBookkeeping(t *testing.T) {
	meta := []payload.KV{}
	for _, k := range []string{
		"_dd.p.dm", "_dd.p.tid", "_dd.p.ksr", "_dd.p.ts", "_dd.origin", "_dd.svc_src", "_dd.parent_id",
		"_dd.peer.service.source", "_dd.span_events.has_exception", "_dd.integration",
		"_dd.hostname", "_dd.tags.process", "_dd.git.commit.sha", "_dd1.sr.eausr", "_dd.sdk.otlp_export",
		"service", "env", "version", "language", "runtime-id", "span.kind",
		"error.message", "error.msg", "error.type", "error.stack", "error.stacktrace", "error.handling_stack",
	} {
		meta = append(meta, payload.KV{Key: k, Value: "0000000000000001"})
	}
	metrics := []payload.KF{}
	for _, k := range []string{
		"_sampling_priority_v1", "_dd.agent_psr", "_dd.rule_psr", "_dd.limit_psr", "_sample_rate",
		"_dd.top_level", "_top_level", "_dd.measured", "process_id", "_dd.profiling.enabled",
	} {
		metrics = append(metrics, payload.KF{Key: k, Value: 1})
	}
	span := semconvSpan(t, payload.Span{Service: "svc", Name: "op", Error: 1, Meta: meta, Metrics: metrics})
	assert.Equal(t, map[string]any{"sampling.priority": int64(1)}, userAttributes(span),
		"only the one sampling attribute is left")
	assert.Equal(t, ptrace.StatusCodeError, span.Status().Code())
	require.Equal(t, 1, span.Events().Len(), "the error tags are the exception event")
	assert.Equal(t, "exception", span.Events().At(0).Name())
}

// TestSemconvMetricsTyped: numeric tags keep their type; integer attributes become ints, string
// attributes (a partition id) strings, and a gRPC status number its name.
func TestSemconvMetricsTyped(t *testing.T) {
	span := semconvSpan(t, payload.Span{Service: "svc", Name: "op", Type: "queue", Metrics: []payload.KF{
		{Key: "http.status_code", Value: 503},
		{Key: "kafka.partition", Value: 3},
		{Key: "offset", Value: 7},
		{Key: "grpc.status.code", Value: 14},
		{Key: "cart.total", Value: 12.5},
		{Key: "kafka.tombstone", Value: 1},
		{Key: "http.url", Value: 7}, // nonsense, but a tracer may send it
		{Key: "server.port", Value: 5432},
		{Key: "thread.id", Value: 17},
		{Key: "network.peer.port", Value: 0.5}, // not an integer: stays what it was sent as
	}})
	assert.Equal(t, map[string]any{
		"http.response.status_code":          int64(503),
		"messaging.destination.partition.id": "3",
		"messaging.kafka.offset":             int64(7),
		"rpc.response.status_code":           "UNAVAILABLE",
		"rpc.system.name":                    "grpc",
		"cart.total":                         12.5,
		"messaging.kafka.message.tombstone":  true,
		"url.full":                           "7",
		"server.port":                        int64(5432),
		"thread.id":                          int64(17),
		"network.peer.port":                  0.5,
	}, userAttributes(span))
}

// TestSemconvIntegrationService: an integration's own service (renamed with _dd.base_service) is
// the span's peer.service, unless the tracer sent one; the resource is the application's.
func TestSemconvIntegrationService(t *testing.T) {
	renamed := semconvSpan(t, payload.Span{Service: "web-postgres", Name: "pg.query", Meta: kv("_dd.base_service", "web")})
	assert.Equal(t, map[string]any{"peer.service": "web-postgres"}, userAttributes(renamed))
	withPeer := semconvSpan(t, payload.Span{Service: "web-postgres", Name: "pg.query", Meta: kv("_dd.base_service", "web", "peer.service", "orders-db")})
	assert.Equal(t, map[string]any{"peer.service": "orders-db"}, userAttributes(withPeer))
}

// TestSemconvQueryFromResource: a SQL span without a query tag (dd-trace-go's database/sql) has
// its statement in the resource, which becomes db.query.text; a query tag wins.
func TestSemconvQueryFromResource(t *testing.T) {
	fromResource := semconvSpan(t, payload.Span{Service: "svc", Name: "sqlite.query", Type: "sql", Resource: "SELECT name FROM users WHERE id = ?"})
	v, _ := fromResource.Attributes().Get("db.query.text")
	assert.Equal(t, "SELECT name FROM users WHERE id = ?", v.Str())
	assert.Equal(t, "SELECT", fromResource.Name())
	tagged := semconvSpan(t, payload.Span{Service: "svc", Name: "pg.query", Type: "sql", Resource: "SELECT ?", Meta: kv("sql.query", "SELECT 1")})
	v, _ = tagged.Attributes().Get("db.query.text")
	assert.Equal(t, "SELECT 1", v.Str())
	noResource := semconvSpan(t, payload.Span{Service: "svc", Name: "pg.connect", Type: "sql"})
	assert.NotContains(t, noResource.Attributes().AsRaw(), "db.query.text")
}

// TestSemconvTraceState: the W3C tracestate a tracer propagated is the span's trace state.
func TestSemconvTraceState(t *testing.T) {
	span := semconvSpan(t, payload.Span{Service: "svc", Name: "op", Meta: kv("tracestate", "dd=s:2;t.dm:-3,ot=th:0")})
	assert.Equal(t, "dd=s:2;t.dm:-3,ot=th:0", span.TraceState().AsRaw())
	assert.Empty(t, userAttributes(span))
}

// TestSemconvKeepsDatadogNames: operation.name, resource.name and span.type stay, as Datadog's OTLP
// exporters write them; contrib's copies do not.
func TestSemconvKeepsDatadogNames(t *testing.T) {
	span := semconvSpan(t, payload.Span{Service: "svc", Name: "express.request", Resource: "GET /users/:id", Type: "web"})
	attrs := span.Attributes().AsRaw()
	assert.Equal(t, "express.request", attrs["operation.name"])
	assert.Equal(t, "GET /users/:id", attrs["resource.name"])
	assert.Equal(t, "web", attrs["span.type"])
	for _, k := range []string{"dd.span.Resource", "datadog.span.id", "datadog.trace.id"} {
		assert.NotContains(t, attrs, k)
	}
	noResource := semconvSpan(t, payload.Span{Service: "svc", Name: "job"})
	v, _ := noResource.Attributes().Get("resource.name")
	assert.Equal(t, "job", v.Str(), "the agent's normalizer gives a span without resource its name")
}

func kv(pairs ...string) []payload.KV {
	out := make([]payload.KV, 0, len(pairs)/2)
	for i := 0; i+1 < len(pairs); i += 2 {
		out = append(out, payload.KV{Key: pairs[i], Value: pairs[i+1]})
	}
	return out
}

// TestSemconvSpanNames: names by the conventions for the kind of call, never a query text or a
// raw path.
func TestSemconvSpanNames(t *testing.T) {
	for _, tt := range []struct {
		name string
		span payload.Span
		want string
	}{
		{"http server with route", payload.Span{Name: "express.request", Resource: "GET /users/:id", Type: "web", Meta: kv("span.kind", "server", "http.method", "GET", "http.route", "/users/:id")}, "GET /users/:id"},
		{"http server, resource not the route", payload.Span{Name: "http.request", Resource: "GET /users/7", Type: "web", Meta: kv("span.kind", "server", "http.method", "GET", "http.route", "/users/{id}")}, "GET /users/{id}"},
		{"http server without route", payload.Span{Name: "http.request", Resource: "GET /users/7", Type: "web", Meta: kv("span.kind", "server", "http.method", "GET")}, "GET"},
		{"http client", payload.Span{Name: "http.request", Resource: "GET /users/7", Type: "http", Meta: kv("span.kind", "client", "http.method", "GET", "http.url", "http://u/users/7")}, "GET"},
		{"http unknown method", payload.Span{Name: "http.request", Type: "http", Meta: kv("span.kind", "client", "http.method", "PURGE")}, "HTTP"},
		{"db with operation and collection", payload.Span{Name: "mongodb.query", Resource: "find shop.cart", Type: "mongodb", Meta: kv("db.operation", "find", "mongodb.collection", "cart")}, "find cart"},
		{"db sql, operation from the statement", payload.Span{Name: "pg.query", Resource: "SELECT * FROM cart WHERE id = $1", Type: "sql", Meta: kv("db.type", "postgres", "db.name", "shop")}, "SELECT shop"},
		{"db sql without namespace", payload.Span{Name: "sqlite.query", Resource: "select name from users where id = ?", Type: "sql", Meta: kv("db.system", "sqlite")}, "SELECT"},
		{"db without operation", payload.Span{Name: "pg.connect", Resource: "pg.connect", Type: "sql", Meta: kv("db.type", "postgres")}, "postgresql"},
		{"redis command", payload.Span{Name: "redis.command", Resource: "HGETALL", Type: "redis", Meta: kv("db.type", "redis", "out.redis_db", "0")}, "HGETALL 0"},
		{"messaging produce", payload.Span{Name: "kafka.produce", Resource: "Produce Topic orders", Type: "queue", Meta: kv("span.kind", "producer", "messaging.system", "kafka", "messaging.destination.name", "orders")}, "send orders"},
		{"messaging consume", payload.Span{Name: "kafka.consume", Resource: "Consume Topic orders", Type: "queue", Meta: kv("span.kind", "consumer", "messaging.system", "kafka", "kafka.topic", "orders")}, "process orders"},
		{"messaging operation tag", payload.Span{Name: "amqp.command", Type: "queue", Meta: kv("messaging.operation", "publish", "amqp.exchange", "ex")}, "send ex"},
		{"grpc", payload.Span{Name: "grpc.server", Resource: "/shop.Cart/Get", Type: "grpc", Meta: kv("span.kind", "server", "rpc.grpc.full_method", "/shop.Cart/Get")}, "shop.Cart/Get"},
		{"rpc service and method", payload.Span{Name: "grpc.client", Type: "grpc", Meta: kv("rpc.service", "shop.Cart", "rpc.method", "Get", "rpc.system", "grpc")}, "shop.Cart/Get"},
		{"aws sdk", payload.Span{Name: "aws.request", Resource: "s3.GetObject", Type: "http", Meta: kv("aws.service", "s3", "aws.operation", "GetObject")}, "s3/GetObject"},
		{"custom, low-cardinality resource", payload.Span{Name: "spring.handler", Resource: "CartController.get"}, "CartController.get"},
		{"custom, resource with an id", payload.Span{Name: "job.run", Resource: "job 4242"}, "job.run"},
		{"custom, resource with a query", payload.Span{Name: "render", Resource: "/page?x=1"}, "render"},
		{"custom, long resource", payload.Span{Name: "render", Resource: strings.Repeat("a", maxNameResource+1)}, "render"},
		{"custom without resource", payload.Span{Name: "tick"}, "tick"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			tt.span.Service = "svc"
			assert.Equal(t, tt.want, semconvSpan(t, tt.span).Name())
		})
	}
}

// TestSemconvKind: span.kind when sent, else inferred from span.type and the operation name.
func TestSemconvKind(t *testing.T) {
	for _, tt := range []struct {
		tag, spanType, name string
		want                ptrace.SpanKind
	}{
		{"server", "http", "x", ptrace.SpanKindServer},
		{"CLIENT", "web", "x", ptrace.SpanKindClient},
		{"producer", "", "x", ptrace.SpanKindProducer},
		{"consumer", "", "x", ptrace.SpanKindConsumer},
		{"internal", "web", "x", ptrace.SpanKindInternal},
		{"", "web", "x", ptrace.SpanKindServer},
		{"", "serverless", "x", ptrace.SpanKindServer},
		{"", "http", "x", ptrace.SpanKindClient},
		{"", "sql", "x", ptrace.SpanKindClient},
		{"", "db", "x", ptrace.SpanKindClient},
		{"", "cassandra", "x", ptrace.SpanKindClient},
		{"", "redis", "x", ptrace.SpanKindClient},
		{"", "valkey", "x", ptrace.SpanKindClient},
		{"", "memcached", "x", ptrace.SpanKindClient},
		{"", "cache", "x", ptrace.SpanKindClient},
		{"", "mongodb", "x", ptrace.SpanKindClient},
		{"", "elasticsearch", "x", ptrace.SpanKindClient},
		{"", "opensearch", "x", ptrace.SpanKindClient},
		{"", "leveldb", "x", ptrace.SpanKindClient},
		{"", "consul", "x", ptrace.SpanKindClient},
		{"", "dns", "x", ptrace.SpanKindClient},
		{"", "aerospike", "x", ptrace.SpanKindClient},
		{"", "grpc", "grpc.server", ptrace.SpanKindServer},
		{"", "grpc", "grpc.client", ptrace.SpanKindClient},
		{"", "rpc", "thrift.server", ptrace.SpanKindServer},
		{"", "grpc", "grpc.stream", ptrace.SpanKindInternal},
		{"", "queue", "kafka.produce", ptrace.SpanKindProducer},
		{"", "queue", "sqs.send", ptrace.SpanKindProducer},
		{"", "queue", "pubsub.publish", ptrace.SpanKindProducer},
		{"", "queue", "kafka.consume", ptrace.SpanKindConsumer},
		{"", "queue", "rabbitmq.process", ptrace.SpanKindConsumer},
		{"", "queue", "sqs.receive", ptrace.SpanKindClient},
		{"", "queue", "kafka.poll", ptrace.SpanKindClient},
		{"", "worker", "celery.run", ptrace.SpanKindInternal},
		{"", "custom", "x", ptrace.SpanKindInternal},
		{"", "template", "x", ptrace.SpanKindInternal},
		{"", "graphql", "x", ptrace.SpanKindInternal},
		{"", "", "x", ptrace.SpanKindInternal},
	} {
		assert.Equal(t, tt.want, semconvKind(tt.tag, tt.spanType, tt.name), "span.kind %q, span.type %q, name %q", tt.tag, tt.spanType, tt.name)
	}
}

// TestRemoteParentFlags: a span's flags say its parent's is-remote is known, and remote when the
// parent is in another service or, for a span marked top-level, outside the payload, so that entry
// spans read as entry spans; a partial flush's children of a tracer that marks top-level spans stay
// local; a parent outside the payload of a tracer that says nothing leaves the flags unset
// (consumers then go by the kind, so an orphan client span is no entry span).
func TestRemoteParentFlags(t *testing.T) {
	root := payload.Span{Service: "web", Name: "root", TraceID: 1, SpanID: 1}
	child := payload.Span{Service: "web", Name: "child", TraceID: 1, SpanID: 2, ParentID: 1}
	otherService := payload.Span{Service: "billing", Name: "rpc", TraceID: 1, SpanID: 3, ParentID: 2}
	renamed := payload.Span{Service: "web-postgres", Name: "pg", TraceID: 1, SpanID: 4, ParentID: 2, Meta: kv("_dd.base_service", "web")}
	fromUpstream := payload.Span{Service: "web", Name: "entry", TraceID: 1, SpanID: 5, ParentID: 99}
	loopback := payload.Span{Service: "web", Name: "web.request", TraceID: 1, SpanID: 7, ParentID: 2, Meta: kv("span.kind", "server")}
	clientChild := payload.Span{Service: "web", Name: "child", TraceID: 1, SpanID: 2, ParentID: 1, Meta: kv("span.kind", "client")}
	orphanClient := payload.Span{Service: "web", Name: "pg", TraceID: 1, SpanID: 8, ParentID: 97, Meta: kv("span.kind", "client")}
	marked := payload.Span{Service: "web", Name: "entry", TraceID: 1, SpanID: 6, ParentID: 98, Metrics: []payload.KF{{Key: "_dd.top_level", Value: 1}}}
	for _, tt := range []struct {
		name             string
		spans            []payload.Span
		computedTopLevel bool
		want             map[string]uint32 // span name -> flags
	}{
		{"local parent", []payload.Span{root, child}, false, map[string]uint32{"root": 0, "child": flagHasIsRemote}},
		{"parent in another service", []payload.Span{root, child, otherService}, false, map[string]uint32{"rpc": flagHasIsRemote | flagIsRemote}},
		{"integration with the base service", []payload.Span{root, child, renamed}, false, map[string]uint32{"pg": flagHasIsRemote}},
		{"parent outside the payload, tracer silent: unknown", []payload.Span{fromUpstream}, false, map[string]uint32{"entry": 0}},
		{"orphan client span, tracer silent: unknown, not an entry span", []payload.Span{orphanClient}, false, map[string]uint32{"pg": 0}},
		{"partial flush of a tracer marking top-level spans", []payload.Span{fromUpstream}, true, map[string]uint32{"entry": flagHasIsRemote}},
		{"marked top-level", []payload.Span{marked}, true, map[string]uint32{"entry": flagHasIsRemote | flagIsRemote}},
		{"server span under a client span of the same process", []payload.Span{root, clientChild, loopback}, false, map[string]uint32{"child": flagHasIsRemote, "web.request": flagHasIsRemote | flagIsRemote}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			res := New(Options{}).ToTraces(one(tt.spans...), Headers{ComputedTopLevel: tt.computedTopLevel})
			got := map[string]uint32{}
			for _, s := range spansOf(res) {
				if _, ok := tt.want[s.Name()]; ok {
					got[s.Name()] = s.Flags()
				}
			}
			assert.Equal(t, tt.want, got)
		})
	}
}

// TestSemconvResourceOnce: the process facts live on the resource and not on the spans; the
// instrumentation scope is the integration.
func TestSemconvResourceOnce(t *testing.T) {
	root := payload.Span{
		Service: "web", Name: "express.request", TraceID: 1, SpanID: 1,
		Meta: kv("env", "prod", "version", "1.2.3", "_dd.hostname", "node-1", "runtime-id", "rid-1",
			"language", "javascript", "component", "express"),
		Metrics: []payload.KF{{Key: "process_id", Value: 42}},
	}
	child := payload.Span{Service: "web", Name: "http.request", TraceID: 1, SpanID: 2, ParentID: 1, Meta: kv("component", "http", "env", "prod", "version", "1.2.3")}
	custom := payload.Span{Service: "web", Name: "work", TraceID: 1, SpanID: 3, ParentID: 1} // integrations' spans may lack env and version
	res := New(Options{}).ToTraces(one(root, child, custom), Headers{LangVersion: "v20.1.0", TracerVersion: "5.132.0"})
	require.Equal(t, 1, res.Traces.ResourceSpans().Len())
	rs := res.Traces.ResourceSpans().At(0)
	assert.Equal(t, map[string]any{
		"service.name": "web", "deployment.environment.name": "prod", "service.version": "1.2.3",
		"host.name": "node-1", "process.pid": int64(42), "service.instance.id": "rid-1",
		"telemetry.sdk.name": "datadog", "telemetry.sdk.language": "nodejs", "telemetry.sdk.version": "5.132.0",
		"process.runtime.version": "v20.1.0",
	}, rs.Resource().Attributes().AsRaw())
	var scopes []string
	for i := range rs.ScopeSpans().Len() {
		ss := rs.ScopeSpans().At(i)
		scopes = append(scopes, ss.Scope().Name())
		assert.Equal(t, "5.132.0", ss.Scope().Version())
		for j := range ss.Spans().Len() {
			attrs := ss.Spans().At(j).Attributes().AsRaw()
			for _, k := range []string{"env", "version", "_dd.hostname", "runtime-id", "language", "process_id", "component", "service.name", "deployment.environment.name", "process.pid"} {
				assert.NotContains(t, attrs, k, "span %s", ss.Spans().At(j).Name())
			}
		}
	}
	assert.Equal(t, []string{"express", "http", "datadog"}, scopes)
}

func TestSemconvValues(t *testing.T) {
	for in, want := range map[string]string{"0": "OK", "16": "UNAUTHENTICATED", "17": "17", "OK": "OK", "NotFound": "NOT_FOUND", "DeadlineExceeded": "DEADLINE_EXCEEDED", "Canceled": "CANCELLED", "NOT_FOUND": "NOT_FOUND"} {
		assert.Equal(t, want, grpcStatusCode(in), "grpc code %q", in)
	}
	for in, want := range map[string][4]string{
		"https://h:1/p/q?x=1#f": {"https", "/p/q", "x=1", "ok"},
		"http://h":              {"http", "", "", "ok"},
		"http://h?x":            {"http", "", "x", "ok"},
		"/p?x":                  {"", "", "", ""},
	} {
		scheme, path, query, ok := splitURL(in)
		okStr := ""
		if ok {
			okStr = "ok"
		}
		assert.Equal(t, want, [4]string{scheme, path, query, okStr}, "splitURL(%q)", in)
	}
	for in, want := range map[string]struct {
		host string
		port int64
	}{
		"http://h:8080/x": {"h", 8080}, "https://u:p@h/x": {"h", 0}, "http://[::1]:9/": {"::1", 9}, "http://[::1]/": {"::1", 0}, "http://h:x/": {"h:x", 0}, "/x": {"", 0},
		"http://::1/": {"::1", 0}, "http://fe80::1:8080/": {"fe80::1:8080", 0},
	} {
		host, port := urlHost(in)
		assert.Equal(t, want.host, host, in)
		assert.Equal(t, want.port, port, in)
	}
	for in, want := range map[string]string{"SELECT * FROM t": "SELECT", "  (select 1)": "SELECT", "GET": "GET", "pg.query": "", "": "", "averyveryveryverylongword x": ""} {
		assert.Equal(t, want, firstWord(in), "firstWord(%q)", in)
	}
	for in, want := range map[string]bool{"CartController.get": true, "GET /users/:id": true, "HTTP/1.1 v2": true, "job 42": false, "/a?b": false, "a\nb": false, "": false} {
		assert.Equal(t, want, lowCardinality(in), "lowCardinality(%q)", in)
	}
}

// TestSamplingPriorityPlaced: the chunk's priority becomes sampling.priority on the span it was
// read from (payload.Chunk.SamplingPriority), once a chunk, with either mapping: the v0.7 chunk's
// own on its root, else the root's metric, else the first span's.
func TestSamplingPriorityPlaced(t *testing.T) {
	prio := func(v float64) []payload.KF { return []payload.KF{{Key: "_sampling_priority_v1", Value: v}} }
	for _, tt := range []struct {
		name  string
		chunk payload.Chunk
		want  map[uint64]int64 // span id: sampling.priority
	}{
		{"v0.7 on the root", payload.Chunk{Priority: -1, Spans: []payload.Span{
			{SpanID: 3, ParentID: 2}, {SpanID: 2, Metrics: prio(1)},
		}}, map[uint64]int64{2: -1}},
		{"the root's metric before an earlier span's", payload.Chunk{Priority: payload.PriorityNone, Spans: []payload.Span{
			{SpanID: 3, ParentID: 2, Metrics: prio(1)}, {SpanID: 2, Metrics: prio(-1)},
		}}, map[uint64]int64{2: -1}},
		{"else the first span's", payload.Chunk{Priority: payload.PriorityNone, Spans: []payload.Span{
			{SpanID: 2}, {SpanID: 3, ParentID: 2, Metrics: prio(2)}, {SpanID: 4, ParentID: 2, Metrics: prio(1)},
		}}, map[uint64]int64{3: 2}},
		{"none", payload.Chunk{Priority: payload.PriorityNone, Spans: []payload.Span{{SpanID: 2}}}, map[uint64]int64{}},
	} {
		for _, mapping := range []Mapping{MappingSemconv, MappingDatadogReceiver} {
			t.Run(tt.name+"/"+string(mapping), func(t *testing.T) {
				c := tt.chunk
				c.Spans = append([]payload.Span(nil), c.Spans...)
				for i := range c.Spans {
					c.Spans[i].TraceID, c.Spans[i].Service, c.Spans[i].Name = 1, "svc", "op"
				}
				res := New(Options{Mapping: mapping}).ToTraces([]payload.Payload{{Chunks: []payload.Chunk{c}}}, Headers{})
				got := map[uint64]int64{}
				for _, s := range spansOf(res) {
					if v, ok := s.Attributes().Get("sampling.priority"); ok {
						id := s.SpanID()
						got[uint64(id[7])] = v.Int()
					}
				}
				assert.Equal(t, tt.want, got)
			})
		}
	}
}
