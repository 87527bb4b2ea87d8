package spanjson

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/elastic/apm-data/input"
	"github.com/elastic/apm-data/input/elasticapm"
	"github.com/elastic/apm-data/model/modelpb"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sync/semaphore"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/testing/protocmp"

	"github.com/google/go-cmp/cmp"
)

// metadataLines are the requests' metadata the tests decode spans under: the smallest an agent
// sends, and one with global labels that a span's own labels override or join.
var metadataLines = []string{
	`{"metadata":{"service":{"name":"svc","agent":{"name":"go","version":"2.6.2"}}}}`,
	`{"metadata":{"service":{"name":"checkout","version":"1.4.2","environment":"production","agent":{"name":"nodejs","version":"4.18.0"},"language":{"name":"javascript"},"node":{"configured_name":"n1"}},"system":{"detected_hostname":"h1","container":{"id":"c1"}},"process":{"pid":7,"argv":["node","app.js"]},"labels":{"team":"shop","tier":2,"region":"eu"}}}`,
}

// apmData decodes the events of stream as the receiver's apm-data decoder does, and says
// whether every line was valid.
func apmData(tb testing.TB, stream string) ([]*modelpb.APMEvent, bool) {
	tb.Helper()
	p := elasticapm.NewProcessor(elasticapm.Config{
		Semaphore: input.Semaphore(semaphore.NewWeighted(1)), MaxEventSize: 300 * 1024,
	})
	var events []*modelpb.APMEvent
	var res elasticapm.Result
	err := p.HandleStream(context.Background(), &modelpb.APMEvent{Event: &modelpb.Event{}}, bytes.NewReader([]byte(stream)), 10,
		modelpb.ProcessBatchFunc(func(_ context.Context, b *modelpb.Batch) error {
			events = append(events, *b...)
			return nil
		}), &res)
	return events, err == nil && len(res.Errors) == 0
}

// baseOf is the metadata event, as the receiver obtains it.
func baseOf(tb testing.TB, meta string) *modelpb.APMEvent {
	tb.Helper()
	events, ok := apmData(tb, meta+"\n"+string(MetadataCarrier))
	require.True(tb, ok)
	require.Len(tb, events, 1)
	return events[0]
}

// requireSameAsAPMData checks that line, which Decode took, is what apm-data makes of it.
func requireSameAsAPMData(tb testing.TB, meta string, line []byte, decoded Event) {
	tb.Helper()
	want, ok := apmData(tb, meta+"\n"+string(line)+"\n")
	require.Truef(tb, ok, "apm-data refuses a line Decode took: %s", line)
	require.Len(tb, want, 1)
	base := baseOf(tb, meta)
	Attach(decoded, base)
	got := decoded.Labeled(base)
	sortHeaders(want[0])
	sortHeaders(got)
	if !proto.Equal(want[0], got) {
		tb.Fatalf("line %s\n(-apm-data +spanjson):\n%s", line, cmp.Diff(want[0], got, protocmp.Transform()))
	}
}

// sortHeaders puts an event's headers in name order: apm-data lists them in its map's order.
func sortHeaders(e *modelpb.APMEvent) {
	byName := func(a, b *modelpb.HTTPHeader) int { return strings.Compare(a.Key, b.Key) }
	if req := e.GetHttp().GetRequest(); req != nil {
		slices.SortFunc(req.Headers, byName)
	}
	if resp := e.GetHttp().GetResponse(); resp != nil {
		slices.SortFunc(resp.Headers, byName)
	}
}

