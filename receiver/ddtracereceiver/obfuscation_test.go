package ddtracereceiver

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/confmap/confmaptest"
	"go.opentelemetry.io/collector/confmap/xconfmap"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/receiver/receivertest"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/sdk/metric/metricdata/metricdatatest"

	"github.com/tracegate/tracegate/receiver/ddtracereceiver/internal/metadata"
	"github.com/tracegate/tracegate/receiver/ddtracereceiver/internal/metadatatest"
	"github.com/tracegate/tracegate/receiver/ddtracereceiver/internal/obfuscation"
	"github.com/tracegate/tracegate/receiver/ddtracereceiver/internal/translator"
)

// ddSpan is a v0.4 span as decoded JSON, for appendMsgpack; ids and times are fixed.
func ddSpan(id int, typ, resource string, meta map[string]any) map[string]any {
	s := map[string]any{
		"service": "shop", "name": typ + ".query", "resource": resource, "type": typ,
		"trace_id": json.Number("77"), "span_id": json.Number(strconv.Itoa(id)),
		"start": json.Number("1700000000000000000"), "duration": json.Number("1000"),
	}
	if meta != nil {
		s["meta"] = meta
	}
	return s
}

// sendSpans sends one v0.4 trace of spans through the handler of a receiver with cfg and
// returns what reached the pipeline.
func sendSpans(t *testing.T, cfg *Config, spans ...map[string]any) ptrace.Traces {
	t.Helper()
	trace := make([]any, len(spans))
	for i, s := range spans {
		trace[i] = s
	}
	body, err := appendMsgpack(nil, []any{trace}, false)
	require.NoError(t, err)
	sink := new(consumertest.TracesSink)
	r := newTestReceiver(t, cfg, sink)
	rec := serve(t, r, "PUT", "/v0.4/traces", body, nil)
	require.Equal(t, 200, rec.Code, rec.Body.String())
	require.Len(t, sink.AllTraces(), 1)
	return sink.AllTraces()[0]
}

// onlySpan is the one span of td.
func onlySpan(t *testing.T, td ptrace.Traces) ptrace.Span {
	t.Helper()
	require.Equal(t, 1, td.SpanCount())
	return td.ResourceSpans().At(0).ScopeSpans().At(0).Spans().At(0)
}

// obfuscationVector is a published input of the Datadog Agent's obfuscation tests and its output,
// checked on what the receiver stores: the span's resource.name, its name, and attributes.
type obfuscationVector struct {
	typ, resource string
	meta          map[string]any
	cfg           func(*obfuscation.Config) // departures from the default configuration
	wantResource  string
	wantName      string            // "" leaves the name unchecked
	want          map[string]string // attribute → value; "" means the attribute is absent
}

// sqlVector is a statement sent as the resource and as sql.query of a span of typ: both must
// become out, and the span is named by the obfuscated statement's first word.
func sqlVector(typ, in, out string) obfuscationVector {
	name := strings.ToUpper(strings.Fields(out)[0])
	if out == obfuscation.NonParsableSQL {
		name = typ + ".query" // no operation can be read from it: the Datadog operation name
	}
	return obfuscationVector{
		typ: typ, resource: in, meta: map[string]any{"sql.query": in},
		wantResource: out, wantName: name, want: map[string]string{"db.query.text": out},
	}
}

