package elasticapmreceiver

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer/consumertest"

	"github.com/tracegate/tracegate/receiver/elasticapmreceiver/internal/metadatatest"
)

// BenchmarkDecode: decoding and converting one stream, per span: as the receiver does (spanjson
// for the common events, apm-data for the rest), and with apm-data alone, in the same run.
func BenchmarkDecode(b *testing.B) {
	body, spans := tracegenBody(b, 10), 100
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
	body, spans := tracegenBody(b, traces), 10*traces
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
