package translator

import (
	"strconv"
	"testing"

	"github.com/tracegate/tracegate/receiver/ddtracereceiver/internal/payload"
)

// benchIntegrations are the tags of the spans of common integrations, as dd-trace libraries send
// them: the keys the mapping tables are looked up with.
var benchIntegrations = []struct {
	name, resource, typ string
	meta                [][2]string
	metrics             []string
}{
	{"http.request", "GET /api/cart/:id", "web", [][2]string{
		{"span.kind", "server"},
		{"component", "net/http"},
		{"http.method", "GET"},
		{"http.route", "/api/cart/:id"},
		{"http.url", "https://shop.example/api/cart/7?x=1"},
		{"http.status_code", "200"},
		{"http.useragent", "curl/8"},
		{"http.client_ip", "10.0.0.1"},
		{"http.request.headers.x-request-id", "abc"},
		{"env", "prod"},
		{"version", "1.2"},
		{"language", "go"},
		{"runtime-id", "r"},
		{"_dd.p.tid", "640cfd8d00000000"},
		{"_dd.p.dm", "-0"},
	}, []string{"_sampling_priority_v1", "_dd.top_level", "_dd.measured", "process_id", "_dd.agent_psr"}},
	{"postgres.query", "SELECT * FROM carts WHERE id = ?", "sql", [][2]string{
		{"span.kind", "client"},
		{"component", "database/sql"},
		{"db.system", "postgresql"},
		{"db.name", "shop"},
		{"db.statement", "SELECT * FROM carts WHERE id = ?"},
		{"out.host", "pg"},
		{"network.destination.port", "5432"},
		{"db.user", "app"},
		{"peer.service", "pg"},
		{"_dd.base_service", "checkout"},
	}, []string{"_dd.measured", "db.row_count", "_dd.top_level"}},
	{"redis.command", "GET", "redis", [][2]string{
		{"span.kind", "client"},
		{"component", "go-redis"},
		{"db.system", "redis"},
		{"redis.raw_command", "GET k"},
		{"out.host", "redis"},
		{"out.port", "6379"},
		{"db.redis.database_index", "0"},
		{"redis.args_length", "2"},
	}, []string{"_dd.measured", "redis.pipeline_length"}},
	{"kafka.produce", "Produce Topic orders", "queue", [][2]string{
		{"span.kind", "producer"},
		{"component", "confluent-kafka-go"},
		{"messaging.system", "kafka"},
		{"kafka.topic", "orders"},
		{"kafka.partition", "3"},
		{"messaging.kafka.key", "k"},
		{"kafka.tombstone", "false"},
		{"messaging.destination.name", "orders"},
		{"pathway.hash", "123"},
	}, []string{"kafka.message_offset", "partition", "_dd.measured"}},
	{"grpc.client", "/shop.Cart/Get", "grpc", [][2]string{
		{"span.kind", "client"},
		{"component", "google.golang.org/grpc"},
		{"rpc.system", "grpc"},
		{"rpc.grpc.full_method", "/shop.Cart/Get"},
		{"grpc.method.service", "shop.Cart"},
		{"grpc.method.name", "Get"},
		{"grpc.code", "OK"},
		{"network.destination.name", "cart"},
		{"grpc.method.kind", "unary"},
	}, []string{"grpc.status.code", "_dd.measured"}},
	{"aws.request", "S3.PutObject", "http", [][2]string{
		{"span.kind", "client"},
		{"component", "aws/aws-sdk-go-v2/aws"},
		{"aws.service", "S3"},
		{"aws.operation", "PutObject"},
		{"aws.region", "eu-west-1"},
		{"aws.s3.bucket_name", "b"},
		{"http.method", "PUT"},
		{"http.url", "https://b.s3.example/k"},
		{"http.status_code", "200"},
		{"aws.response.request_id", "rid"},
		{"Region", "eu-west-1"},
	}, []string{"_dd.measured", "http.response.content_length"}},
	{"custom.work", "work", "", [][2]string{
		{"customer.tier", "gold"},
		{"Cart.Items", "3"},
		{"feature.flag", "on"},
		{"error.message", "boom"},
		{"error.type", "E"},
		{"error.stack", "s"},
		{"tracestate", "dd=s:1"},
	}, []string{"items", "thread.id"}},
}

// benchPayload is a chunk of spans of every benchmark integration in turn: a span's keys differ
// from the one before it, so the translation looks every key up.
func benchPayload(spans int) []payload.Payload {
	out := make([]payload.Span, 0, spans)
	for i := range spans {
		in := benchIntegrations[i%len(benchIntegrations)]
		s := payload.Span{
			Service: "checkout", Name: in.name, Resource: in.resource, Type: in.typ, TraceID: 7, SpanID: uint64(i + 1),
			ParentID: uint64(i), Start: 1_700_000_000_000_000_000, Duration: 1000,
		}
		for _, kv := range in.meta {
			s.Meta = append(s.Meta, payload.KV{Key: kv[0], Value: kv[1]})
		}
		for j, k := range in.metrics {
			s.Metrics = append(s.Metrics, payload.KF{Key: k, Value: float64(j + 1)})
		}
		out = append(out, s)
	}
	return one(out...)
}

// benchKeys are the keys of every benchmark integration, and unknown ones with upper case.
func benchKeys() []string {
	var keys []string
	for _, in := range benchIntegrations {
		for _, kv := range in.meta {
			keys = append(keys, kv[0])
		}
		keys = append(keys, in.metrics...)
	}
	return append(keys, "Http.Method", "KAFKA.TOPIC", "User.Id")
}

// BenchmarkKeyLookup measures looking the keys of real spans up in the mapping tables: the
// semconv mapping's rules and the datadogreceiver mapping's renames.
func BenchmarkKeyLookup(b *testing.B) {
	keys := benchKeys()
	perKey := func(b *testing.B) {
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(keys)), "ns/key")
	}
	b.Run("semconv", func(b *testing.B) {
		var n int
		for b.Loop() {
			for _, k := range keys {
				n += int(semconvRuleOf(k).action)
			}
		}
		perKey(b)
		_ = n
	})
	b.Run("datadogreceiver", func(b *testing.B) {
		var n int
		for b.Loop() {
			for _, k := range keys {
				n += len(otelKey(k))
			}
		}
		perKey(b)
		_ = n
	})
}

// BenchmarkTranslate measures the translation of a payload of spans of mixed integrations, with
// each mapping.
func BenchmarkTranslate(b *testing.B) {
	const spans = 70
	p := benchPayload(spans)
	for _, m := range []Mapping{MappingSemconv, MappingDatadogReceiver} {
		b.Run(string(m)+"/"+strconv.Itoa(spans), func(b *testing.B) {
			tr := New(Options{Mapping: m, TraceIDCacheSize: 1000})
			b.ReportAllocs()
			for b.Loop() {
				if res := tr.ToTraces(p, Headers{Lang: "go"}); res.Spans != spans {
					b.Fatalf("%d spans", res.Spans)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*spans), "ns/span")
		})
	}
}
