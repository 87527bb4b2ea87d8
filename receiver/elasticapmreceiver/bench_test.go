package elasticapmreceiver

import (
	"bytes"
	"context"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
	"time"

	"github.com/tracegate/tracegate/internal/testbed/tracemodel"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer/consumertest"

	"github.com/tracegate/tracegate/receiver/elasticapmreceiver/internal/metadatatest"
)

// benchBody is traces traces of ten spans in one stream; one is a request of the pipeline
// benchmark's load.
func benchBody(b *testing.B, traces int) (body []byte, spans int) {
	b.Helper()
	r := rand.New(rand.NewPCG(1, 2))
	var buf bytes.Buffer
	for i := range traces {
		body, err := tracemodel.ElasticAPMEvents(tracemodel.NewTrace(r, "bench-svc", 10, time.Now()))
		require.NoError(b, err)
		if i > 0 { // one metadata line per stream
			body = body[bytes.IndexByte(body, '\n')+1:]
		}
		buf.Write(body)
		spans += 10
	}
	return buf.Bytes(), spans
}

// BenchmarkDecode: decoding and converting one stream, per span: as the receiver does (spanjson
// for the common events, apm-data for the rest), and with apm-data alone, in the same run.
func BenchmarkDecode(b *testing.B) {
	body, spans := benchBody(b, 10)
	r, err := newReceiver(createDefaultConfig().(*Config), metadatatest.NewSettings(componenttest.NewTelemetry()))
	require.NoError(b, err)
	b.Run("receiver", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(body)))
		for b.Loop() {
			res := newResult()
			bufs := r.buffers.get()
			in, err := r.readerOf(httptest.NewRecorder(), bytes.NewReader(body), bufs)
			if err != nil {
				b.Fatal(err)
			}
			d := r.decode(context.Background(), in, bufs, res)
			r.buffers.put(bufs)
			if d.out.Traces.SpanCount() != spans || res.status != http.StatusAccepted {
				b.Fatalf("%d spans, status %d: %+v", d.out.Traces.SpanCount(), res.status, res.Errors)
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*spans), "ns/span")
	})
	b.Run("apm-data-alone", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(body)))
		for b.Loop() {
			if out, _ := decodeWithAPMDataAlone(b, r, body); out.Traces.SpanCount() != spans {
				b.Fatalf("%d spans", out.Traces.SpanCount())
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*spans), "ns/span")
	})
}

// BenchmarkHandler: the whole request, from the body to the pipeline's sink, for a request of
// ten spans (the pipeline benchmark's) and of a hundred.
func BenchmarkHandler(b *testing.B) {
	for _, traces := range []int{1, 10} {
		b.Run(strconv.Itoa(10*traces)+"-spans", func(b *testing.B) { benchmarkHandler(b, traces) })
	}
}

func benchmarkHandler(b *testing.B, traces int) {
	body, spans := benchBody(b, traces)
	r, err := newReceiver(createDefaultConfig().(*Config), metadatatest.NewSettings(componenttest.NewTelemetry()))
	require.NoError(b, err)
	r.next.Traces = consumertest.NewNop()
	h := r.routes()
	b.ReportAllocs()
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		req := httptest.NewRequestWithContext(context.Background(), http.MethodPost, intakePath, bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/x-ndjson")
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != http.StatusAccepted {
			b.Fatalf("status %d: %s", rec.Code, rec.Body)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*spans), "ns/span")
}