func obfuscationVectors() map[string]obfuscationVector {
	return map[string]obfuscationVector{
		// datadog-agent pkg/obfuscate/sql_test.go, TestSQLQuantizer: literals of several dialects,
		// comments, IN lists, aliases.
		"sql/number":           sqlVector("sql", "select * from users where id = 42", "select * from users where id = ?"),
		"sql/float":            sqlVector("sql", "select * from users where float = .43422", "select * from users where float = ?"),
		"sql/no spaces":        sqlVector("sql", "SELECT host, status FROM ec2_status WHERE org_id=42", "SELECT host, status FROM ec2_status WHERE org_id = ?"),
		"sql/line comments":    sqlVector("sql", "-- get user \n--\n select * \n   from users \n    where\n       id = 214325346", "select * from users where id = ?"),
		"sql/mysql backticks":  sqlVector("sql", "SELECT * FROM `host` WHERE `id` IN (42, 43) /*comment with parameters,host:localhost,url:controller#home,id:FF005:00CAA*/", "SELECT * FROM host WHERE id IN ( ? )"),
		"sql/postgres quoted":  sqlVector("sql", `SELECT "host"."address" FROM "host" WHERE org_id=42`, `SELECT host . address FROM host WHERE org_id = ?`),
		"sql/python params":    sqlVector("sql", "UPDATE user_dash_pref SET json_prefs = %(json_prefs)s, modified = '2015-08-27 22:10:32.492912' WHERE user_id = %(user_id)s AND url = %(url)s", "UPDATE user_dash_pref SET json_prefs = ? modified = ? WHERE user_id = ? AND url = ?"),
		"sql/limit offset":     sqlVector("sql", "SELECT articles.* FROM articles WHERE articles.id = 1 LIMIT 1, 20", "SELECT articles.* FROM articles WHERE articles.id = ? LIMIT ?"),
		"sql/quoted dates":     sqlVector("sql", "SELECT articles.* FROM articles WHERE (articles.created_at BETWEEN '2016-10-31 23:00:00.000000' AND '2016-11-01 23:00:00.000000')", "SELECT articles.* FROM articles WHERE ( articles.created_at BETWEEN ? AND ? )"),
		"sql/dollar params":    sqlVector("sql", "SELECT articles.* FROM articles WHERE (articles.created_at BETWEEN $1 AND $2)", "SELECT articles.* FROM articles WHERE ( articles.created_at BETWEEN ? AND ? )"),
		"sql/quoted string":    sqlVector("sql", "SELECT articles.* FROM articles WHERE (title = 'guides.rubyonrails.org')", "SELECT articles.* FROM articles WHERE ( title = ? )"),
		"sql/in list":          sqlVector("sql", "SELECT articles.* FROM articles WHERE articles.id IN (1, 3, 5)", "SELECT articles.* FROM articles WHERE articles.id IN ( ? )"),
		"sql/multi-row insert": sqlVector("sql", "INSERT INTO user (id, username) VALUES ('Fred','Smith'), ('John','Smith'), ('Michael','Smith'), ('Robert','Smith');", "INSERT INTO user ( id, username ) VALUES ( ? )"),
		"sql/savepoint":        sqlVector("sql", "SAVEPOINT \"s139956586256192_x1\"", "SAVEPOINT ?"),
		"sql/hash comment":     sqlVector("sql", "select * from users where id = 214325346     # This comment continues to the end of line", "select * from users where id = ?"),
		"sql/inline comment":   sqlVector("sql", "SELECT * FROM /* this is an in-line comment */ users;", "SELECT * FROM users"),
		"sql/mysql hint":       sqlVector("sql", "SELECT /*! STRAIGHT_JOIN */ col1 FROM table1", "SELECT col1 FROM table1"),
		"sql/aliases":          sqlVector("sql", "SELECT date(created_at) as ordered_date, sum(price) as total_price FROM orders GROUP BY date(created_at) HAVING sum(price) > 100", "SELECT date ( created_at ), sum ( price ) FROM orders GROUP BY date ( created_at ) HAVING sum ( price ) > ?"),
		"sql/cql keyspace":     sqlVector("cassandra", "CREATE KEYSPACE Excelsior WITH replication = {'class': 'SimpleStrategy', 'replication_factor' : 3};", "CREATE KEYSPACE Excelsior WITH replication = ?"),
		// datadog-agent pkg/obfuscate/sql_test.go, TestCassQuantizer.
		"cassandra/in list": sqlVector("cassandra", "select key, status, modified from org_check_run where org_id = %s and check in (%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s)", "select key, status, modified from org_check_run where org_id = ? and check in ( ? )"),
		// datadog-agent pkg/trace/agent/obfuscate_test.go: TestObfuscateDefaults, TestSQLResourceQuery,
		// TestSQLResourceWithError (a statement that cannot be parsed is replaced as a whole).
		"agent/sql update":             sqlVector("sql", "UPDATE users(name) SET ('Jim')", "UPDATE users ( name ) SET ( ? )"),
		"agent/sql select":             sqlVector("sql", "SELECT * FROM users WHERE id = 42", "SELECT * FROM users WHERE id = ?"),
		"agent/sql unterminated":       sqlVector("sql", "SELECT * FROM users WHERE id = '' AND '", obfuscation.NonParsableSQL),
		"agent/sql truncated params":   sqlVector("sql", "INSERT INTO pages (id, name) VALUES (%(id0)s, %(name0)s), (%(id1)s, %(name1", obfuscation.NonParsableSQL),
		"agent/sql unclosed bracket":   sqlVector("sql", "SELECT [b].[BlogId], [b].[Name]\nFROM [Blogs] AS [b\nORDER BY [b].[Name]", obfuscation.NonParsableSQL),
		"sql/unterminated string":      sqlVector("sql", "SELECT age FROM profile WHERE name='John", obfuscation.NonParsableSQL), // sql_test.go, TestSQLErrors
		"agent/sql db.statement alone": {typ: "sql", resource: "SELECT * FROM users WHERE id = 42", meta: map[string]any{"db.statement": "SELECT * FROM users WHERE id = 42"}, wantResource: "SELECT * FROM users WHERE id = ?", want: map[string]string{"db.query.text": "SELECT * FROM users WHERE id = ?"}},

		// datadog-agent pkg/obfuscate/redis_test.go, TestRedisQuantizer (resource) and
		// TestRedisObfuscator (redis.raw_command).
		"redis/auth":          {typ: "redis", resource: "AUTH my-secret-password", meta: map[string]any{"redis.raw_command": "AUTH my-secret-password"}, wantResource: "AUTH", wantName: "AUTH", want: map[string]string{"db.query.text": "AUTH ?"}},
		"redis/append":        {typ: "redis", resource: "APPEND key value", meta: map[string]any{"redis.raw_command": "APPEND key value"}, wantResource: "APPEND", want: map[string]string{"db.query.text": "APPEND key ?"}},
		"redis/hmset":         {typ: "redis", resource: "HMSET key field value field value", meta: map[string]any{"redis.raw_command": "HMSET key field value field value"}, wantResource: "HMSET", want: map[string]string{"db.query.text": "HMSET key field ? field ?"}},
		"redis/multi":         {typ: "redis", resource: "MULTI\nSET k1 v1\nSET k2 v2\nSET k3 v3\nSET k4 v4\nDEL to_del\nEXEC", wantResource: "MULTI SET SET ..."},
		"redis/config set":    {typ: "redis", resource: "CONFIG SET parameter value", wantResource: "CONFIG SET"},
		"redis/defaults pair": {typ: "redis", resource: "SET k v\nGET k", wantResource: "SET GET"}, // agent obfuscate_test.go, TestObfuscateDefaults
		// datadog-agent pkg/trace/agent/obfuscate_test.go, TestObfuscateConfig: redis/remove_all_args,
		// valkey/enabled (valkey.raw_command keeps its own name), memcached.
		"redis/remove all args": {typ: "redis", resource: "SET", meta: map[string]any{"redis.raw_command": "SET key val"}, cfg: func(c *obfuscation.Config) { c.Redis.RemoveAllArgs = true }, wantResource: "SET", want: map[string]string{"db.query.text": "SET ?"}},
		"redis/disabled":        {typ: "redis", resource: "SET", meta: map[string]any{"redis.raw_command": "SET key val"}, cfg: func(c *obfuscation.Config) { c.Redis.Enabled = false }, wantResource: "SET", want: map[string]string{"db.query.text": "SET key val"}},
		"valkey/enabled":        {typ: "valkey", resource: "SET key val", meta: map[string]any{"valkey.raw_command": "SET key val"}, wantResource: "SET", want: map[string]string{"valkey.raw_command": "SET key ?"}},
		"memcached/default":     {typ: "memcached", resource: "set", meta: map[string]any{"memcached.command": "set key 0 0 0\r\nvalue"}, wantResource: "set", want: map[string]string{"memcached.command": ""}},
		"memcached/keep":        {typ: "memcached", resource: "set", meta: map[string]any{"memcached.command": "set key 0 0 0\r\nvalue"}, cfg: func(c *obfuscation.Config) { c.Memcached.KeepCommand = true }, wantResource: "set", want: map[string]string{"memcached.command": "set key 0 0 0"}},
		"memcached/disabled":    {typ: "memcached", resource: "set", meta: map[string]any{"memcached.command": "set key 0 0 0 noreply\r\nvalue"}, cfg: func(c *obfuscation.Config) { c.Memcached.Enabled = false }, wantResource: "set", want: map[string]string{"memcached.command": "set key 0 0 0 noreply\r\nvalue"}},

		// JSON bodies: datadog-agent pkg/trace/agent/obfuscate_test.go, TestObfuscateConfig
		// (elasticsearch and opensearch), and pkg/obfuscate/testdata/json_tests.xml
		// (elasticsearch.body.1, obfuscate.mongo.json.keep_values).
		"elasticsearch/role":               {typ: "elasticsearch", resource: "GET /users/_search", meta: map[string]any{"elasticsearch.body": `{"role": "database"}`}, wantResource: "GET /users/_search", want: map[string]string{"db.query.text": `{"role":"?"}`}},
		"elasticsearch/nested":             {typ: "elasticsearch", resource: "GET /_search", meta: map[string]any{"elasticsearch.body": `{ "query": { "multi_match" : { "query" : "guide", "fields" : ["_all", { "key": "value", "other": ["1", "2", {"k": "v"}] }, "2"] } } }`}, wantResource: "GET /_search", want: map[string]string{"db.query.text": `{"query":{"multi_match":{"query":"?","fields":["?",{"key":"?","other":["?","?",{"k":"?"}]},"?"]}}}`}},
		"opensearch/role":                  {typ: "opensearch", resource: "GET /users/_search", meta: map[string]any{"opensearch.body": `{"role": "database"}`}, wantResource: "GET /users/_search", want: map[string]string{"opensearch.body": `{"role":"?"}`}},
		"opensearch/on elasticsearch type": {typ: "elasticsearch", resource: "GET /users/_search", meta: map[string]any{"opensearch.body": `{"role": "database"}`}, wantResource: "GET /users/_search", want: map[string]string{"opensearch.body": `{"role":"?"}`}},
		"elasticsearch/disabled":           {typ: "elasticsearch", resource: "GET /users/_search", meta: map[string]any{"elasticsearch.body": `{"role": "database"}`}, cfg: func(c *obfuscation.Config) { c.Elasticsearch.Enabled = false }, wantResource: "GET /users/_search", want: map[string]string{"db.query.text": `{"role": "database"}`}},
		"mongodb/email":                    {typ: "mongodb", resource: "find users", meta: map[string]any{"mongodb.query": `{"email":"dev@datadoghq.com","company_wallet_configuration_id":1}`}, wantResource: "find users", want: map[string]string{"db.query.text": `{"email":"?","company_wallet_configuration_id":"?"}`}},
		"mongodb/keep values":              {typ: "mongodb", resource: "find users", meta: map[string]any{"mongodb.query": `{"email":"dev@datadoghq.com","company_wallet_configuration_id":1}`}, cfg: func(c *obfuscation.Config) { c.MongoDB.KeepValues = []string{"company_wallet_configuration_id"} }, wantResource: "find users", want: map[string]string{"db.query.text": `{"email":"?","company_wallet_configuration_id":1}`}},

		// datadog-agent pkg/obfuscate/http_test.go, TestObfuscateHTTP: user information always goes;
		// the query string only with remove_query_string.
		"http/userinfo":     {typ: "http", resource: "GET", meta: map[string]any{"http.url": "http://user:password@foo.com/1/2/3?q=james"}, wantResource: "GET", want: map[string]string{"url.full": "http://foo.com/1/2/3?q=james"}},
		"http/plain kept":   {typ: "http", resource: "GET", meta: map[string]any{"http.url": "http://foo.com/1/2/3?q=james"}, wantResource: "GET", want: map[string]string{"url.full": "http://foo.com/1/2/3?q=james"}},
		"http/remove query": {typ: "http", resource: "GET", meta: map[string]any{"http.url": "http://foo.com/id/123/page/1?search=bar&page=2"}, cfg: func(c *obfuscation.Config) { c.HTTP.RemoveQueryString = true }, wantResource: "GET", want: map[string]string{"url.full": "http://foo.com/id/123/page/1?"}},
		// datadog-agent pkg/trace/agent/obfuscate_test.go, TestObfuscateConfig http/enabled.
		"http/path digits": {typ: "http", resource: "GET", meta: map[string]any{"http.url": "http://mysite.mydomain/1/2?q=asd"}, cfg: func(c *obfuscation.Config) { c.HTTP.RemoveQueryString, c.HTTP.RemovePathsWithDigits = true, true }, wantResource: "GET", want: map[string]string{"url.full": "http://mysite.mydomain/?/??"}},

		// Card numbers: datadog-agent pkg/trace/agent/obfuscate_test.go, TestObfuscateConfig
		// creditcard; pkg/obfuscate/credit_cards_test.go, TestCCKeepValues and the valid (Luhn)
		// and invalid lists of TestCreditCard.
		"cards/mastercard":  {typ: "custom", resource: "checkout", meta: map[string]any{"card.number": "5105-1051-0510-5100"}, wantResource: "checkout", want: map[string]string{"card.number": "?"}},
		"cards/too short":   {typ: "custom", resource: "checkout", meta: map[string]any{"card.number": "5105"}, wantResource: "checkout", want: map[string]string{"card.number": "5105"}},
		"cards/luhn valid":  {typ: "custom", resource: "checkout", meta: map[string]any{"payment": "4111 1111 1111 1111"}, cfg: func(c *obfuscation.Config) { c.CreditCards.Luhn = true }, wantResource: "checkout", want: map[string]string{"payment": "?"}},
		"cards/not a card":  {typ: "custom", resource: "checkout", meta: map[string]any{"payment": "x371413321323331"}, wantResource: "checkout", want: map[string]string{"payment": "x371413321323331"}},
		"cards/keep values": {typ: "custom", resource: "checkout", meta: map[string]any{"skip_me": "378282246310005", "obfuscate_me": "378282246310005"}, cfg: func(c *obfuscation.Config) { c.CreditCards.KeepValues = []string{"skip_me"} }, wantResource: "checkout", want: map[string]string{"skip_me": "378282246310005", "obfuscate_me": "?"}},
		// Ours: with luhn, a number of a card's shape whose checksum fails is not a card.
		"cards/luhn invalid": {typ: "custom", resource: "checkout", meta: map[string]any{"payment": "4111 1111 1111 1112"}, cfg: func(c *obfuscation.Config) { c.CreditCards.Luhn = true }, wantResource: "checkout", want: map[string]string{"payment": "4111 1111 1111 1112"}},
		"cards/disabled":     {typ: "custom", resource: "checkout", meta: map[string]any{"card.number": "5105-1051-0510-5100"}, cfg: func(c *obfuscation.Config) { c.CreditCards.Enabled = false }, wantResource: "checkout", want: map[string]string{"card.number": "5105-1051-0510-5100"}},
		"all off":            {typ: "sql", resource: "SELECT * FROM users WHERE id = 42", meta: map[string]any{"card.number": "5105-1051-0510-5100"}, cfg: func(c *obfuscation.Config) { c.Enabled = false }, wantResource: "SELECT * FROM users WHERE id = 42", want: map[string]string{"card.number": "5105-1051-0510-5100", "db.query.text": "SELECT * FROM users WHERE id = 42"}},
	}
}

