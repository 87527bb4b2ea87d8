package ratesampler

import (
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/tracegate/tracegate/receiver/ddtracereceiver/internal/payload"
)

// benchPayload is a request of 50 chunks of 5 spans each from two services, the root last and
// each span with 10 meta and 5 metrics, the priority and env on the root: what a tracer flushes.
func benchPayload() []payload.Payload {
	var p payload.Payload
	for c := range 50 {
		spans := make([]payload.Span, 5)
		for i := range spans {
			s := &spans[i]
			s.Service, s.TraceID, s.SpanID, s.ParentID = fmt.Sprintf("svc-%d", c%2), uint64(c+1), uint64(i+2), 1
			for k := range 10 {
				s.Meta = append(s.Meta, payload.KV{Key: fmt.Sprintf("tag.%d", k), Value: "value"})
			}
			for k := range 5 {
				s.Metrics = append(s.Metrics, payload.KF{Key: fmt.Sprintf("metric.%d", k), Value: 1})
			}
		}
		root := &spans[4]
		root.SpanID, root.ParentID = 1, 0
		root.Meta = append(root.Meta, payload.KV{Key: "env", Value: "prod"})
		root.Metrics = append(root.Metrics, payload.KF{Key: payload.PriorityMetric, Value: 1})
		p.Chunks = append(p.Chunks, payload.Chunk{Priority: payload.PriorityNone, Spans: spans})
	}
	return []payload.Payload{p}
}

// BenchmarkCount measures the cost of counting per chunk (ns/op is per request of 50 chunks;
// the chunk figure is reported too), on one goroutine and on all.
func BenchmarkCount(b *testing.B) {
	payloads := benchPayload()
	chunks := len(payloads[0].Chunks)
	now := time.Unix(1_700_000_000, 0)
	b.Run("serial", func(b *testing.B) {
		s := New(Config{TargetTracesPerSecond: 10, MaxServices: 5000})
		b.ReportAllocs()
		for b.Loop() {
			s.Count(now, payloads, 0)
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*chunks), "ns/chunk")
	})
	b.Run("parallel", func(b *testing.B) {
		s := New(Config{TargetTracesPerSecond: 10, MaxServices: 5000})
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				s.Count(now, payloads, 0)
			}
		})
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*chunks), "ns/chunk")
	})
}

// BenchmarkRotate measures a rate computation over many signatures, which runs once every 5 s
// under the lock.
func BenchmarkRotate(b *testing.B) {
	for _, n := range []int{10, 5000} {
		b.Run(strconv.Itoa(n), func(b *testing.B) {
			s := New(Config{TargetTracesPerSecond: 10, MaxServices: n})
			var p payload.Payload
			for i := range n {
				p.Chunks = append(p.Chunks, chunks(fmt.Sprintf("svc-%d", i), 1, 1)...)
			}
			payloads := []payload.Payload{p}
			b.ReportAllocs()
			k := 0
			for b.Loop() {
				k++
				s.Count(bucket(k), payloads, 0) // every count begins a bucket
			}
		})
	}
}
