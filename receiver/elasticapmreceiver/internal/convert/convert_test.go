package convert

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/elastic/apm-data/input/elasticapm"
	"github.com/elastic/apm-data/model/modelpb"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.uber.org/zap"
	"golang.org/x/sync/semaphore"
)

// decodeFile converts testdata/edot/<name>.ndjson in batches of batchSize, returning one Output
// per batch.
func decodeFile(t *testing.T, name string, batchSize int) []*Output {
	t.Helper()
	body, err := os.ReadFile(filepath.Join("testdata", "edot", name+".ndjson"))
	require.NoError(t, err)
	return decodeBody(t, body, batchSize)
}

func decodeBody(t *testing.T, body []byte, batchSize int) []*Output {
	t.Helper()
	conv := NewConverter(zap.NewNop())
	var outs []*Output
	proc := elasticapm.NewProcessor(elasticapm.Config{MaxEventSize: 1 << 20, Semaphore: semaphore.NewWeighted(1)})
	var result elasticapm.Result
	err := proc.HandleStream(context.Background(), &modelpb.APMEvent{Event: &modelpb.Event{}}, bytes.NewReader(body), batchSize,
		modelpb.ProcessBatchFunc(func(ctx context.Context, b *modelpb.Batch) error {
			out := NewOutput()
			outs = append(outs, out)
			return conv.Append(ctx, b, out)
		}), &result)
	require.NoError(t, err)
	require.Empty(t, result.Errors)
	return outs
}

// TestCounts checks that every event is converted once and counted under its type, whatever the
// batch size.
func TestCounts(t *testing.T) {
	for _, tc := range []struct {
		file string
		want Counts
	}{
		{"transactions_spans", Counts{Transaction: 4, Span: 5}},
		{"errors", Counts{Error: 5}},
	} {
		for _, batchSize := range []int{1, 3, 1000} {
			var sum Counts
			spans, logs := 0, 0
			for _, out := range decodeFile(t, tc.file, batchSize) {
				for i, n := range out.Events {
					sum[i] += n
				}
				spans += out.Traces.SpanCount()
				logs += out.Logs.LogRecordCount()
			}
			assert.Equal(t, tc.want, sum, "%s, batches of %d", tc.file, batchSize)
			assert.Equal(t, sum[Transaction]+sum[Span], spans)
			assert.Equal(t, sum[Error]+sum[Log], logs)
		}
	}
}

// A request as an agent sends it: the metadata's global label, a transaction with a user and
// its own labels, and a database span and an HTTP exit span with labels of their own.
const request = `{"metadata":{"service":{"name":"shop","environment":"prod","agent":{"name":"nodejs","version":"4.18.0"},"language":{"name":"javascript"}},"labels":{"team":"core"}}}
{"transaction":{"id":"aaaaaaaaaaaaaaa1","trace_id":"0123456789abcdef0123456789abcdef","name":"GET /cart","type":"request","result":"HTTP 2xx","outcome":"success","sampled":true,"timestamp":1700000000000000,"duration":12.5,"span_count":{"started":2},"context":{"user":{"id":"u1"},"tags":{"route":"/cart"},"request":{"method":"GET","url":{"pathname":"/cart"},"headers":{"user-agent":"curl/8"}},"response":{"status_code":200}}}}
{"span":{"id":"bbbbbbbbbbbbbbb1","trace_id":"0123456789abcdef0123456789abcdef","parent_id":"aaaaaaaaaaaaaaa1","transaction_id":"aaaaaaaaaaaaaaa1","name":"SELECT carts","type":"db","subtype":"postgresql","action":"query","outcome":"success","timestamp":1700000000001000,"duration":3.2,"context":{"db":{"type":"sql","instance":"shop","statement":"SELECT * FROM carts WHERE id = $1"},"tags":{"rows":3}}}}
{"span":{"id":"bbbbbbbbbbbbbbb2","trace_id":"0123456789abcdef0123456789abcdef","parent_id":"aaaaaaaaaaaaaaa1","transaction_id":"aaaaaaaaaaaaaaa1","name":"GET prices","type":"external","subtype":"http","outcome":"failure","timestamp":1700000000005000,"duration":4,"context":{"http":{"method":"GET","status_code":503,"url":"http://prices:8080/p"},"destination":{"address":"prices","port":8080},"tags":{"retry":true}}}}
`