// TestObfuscationVectors sends each vector's span through the handler and checks what the
// receiver stores.
func TestObfuscationVectors(t *testing.T) {
	vectors := obfuscationVectors()
	require.GreaterOrEqual(t, len(vectors), 30)
	for name, v := range vectors {
		t.Run(name, func(t *testing.T) {
			cfg := createDefaultConfig().(*Config)
			if v.cfg != nil {
				v.cfg(&cfg.Obfuscation)
			}
			span := onlySpan(t, sendSpans(t, cfg, ddSpan(1, v.typ, v.resource, v.meta)))
			attrs := span.Attributes()
			got, _ := attrs.Get("resource.name")
			assert.Equal(t, v.wantResource, got.Str(), "resource.name")
			if v.wantName != "" {
				assert.Equal(t, v.wantName, span.Name(), "span name")
			}
			for k, want := range v.want {
				got, ok := attrs.Get(k)
				if want == "" {
					assert.False(t, ok, "%s is there, want none: %v", k, attrs.AsRaw())
					continue
				}
				if assert.True(t, ok, "no attribute %s in %v", k, attrs.AsRaw()) {
					assert.Equal(t, want, got.AsString(), k)
				}
			}
		})
	}
}

// literalPlaces walks everything a translated trace carries (resource and scope attributes,
// names, span attributes, events, links, status, trace state) and returns where text occurs.
func literalPlaces(td ptrace.Traces, text string) []string {
	var places []string
	check := func(where, v string) {
		if strings.Contains(v, text) {
			places = append(places, where+": "+v)
		}
	}
	var walk func(where string, v pcommon.Value)
	walk = func(where string, v pcommon.Value) {
		switch v.Type() {
		case pcommon.ValueTypeMap:
			for k, e := range v.Map().All() {
				check(where+" key", k)
				walk(where+"."+k, e)
			}
		case pcommon.ValueTypeSlice:
			for i, e := range v.Slice().All() {
				walk(where+"["+strconv.Itoa(i)+"]", e)
			}
		default:
			check(where, v.AsString())
		}
	}
	attrs := func(where string, m pcommon.Map) {
		for k, v := range m.All() {
			check(where+" key", k)
			walk(where+"."+k, v)
		}
	}
	for _, rs := range td.ResourceSpans().All() {
		attrs("resource", rs.Resource().Attributes())
		check("resource schema", rs.SchemaUrl())
		for _, ss := range rs.ScopeSpans().All() {
			check("scope", ss.Scope().Name()+" "+ss.Scope().Version())
			attrs("scope", ss.Scope().Attributes())
			for _, s := range ss.Spans().All() {
				check("name", s.Name())
				check("trace state", s.TraceState().AsRaw())
				check("status", s.Status().Message())
				attrs("span", s.Attributes())
				for _, e := range s.Events().All() {
					check("event", e.Name())
					attrs("event", e.Attributes())
				}
				for _, l := range s.Links().All() {
					check("link trace state", l.TraceState().AsRaw())
					attrs("link", l.Attributes())
				}
			}
		}
	}
	return places
}