func TestDecodeTakesWhatAPMDataReadsTheSame(t *testing.T) {
	lines := []string{
		// tracegen's spans (make bench-intake)
		`{"span":{"id":"af0901a1947094b0","trace_id":"84f5a58656eef5109dcec3ad077dec6c","parent_id":"8a8c6d7f8d485abc","transaction_id":"8a8c6d7f8d485abc","name":"SELECT payments","type":"db","subtype":"postgresql","action":"query","outcome":"success","timestamp":1796552927312731,"duration":32.044,"context":{"db":{"instance":"shop","statement":"SELECT id, status, total FROM payments WHERE id = $1","type":"sql"},"tags":{"db_cached":false,"db_rows":94,"sampling_priority":1,"thread_id":110,"tracegen_index":1}}}}`,
		`{"span":{"id":"bb17008f5fca28e7","trace_id":"84f5a58656eef5109dcec3ad077dec6c","parent_id":"8a8c6d7f8d485abc","transaction_id":"8a8c6d7f8d485abc","name":"GET /payments","type":"external","subtype":"http","outcome":"success","timestamp":1796552927311048,"duration":2.072,"context":{"http":{"method":"GET","response":{"status_code":200}},"destination":{"address":"payments.svc.cluster.local","port":8080},"tags":{"network_protocol_version":"1.1","sampling_priority":1,"thread_id":157,"tracegen_index":2}}}}`,
		// as elastic-apm-node 4.x sends an outgoing HTTP call
		`{"span":{"name":"GET localhost:3000","type":"external","subtype":"http","action":"GET","id":"9ab2a1c4d8e0f312","transaction_id":"ad4e2f1f3c2b1a09","parent_id":"ad4e2f1f3c2b1a09","trace_id":"0af7651916cd43dd8448eb211c80319c","timestamp":1733400000123456,"duration":4.217,"sync":false,"outcome":"success","sample_rate":1,"context":{"http":{"method":"GET","status_code":200,"url":"http://localhost:3000/hello"},"service":null,"destination":{"address":"localhost","port":3000,"service":{"resource":"localhost:3000","type":"","name":""}}}}}`,
		// as elastic-apm-node 4.18 sent its outgoing HTTP call here (test/ddclients/apmnode)
		`{"span":{"name":"GET 127.0.0.1:35065","type":"external","id":"078495606e34568c","transaction_id":"c9a01f8e01c8be8d","parent_id":"c9a01f8e01c8be8d","trace_id":"0cac0bf1d67c0d5a6c3cba03bdb1cc35","subtype":"http","action":"GET","timestamp":1796554849363704,"duration":20.636,"context":{"service":{"target":{"type":"http","name":"127.0.0.1:35065"}},"destination":{"address":"127.0.0.1","port":35065,"service":{"type":"","name":"","resource":"127.0.0.1:35065"}},"http":{"method":"GET","status_code":200,"url":"http://127.0.0.1:35065/backend?user=1"}},"sync":false,"outcome":"success","sample_rate":1}}`,
		`{"span":{"name":"compute","type":"app","id":"fefd33c663730c66","transaction_id":"c9a01f8e01c8be8d","parent_id":"c9a01f8e01c8be8d","trace_id":"0cac0bf1d67c0d5a6c3cba03bdb1cc35","subtype":"internal","action":null,"timestamp":1796554849385575,"duration":0.224,"sync":true,"outcome":"success","sample_rate":1}}`,
		// a target named without a type, with and without a destination resource
		`{"span":{"id":"01","trace_id":"02","parent_id":"03","name":"n","type":"db","timestamp":1,"duration":1,"context":{"service":{"target":{"name":"x"}},"destination":{"service":{"resource":"mysql/orders"}}}}}`,
		`{"span":{"id":"01","trace_id":"02","parent_id":"03","name":"n","type":"db","timestamp":1,"duration":1,"context":{"service":{"target":{"name":"x","type":null}}}}}`,
		// type split, sample rate 0, escapes, a null field, labels overriding global ones
		`{"span":{"id":"01","trace_id":"02","parent_id":"03","name":"q \"x\"\n","type":"db.mysql.query","timestamp":0,"duration":0,"sample_rate":0,"subtype":null,"context":{"tags":{"team":"core","tier":"gold","n":-1.5e3,"z":null},"db":{"rows_affected":3}}}}`,
		`{"span":{"id":"01","trace_id":"02","parent_id":"03","name":"n","type":"","timestamp":5,"duration":1.5,"sample_rate":0.25,"context":{"http":{"status_code":503,"url":"/x"},"destination":{"service":{"resource":"mysql/orders"}}}}}`,
		` {"span" : {"id":"a","trace_id":"b","parent_id":"c","name":"","type":"app","action":"","timestamp":1,"duration":1,"context":{"http":{"method":"POST"}}}} `,
		// tracegen's transaction
		`{"transaction":{"id":"8a8c6d7f8d485abc","trace_id":"84f5a58656eef5109dcec3ad077dec6c","name":"GET /api/checkout","type":"request","result":"HTTP 2xx","outcome":"success","timestamp":1796552927302625,"duration":51.000,"span_count":{"started":9,"dropped":0},"context":{"request":{"method":"GET","url":{"pathname":"/api/orders/132799"},"headers":{"User-Agent":"Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 Chrome/124.0"}},"response":{"status_code":200},"tags":{"http_route":"/api/checkout","sampling_priority":1,"thread_id":114,"tracegen_index":0}}}}`,
		// as elastic-apm-node 4.x sends an incoming HTTP request
		`{"transaction":{"name":"GET /hello","type":"request","result":"HTTP 2xx","id":"ad4e2f1f3c2b1a09","trace_id":"0af7651916cd43dd8448eb211c80319c","duration":5.021,"timestamp":1733400000120000,"outcome":"success","sampled":true,"sample_rate":1,"span_count":{"started":1},"context":{"user":{},"tags":{},"custom":{},"service":{},"cloud":{},"message":{},"request":{"http_version":"1.1","method":"GET","url":{"raw":"/hello?x=1","protocol":"http:","hostname":"localhost","port":"3000","pathname":"/hello","search":"?x=1","full":"http://localhost:3000/hello?x=1"},"headers":{"host":"localhost:3000","user-agent":"curl/8.5.0","accept":["*/*","text/html"]},"socket":{"remote_address":"127.0.0.1:51234"}},"response":{"status_code":200,"headers":{"x-powered-by":"Express","content-type":"text/plain; charset=utf-8","etag":"W/\"2-nOO9QiTIwXgNtWtBJezz8kv3SLc\""},"headers_sent":true,"finished":true}}}}`,
		// unsampled, a 5xx without outcome, a numeric port, an IPv6 socket, labels over global ones
		`{"transaction":{"id":"01","trace_id":"02","parent_id":"03","type":"","timestamp":9,"duration":0,"sampled":false,"sample_rate":0,"span_count":{"started":0,"dropped":2},"context":{"request":{"method":"POST","url":{"port":8080},"socket":{"remote_address":"[::1]:80"}},"response":{"status_code":503,"headers":{}},"tags":{"team":"core","tier":3}}}}`,
		`{"transaction":{"id":"01","trace_id":"02","type":"t","timestamp":9,"duration":1.25,"span_count":{"started":1},"dropped_spans_stats":[],"context":{"response":{"status_code":404,"transfer_size":1,"encoded_body_size":2,"decoded_body_size":3}}}}`,
	}
	for _, meta := range metadataLines {
		for _, line := range lines {
			got, ok := new(Decoder).Decode([]byte(line))
			require.Truef(t, ok, "Decode declined %s", line)
			requireSameAsAPMData(t, meta, []byte(line), got)
		}
	}
}

