package elasticapmreceiver

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"math/rand/v2"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/elastic/apm-data/input/elasticapm"
	"github.com/elastic/apm-data/model/modelpb"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/tracegate/tracegate/internal/testbed/tracemodel"
	"github.com/tracegate/tracegate/receiver/elasticapmreceiver/internal/convert"
	"github.com/tracegate/tracegate/receiver/elasticapmreceiver/internal/metadatatest"
)

// FuzzDecode: any body (compressed or not) decodes and converts without a panic, within
// max_event_size per line, every event is either converted or answered as an error, and the
// request's answer and data are what apm-data alone makes of the body (spanjson takes its common
// events).
func FuzzDecode(f *testing.F) {
	for _, dir := range []string{filepath.Join("internal", "convert", "testdata", "edot"), filepath.Join("testdata", "invalid"), filepath.Join("testdata", "agents")} {
		files, err := filepath.Glob(filepath.Join(dir, "*.ndjson"))
		require.NoError(f, err)
		for _, name := range files {
			b, err := os.ReadFile(name)
			require.NoError(f, err)
			f.Add(b)
		}
	}
	f.Add([]byte(metadataLine + transactionLine("0000000000000001")))
	for _, traces := range []int{1, 3} {
		f.Add(tracegenBody(f, traces))
	}
	f.Add([]byte(globalLabelsBody))
	cfg := createDefaultConfig().(*Config)
	cfg.MaxEventSize = 64 << 10
	r, err := newReceiver(cfg, metadatatest.NewSettings(componenttest.NewTelemetry()))
	require.NoError(f, err)
	f.Fuzz(func(t *testing.T, body []byte) {
		// The request path itself, its pooled buffers reused from one input to the next.
		res := newResult()
		bufs := r.buffers.get()
		defer r.buffers.put(bufs)
		in, err := r.readerOf(httptest.NewRecorder(), bytes.NewReader(body), bufs)
		if err != nil {
			return // answered 400 "data decoding error"
		}
		d := r.decode(context.Background(), in, bufs, res)
		requireSameAsAPMDataAlone(t, r, body, d, res)
		converted := d.out.Events.Total()
		if converted != d.total() {
			t.Fatalf("%d events decoded, %d converted", d.total(), converted)
		}
		if got := d.out.Traces.SpanCount(); got != d.out.Events[0]+d.out.Events[1] {
			t.Fatalf("%d spans for %v", got, d.out.Events)
		}
		if converted == 0 && res.status == 202 && len(bytes.TrimSpace(body)) > 0 && !bytes.HasPrefix(bytes.TrimSpace(body), []byte(`{"metadata"`)) && !bytes.HasPrefix(bytes.TrimSpace(body), []byte(`{"m"`)) && utf8.Valid(body) {
			// A non-empty body that is not a metadata line must be refused.
			if _, err := io.ReadAll(bytes.NewReader(body)); err == nil && body[0] != 0x1f && body[0]&0x0f != 8 {
				t.Fatalf("body %q accepted without a metadata line", body)
			}
		}
	})
}

// FuzzUTF8Reader: what comes through is the input up to its first invalid byte, whatever the read
// sizes, and the error comes exactly when the input is not UTF-8.
func FuzzUTF8Reader(f *testing.F) {
	f.Add([]byte("héllo €"), uint8(1))
	f.Add([]byte("a\xffb"), uint8(3))
	f.Fuzz(func(t *testing.T, in []byte, chunk uint8) {
		out, err := io.ReadAll(io.LimitReader(newUTF8Reader(&chunked{b: in, n: int(chunk%7) + 1}), int64(len(in))+1))
		want := in
		if i := firstInvalid(in); i >= 0 {
			want = in[:i]
			if err == nil {
				t.Fatalf("no error for invalid input %q", in)
			}
		} else if err != nil {
			t.Fatalf("error %v for valid input %q", err, in)
		}
		if !bytes.Equal(out, want) {
			t.Fatalf("got %q, want %q", out, want)
		}
	})
}

// chunked returns at most n bytes per Read.
type chunked struct {
	b []byte
	n int
}

func (c *chunked) Read(p []byte) (int, error) {
	if len(c.b) == 0 {
		return 0, io.EOF
	}
	n := copy(p[:min(len(p), c.n)], c.b)
	c.b = c.b[n:]
	return n, nil
}

// tracegenBody is traces traces of ten spans in one stream, as make bench-intake sends them.
// globalLabelsBody has global labels, one of which a span's own label overrides: that span has a
// resource of its own.
const globalLabelsBody = `{"metadata":{"service":{"name":"svc","agent":{"name":"go","version":"1"}},"labels":{"team":"a","tier":2}}}` + "\n" +
	`{"span":{"id":"0000000000000001","trace_id":"0123456789abcdef0123456789abcdef","parent_id":"0000000000000002","name":"s","type":"db","timestamp":1,"duration":1,"context":{"tags":{"team":"b"}}}}` + "\n" +
	`{"span":{"id":"0000000000000003","trace_id":"0123456789abcdef0123456789abcdef","parent_id":"0000000000000002","name":"s","type":"db","timestamp":1,"duration":1,"context":{"tags":{"other":"c","n":2.5}}}}` + "\n"