// TestObfuscationLeavesNoLiteral sends a v0.4 payload whose database span carries a statement
// with an e-mail address (in the resource, sql.query and db.statement), with each mapping: with
// the default configuration the address is nowhere in what reaches the pipeline, and with
// obfuscation off it is, so the walk does find it where it is.
func TestObfuscationLeavesNoLiteral(t *testing.T) {
	const statement = "SELECT * FROM users WHERE email = 'alice@example.com'"
	spans := func() []map[string]any {
		root := ddSpan(1, "web", "GET /users", map[string]any{"http.method": "GET", "http.route": "/users", "span.kind": "server"})
		db := ddSpan(2, "sql", statement, map[string]any{
			"sql.query": statement, "db.statement": statement, "db.type": "postgresql", "db.instance": "shop", "span.kind": "client",
		})
		db["parent_id"] = json.Number("1")
		return []map[string]any{root, db}
	}
	for _, mapping := range []translator.Mapping{translator.MappingSemconv, translator.MappingDatadogReceiver} {
		t.Run(string(mapping), func(t *testing.T) {
			cfg := createDefaultConfig().(*Config)
			cfg.Mapping = mapping
			td := sendSpans(t, cfg, spans()...)
			assert.Empty(t, literalPlaces(td, "alice"))
			assert.NotEmpty(t, literalPlaces(td, "SELECT * FROM users WHERE email = ?"), "the obfuscated statement is stored")

			cfg.Obfuscation.Enabled = false
			assert.NotEmpty(t, literalPlaces(sendSpans(t, cfg, spans()...), "alice"), "obfuscation off keeps the statement as sent")
		})
	}
}