func TestDecodeDeclines(t *testing.T) {
	const head = `"id":"a","trace_id":"b","parent_id":"c","name":"n","type":"t","duration":1`
	for name, line := range map[string]string{
		"a transaction":              `{"transaction":{` + head + `,"timestamp":1}}`,
		"metadata":                   metadataLines[0],
		"no timestamp":               `{"span":{` + head + `}}`,
		"a start offset":             `{"span":{` + head + `,"start":3}}`,
		"a string timestamp":         `{"span":{` + head + `,"timestamp":"2024-01-01T00:00:00Z"}}`,
		"no duration":                `{"span":{"id":"a","trace_id":"b","parent_id":"c","name":"n","type":"t","timestamp":1}}`,
		"a negative duration":        `{"span":{` + head[:len(head)-1] + `-1,"timestamp":1}}`,
		"no parent":                  `{"span":{"id":"a","trace_id":"b","name":"n","type":"t","duration":1,"timestamp":1}}`,
		"an unknown outcome":         `{"span":{` + head + `,"timestamp":1,"outcome":"ok"}}`,
		"a stack trace":              `{"span":{` + head + `,"timestamp":1,"stacktrace":[]}}`,
		"a service name":             `{"span":{` + head + `,"timestamp":1,"context":{"service":{"name":"other"}}}}`,
		"a \\u escape":               `{"span":{` + head + `,"timestamp":1,"action":"\u0041"}}`,
		"an exponent":                `{"span":{` + head + `,"timestamp":1,"sample_rate":1e-1}}`,
		"a port that wraps":          `{"span":{` + head + `,"timestamp":1,"context":{"destination":{"port":4294967296}}}}`,
		"a label twice":              `{"span":{` + head + `,"timestamp":1,"context":{"tags":{"a":"1","a":"2"}}}}`,
		"a label object":             `{"span":{` + head + `,"timestamp":1,"context":{"tags":{"a":{}}}}}`,
		"a service without resource": `{"span":{` + head + `,"timestamp":1,"context":{"destination":{"service":{"name":"x"}}}}}`,
		"trailing data":              `{"span":{` + head + `,"timestamp":1}} {}`,
		"a second key":               `{"span":{` + head + `,"timestamp":1},"x":1}`,
		"cut short":                  `{"span":{` + head + `,"timestamp":1}`,
		"a long name":                `{"span":{` + head[:len(head)-len(`"name":"n","type":"t","duration":1`)] + `"name":"` + string(bytes.Repeat([]byte("é"), 1025)) + `","type":"t","duration":1,"timestamp":1}}`,
		"an error":                   `{"error":{"id":"a","timestamp":1,"log":{"message":"m"}}}`,
		"a request without method":   `{"transaction":{"id":"a","trace_id":"b","type":"t","duration":1,"timestamp":1,"span_count":{"started":0},"context":{"request":{"url":{"raw":"/"}}}}}`,
		"a forwarded client":         `{"transaction":{"id":"a","trace_id":"b","type":"t","duration":1,"timestamp":1,"span_count":{"started":0},"context":{"request":{"method":"GET","headers":{"x-forwarded-for":"10.0.0.1"}}}}}`,
		"a header twice":             `{"transaction":{"id":"a","trace_id":"b","type":"t","duration":1,"timestamp":1,"span_count":{"started":0},"context":{"request":{"method":"GET","headers":{"accept":"a","Accept":"b"}}}}}`,
		"a user":                     `{"transaction":{"id":"a","trace_id":"b","type":"t","duration":1,"timestamp":1,"span_count":{"started":0},"context":{"user":{"id":1}}}}`,
		"links as an object":         `{"transaction":{"id":"a","trace_id":"b","type":"t","duration":1,"timestamp":1,"span_count":{"started":0},"links":{}}}`,
		"a service as a list":        `{"transaction":{"id":"a","trace_id":"b","type":"t","duration":1,"timestamp":1,"span_count":{"started":0},"context":{"service":[]}}}`,
		"custom as a list":           `{"transaction":{"id":"a","trace_id":"b","type":"t","duration":1,"timestamp":1,"span_count":{"started":0},"context":{"custom":[]}}}`,
		"a message as a list":        `{"span":{` + head + `,"timestamp":1,"context":{"message":[]}}}`,
		"a long port string":         `{"transaction":{"id":"a","trace_id":"b","type":"t","duration":1,"timestamp":1,"span_count":{"started":0},"context":{"request":{"method":"GET","url":{"port":"` + strings.Repeat("0", 1100) + `80"}}}}}`,
		"65 labels":                  `{"span":{` + head + `,"timestamp":1,"context":{"tags":{` + manyTags(65) + `}}}}`,
	} {
		t.Run(name, func(t *testing.T) {
			_, ok := new(Decoder).Decode([]byte(line))
			assert.False(t, ok)
		})
	}
}

