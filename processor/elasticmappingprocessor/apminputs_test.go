package elasticmappingprocessor

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// TestFillAPMInputs: one vector per input the APM enrichment needs under another name, with the
// receivers' own attribute names (Jaeger's OpenTracing tags, Zipkin's remote endpoint, ddtrace's
// fully qualified rpc.method); what the span already has wins.
func TestFillAPMInputs(t *testing.T) {
	for _, tt := range []struct {
		name  string
		kind  ptrace.SpanKind
		attrs map[string]any
		want  map[string]any // added attributes
	}{
		{"jaeger sql", ptrace.SpanKindClient, map[string]any{"db.type": "sql", "db.instance": "shop"}, map[string]any{"db.system.name": "other_sql", "db.namespace": "shop"}},
		{"jaeger redis", ptrace.SpanKindClient, map[string]any{"db.type": "redis"}, map[string]any{"db.system.name": "redis"}},
		{"db.system wins", ptrace.SpanKindClient, map[string]any{"db.type": "sql", "db.system": "mysql", "db.name": "a", "db.instance": "b"}, map[string]any{}},
		{"jaeger peer", ptrace.SpanKindClient, map[string]any{"peer.hostname": "db1", "peer.port": "5432"}, map[string]any{"server.address": "db1", "server.port": int64(5432)}},
		{"zipkin ip only", ptrace.SpanKindClient, map[string]any{"net.peer.ip": "10.0.0.7", "net.peer.port": int64(6379)}, map[string]any{"server.address": "10.0.0.7", "server.port": int64(6379)}},
		{"zipkin ip, newer name", ptrace.SpanKindProducer, map[string]any{"network.peer.address": "10.0.0.8"}, map[string]any{"server.address": "10.0.0.8"}},
		{"server.address wins", ptrace.SpanKindClient, map[string]any{"server.address": "a", "net.peer.ip": "10.0.0.7"}, map[string]any{}},
		{"an url is the target", ptrace.SpanKindClient, map[string]any{"url.full": "http://a/", "net.peer.ip": "10.0.0.7"}, map[string]any{}},
		{"not an exit span", ptrace.SpanKindServer, map[string]any{"net.peer.ip": "10.0.0.7"}, map[string]any{}},
		{"bad port", ptrace.SpanKindClient, map[string]any{"peer.hostname": "db1", "peer.port": "x"}, map[string]any{"server.address": "db1"}},
		{"messaging", ptrace.SpanKindProducer, map[string]any{"message_bus.destination": "orders"}, map[string]any{"messaging.destination.name": "orders"}},
		{"rpc service from the method", ptrace.SpanKindClient, map[string]any{"rpc.method": "shop.Cart/Get"}, map[string]any{"rpc.service": "shop.Cart"}},
		{"rpc short method", ptrace.SpanKindClient, map[string]any{"rpc.method": "Get"}, map[string]any{}},
		{"rpc service wins", ptrace.SpanKindClient, map[string]any{"rpc.method": "shop.Cart/Get", "rpc.service": "Cart"}, map[string]any{}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			span := ptrace.NewSpan()
			span.SetKind(tt.kind)
			require.NoError(t, span.Attributes().FromRaw(tt.attrs))
			added := fillAPMInputs(span)
			got := span.Attributes().AsRaw()
			for k, v := range tt.attrs {
				assert.Equal(t, v, got[k], "the span's own %s is kept", k)
				delete(got, k)
			}
			assert.Equal(t, tt.want, got)
			assert.Equal(t, len(tt.want) > 0, added)
		})
	}
}