// TestObfuscationTelemetry: spans a rule changed are counted by rule, once each, and statements
// that cannot be parsed apart; spans with nothing to hide count nowhere.
func TestObfuscationTelemetry(t *testing.T) {
	tel := componenttest.NewTelemetry()
	t.Cleanup(func() { require.NoError(t, tel.Shutdown(context.Background())) })
	set := receivertest.NewNopSettings(metadata.Type)
	set.TelemetrySettings = tel.NewTelemetrySettings()
	r, err := newReceiver(createDefaultConfig().(*Config), set, new(consumertest.TracesSink))
	require.NoError(t, err)
	trace := []any{
		ddSpan(1, "sql", "SELECT * FROM users WHERE id = 42", nil),
		ddSpan(2, "sql", "SELECT * FROM users WHERE id = ?", nil), // nothing to hide
		ddSpan(3, "sql", "SELECT age FROM profile WHERE name='John", nil),
		ddSpan(4, "redis", "SET k v", map[string]any{"redis.raw_command": "SET k v", "card": "4111 1111 1111 1111"}),
		ddSpan(5, "web", "GET /", map[string]any{"http.url": "http://foo.com/"}), // nothing to hide
	}
	body, err := appendMsgpack(nil, []any{trace}, false)
	require.NoError(t, err)
	require.Equal(t, 200, serve(t, r, "PUT", "/v0.4/traces", body, nil).Code)

	metadatatest.AssertEqualReceiverDdtraceSpansObfuscated(t, tel, []metricdata.DataPoint[int64]{
		{Value: 2, Attributes: attribute.NewSet(attribute.String("rule", "sql"))},
		{Value: 1, Attributes: attribute.NewSet(attribute.String("rule", "redis"))},
		{Value: 1, Attributes: attribute.NewSet(attribute.String("rule", "credit_cards"))},
	}, metricdatatest.IgnoreTimestamp())
	metadatatest.AssertEqualReceiverDdtraceSpansUnparsableSQL(t, tel, []metricdata.DataPoint[int64]{{Value: 1}}, metricdatatest.IgnoreTimestamp())
}