func tracegenBody(tb testing.TB, traces int) []byte {
	tb.Helper()
	r := rand.New(rand.NewPCG(1, 2))
	var buf bytes.Buffer
	for i := range traces {
		body, err := tracemodel.ElasticAPMEvents(tracemodel.NewTrace(r, "svc", 10, time.Now()))
		require.NoError(tb, err)
		if i > 0 { // one metadata line per stream
			body = body[bytes.IndexByte(body, '\n')+1:]
		}
		buf.Write(body)
	}
	return buf.Bytes()
}

// decodeWithAPMDataAlone is the request path without spanjson: apm-data decodes every line.
func decodeWithAPMDataAlone(tb testing.TB, r *intakeReceiver, body []byte) (*convert.Output, *result) {
	tb.Helper()
	res := newResult()
	bufs := r.buffers.get()
	defer r.buffers.put(bufs)
	in, err := r.readerOf(httptest.NewRecorder(), bytes.NewReader(body), bufs)
	require.NoError(tb, err)
	out := convert.NewOutput()
	var stream elasticapm.Result
	err = r.decoder.HandleStream(context.Background(), &modelpb.APMEvent{Event: &modelpb.Event{}}, in, batchSize,
		modelpb.ProcessBatchFunc(func(ctx context.Context, b *modelpb.Batch) error {
			return r.converter.Append(ctx, b, out)
		}), &stream)
	r.recordInvalid(context.Background(), &stream, res)
	if err != nil {
		status, msg, doc := streamError(err)
		res.add(status, msg, doc)
	}
	return out, res
}

// requireSameAsAPMDataAlone checks a request's answer and data against apm-data alone: the same
// errors in the same order, the same events, and the same documents (in any order: spanjson's
// events come first).
func requireSameAsAPMDataAlone(tb testing.TB, r *intakeReceiver, body []byte, d *decoded, res *result) {
	tb.Helper()
	want, wantRes := decodeWithAPMDataAlone(tb, r, body)
	require.Equal(tb, wantRes.status, res.status)
	require.Equal(tb, wantRes.Errors, res.Errors)
	require.Equal(tb, want.Events, d.out.Events)
	require.Equal(tb, spanDocuments(tb, want.Traces), spanDocuments(tb, d.out.Traces))
	require.Equal(tb, recordDocuments(tb, want.Logs), recordDocuments(tb, d.out.Logs))
	require.Equal(tb, metricDocuments(tb, want.Metrics), metricDocuments(tb, d.out.Metrics))
}

// metricDocuments is every metric with its resource, each as canonical JSON, sorted: a
// metricset's samples come in the order of apm-data's map.
func metricDocuments(tb testing.TB, md pmetric.Metrics) []string {
	var docs []string
	for _, rm := range md.ResourceMetrics().All() {
		for _, sm := range rm.ScopeMetrics().All() {
			for _, m := range sm.Metrics().All() {
				one := pmetric.NewMetrics()
				m.CopyTo(one.ResourceMetrics().AppendEmpty().ScopeMetrics().AppendEmpty().Metrics().AppendEmpty())
				b, err := (&pmetric.JSONMarshaler{}).MarshalMetrics(one)
				require.NoError(tb, err)
				var doc any
				require.NoError(tb, json.Unmarshal(b, &doc))
				docs = append(docs, canonicalJSON(tb, map[string]any{"resource": rm.Resource().Attributes().AsRaw(), "metric": doc}))
			}
		}
	}
	slices.Sort(docs)
	return docs
}

// spanDocuments is every span with its resource, each as canonical JSON (maps in key order),
// sorted.
func spanDocuments(tb testing.TB, td ptrace.Traces) []string {
	var docs []string
	for _, rs := range td.ResourceSpans().All() {
		for _, ss := range rs.ScopeSpans().All() {
			for _, s := range ss.Spans().All() {
				docs = append(docs, canonicalJSON(tb, map[string]any{
					"resource": rs.Resource().Attributes().AsRaw(), "attributes": s.Attributes().AsRaw(),
					"trace": s.TraceID().String(), "id": s.SpanID().String(), "parent": s.ParentSpanID().String(),
					"name": s.Name(), "kind": s.Kind().String(), "start": s.StartTimestamp(), "end": s.EndTimestamp(),
					"status": s.Status().Code().String(), "flags": s.Flags(), "links": s.Links().Len(),
				}))
			}
		}
	}
	slices.Sort(docs)
	return docs
}

func recordDocuments(tb testing.TB, ld plog.Logs) []string {
	var docs []string
	for _, rl := range ld.ResourceLogs().All() {
		for _, sl := range rl.ScopeLogs().All() {
			for _, lr := range sl.LogRecords().All() {
				docs = append(docs, canonicalJSON(tb, map[string]any{
					"resource": rl.Resource().Attributes().AsRaw(), "attributes": lr.Attributes().AsRaw(),
					"body": lr.Body().AsRaw(), "time": lr.Timestamp(), "trace": lr.TraceID().String(),
				}))
			}
		}
	}
	slices.Sort(docs)
	return docs
}

func canonicalJSON(tb testing.TB, v any) string {
	b, err := json.Marshal(v)
	require.NoError(tb, err)
	return string(b)
}