// manyTags is n numeric labels, as a JSON object's members.
func manyTags(n int) string {
	members := make([]string, n)
	for i := range members {
		members[i] = fmt.Sprintf(`"k%d":%d`, i, i)
	}
	return strings.Join(members, ",")
}

// TestDecodeDropsAChunkMadeForALargeDeclinedLine: the small spans after a large line spanjson
// declined do not keep that line's copy alive.
func TestDecodeDropsAChunkMadeForALargeDeclinedLine(t *testing.T) {
	var d Decoder
	large := `{"span":{"id":"a","trace_id":"b","parent_id":"c","name":"n","type":"t","duration":1,"timestamp":1,"stacktrace":[{"filename":"` + strings.Repeat("x", 2*lastChunk) + `"}]}}`
	_, ok := d.Decode([]byte(large))
	require.False(t, ok)
	_, ok = d.Decode([]byte(`{"span":{"id":"a","trace_id":"b","parent_id":"c","name":"n","type":"t","duration":1,"timestamp":1}}`))
	require.True(t, ok)
	assert.LessOrEqual(t, cap(d.arena), lastChunk)
}

// FuzzDecode holds Decode to apm-data: every line it takes, apm-data takes and reads the same.
func FuzzDecode(f *testing.F) {
	f.Add(`{"span":{"id":"af0901a1947094b0","trace_id":"84f5a58656eef5109dcec3ad077dec6c","parent_id":"8a8c6d7f8d485abc","transaction_id":"8a8c6d7f8d485abc","name":"SELECT payments","type":"db","subtype":"postgresql","action":"query","outcome":"success","timestamp":1796552927312731,"duration":32.044,"context":{"db":{"instance":"shop","statement":"SELECT 1","type":"sql","user":"u","link":"l","rows_affected":2},"tags":{"db_cached":false,"db_rows":94}}}}`)
	f.Add(`{"span":{"id":"a","trace_id":"b","parent_id":"c","name":"n","type":"t.s.a","timestamp":1,"duration":0.5,"sample_rate":0.1,"sync":true,"context":{"http":{"method":"GET","url":"u","status_code":404,"response":{"status_code":200,"decoded_body_size":1,"encoded_body_size":2,"transfer_size":3}},"destination":{"address":"h","port":1,"service":{"name":"n","resource":"r/x","type":"t"}},"tags":{"team":1,"tier":"x"}}}}`)
	f.Add(`{"span":{"id":"a","trace_id":"b","parent_id":"c","name":"\"\\\/\b\f\n\r\t","type":"t","timestamp":1,"duration":1,"outcome":"failure","context":null}}`)
	f.Add(`{"span":{"id":"a","trace_id":"b","parent_id":"c","name":"n","type":"t","timestamp":1,"duration":1,"context":{"service":{"target":{"type":"http","name":"h:1"}},"destination":{"service":{"resource":"h:1"}}}}}`)
	f.Add(`{"transaction":{"id":"a","trace_id":"b","parent_id":"c","name":"n","type":"t","result":"r","outcome":"failure","timestamp":1,"duration":0.5,"sampled":false,"sample_rate":0.5,"span_count":{"started":1,"dropped":0},"context":{"request":{"method":"GET","http_version":"2","url":{"raw":"/a?b#c","protocol":"https:","full":"https://h:1/a?b#c","hostname":"h","port":"1","pathname":"/a","search":"?b","hash":"#c"},"headers":{"user-agent":["a","b"],"host":"h"},"socket":{"remote_address":"10.1.2.3:4"}},"response":{"status_code":500,"finished":true,"headers_sent":false,"headers":{"etag":"x"}},"tags":{"a":"b","n":2}}}}`)
	f.Fuzz(func(t *testing.T, line string) {
		got, ok := new(Decoder).Decode([]byte(line))
		if !ok || bytes.ContainsAny([]byte(line), "\n") {
			return // an NDJSON line has no newline; the receiver never passes one
		}
		requireSameAsAPMData(t, metadataLines[1], []byte(line), got)
	})
}