// TestObfuscationConfig loads the obfuscation section and checks Validate's errors as the
// collector reports them (the section's key first).
func TestObfuscationConfig(t *testing.T) {
	cm, err := confmaptest.LoadConf(filepath.Join("testdata", "obfuscation.yaml"))
	require.NoError(t, err)
	load := func(name string) *Config {
		cfg := createDefaultConfig().(*Config)
		sub, err := cm.Sub(component.NewIDWithName(metadata.Type, name).String())
		require.NoError(t, err)
		require.NoError(t, sub.Unmarshal(cfg))
		return cfg
	}

	off := load("off")
	require.NoError(t, xconfmap.Validate(off))
	want := obfuscation.DefaultConfig()
	want.Enabled = false
	assert.Equal(t, want, off.Obfuscation, "the rules keep their defaults; enabled: false turns them off together")

	custom := load("custom")
	require.NoError(t, xconfmap.Validate(custom))
	want = obfuscation.DefaultConfig()
	want.Redis = obfuscation.RedisConfig{Enabled: true, RemoveAllArgs: true}
	want.Memcached.Enabled = false
	want.CreditCards = obfuscation.CreditCardsConfig{Enabled: true, Luhn: true, KeepValues: []string{"order.id"}}
	want.HTTP = obfuscation.HTTPConfig{RemoveQueryString: true, RemovePathsWithDigits: true}
	want.Cache.MaxSize = 1 << 20
	assert.Equal(t, want, custom.Obfuscation)

	for _, tt := range []struct {
		name   string
		modify func(*obfuscation.Config)
		want   string
	}{
		{"cache too small", func(c *obfuscation.Config) { c.Cache.MaxSize = 100 }, "obfuscation: cache.max_size must be between 1024 and 1073741824 bytes, got 100"},
		{"empty keep key", func(c *obfuscation.Config) { c.MongoDB.KeepValues = []string{"a", ""} }, `obfuscation: mongodb.keep_values must not hold an empty key, got ["a" ""]`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cfg := createDefaultConfig().(*Config)
			tt.modify(&cfg.Obfuscation)
			assert.EqualError(t, xconfmap.Validate(cfg), tt.want)
		})
	}
	cfg := createDefaultConfig().(*Config)
	cfg.Obfuscation.Cache = obfuscation.CacheConfig{Enabled: false, MaxSize: 0}
	assert.NoError(t, xconfmap.Validate(cfg), "a disabled cache needs no size")
}