// TestRequestAttributes pins what each span of a request carries: one resource for the request
// (the global label on it), the conventions' attributes and Elastic's facts on the spans, and
// nothing the enrichment derives from the span itself.
func TestRequestAttributes(t *testing.T) {
	outs := decodeBody(t, []byte(request), 10)
	require.Len(t, outs, 1)
	rss := outs[0].Traces.ResourceSpans()
	require.Equal(t, 1, rss.Len(), "one resource for the request")
	assert.Equal(t, map[string]any{
		"service.name": "shop", "deployment.environment.name": "prod", "agent.name": "nodejs",
		"agent.version": "4.18.0", "service.language.name": "javascript", "telemetry.sdk.name": "ElasticAPM",
		"telemetry.sdk.language": "javascript", "labels.team": "core",
	}, rss.At(0).Resource().Attributes().AsRaw())
	spans := rss.At(0).ScopeSpans().At(0).Spans()
	require.Equal(t, 3, spans.Len())
	for _, tc := range []struct {
		kind  ptrace.SpanKind
		flags uint32
		attrs map[string]any
	}{
		{ptrace.SpanKindServer, flagHasIsRemote, map[string]any{
			"transaction.type": "request", "transaction.result": "HTTP 2xx", "transaction.span_count.started": int64(2),
			"user.id": "u1", "labels.route": "/cart", "http.request.method": "GET", "url.path": "/cart",
			"http.response.status_code": int64(200), "http.request.headers": map[string]any{"User-Agent": []any{"curl/8"}},
			"user_agent.original": "curl/8",
		}},
		{ptrace.SpanKindClient, flagHasIsRemote, map[string]any{
			"transaction.id": "aaaaaaaaaaaaaaa1", "span.type": "db", "span.subtype": "postgresql", "span.action": "query",
			"db.system.name": "postgresql", "db.namespace": "shop", "db.query.text": "SELECT * FROM carts WHERE id = $1",
			"numeric_labels.rows": float64(3),
		}},
		{ptrace.SpanKindClient, flagHasIsRemote, map[string]any{
			"transaction.id": "aaaaaaaaaaaaaaa1", "span.type": "external", "span.subtype": "http",
			"http.request.method": "GET", "http.response.status_code": int64(503), "url.original": "http://prices:8080/p",
			"server.address": "prices", "server.port": int64(8080), "labels.retry": "true",
		}},
	} {
		i := slices.IndexFunc(spanList(spans), func(s ptrace.Span) bool { return s.Kind() == tc.kind && attrsHave(s, tc.attrs) })
		if !assert.GreaterOrEqual(t, i, 0, "no span of kind %v with exactly %v", tc.kind, tc.attrs) {
			for _, s := range spans.All() {
				t.Logf("%v %v", s.Kind(), s.Attributes().AsRaw())
			}
			continue
		}
		assert.Equal(t, tc.flags, spans.At(i).Flags())
	}
}

func spanList(spans ptrace.SpanSlice) []ptrace.Span {
	var out []ptrace.Span
	for _, s := range spans.All() {
		out = append(out, s)
	}
	return out
}

func attrsHave(s ptrace.Span, want map[string]any) bool {
	return assert.ObjectsAreEqual(want, s.Attributes().AsRaw())
}

// TestIDs: a transaction's span id is its transaction id, a span's parent its parent; ids that
// are not readable are kept, as the agent sent them, where Kibana shows them.
func TestIDs(t *testing.T) {
	outs := decodeFile(t, "invalid_ids", 10)
	spans := outs[0].Traces.ResourceSpans().At(0).ScopeSpans().At(0).Spans()
	var raw []string
	for _, s := range spans.All() {
		for _, k := range []string{"transaction.id", "span.id"} {
			if v, ok := s.Attributes().Get(k); ok {
				raw = append(raw, k+"="+v.Str())
			}
		}
	}
	assert.Contains(t, raw, "transaction.id=foobarInvalid")
	assert.Contains(t, raw, "span.id=invalid")

	outs = decodeBody(t, []byte(request), 10)
	for _, s := range outs[0].Traces.ResourceSpans().At(0).ScopeSpans().At(0).Spans().All() {
		if s.Kind() == ptrace.SpanKindServer {
			assert.Equal(t, "aaaaaaaaaaaaaaa1", s.SpanID().String())
			assert.True(t, s.ParentSpanID().IsEmpty())
		} else {
			assert.Equal(t, "aaaaaaaaaaaaaaa1", s.ParentSpanID().String())
			assert.Equal(t, "0123456789abcdef0123456789abcdef", s.TraceID().String())
		}
	}
}
