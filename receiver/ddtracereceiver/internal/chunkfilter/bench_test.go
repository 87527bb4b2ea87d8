package chunkfilter

import (
	"testing"

	"github.com/tracegate/tracegate/receiver/ddtracereceiver/internal/payload"
)

// BenchmarkPayloads: the filters of the README's example on 100 chunks of 10 spans that all pass
// them (the common case: every rule is tried), reported per span.
func BenchmarkPayloads(b *testing.B) {
	f, err := New(Config{
		IgnoreResources: []string{"^GET /(health|ready)z?$"},
		FilterTags:      TagRules{Reject: []string{"http.useragent:kube-probe/1.30"}, Require: []string{"env:prod"}},
		FilterTagsRegex: TagRules{Reject: []string{"http.url:/internal/"}},
	})
	if err != nil {
		b.Fatal(err)
	}
	chunks := make([]payload.Chunk, 100)
	for i := range chunks {
		spans := make([]payload.Span, 10)
		for j := range spans {
			spans[j] = payload.Span{SpanID: uint64(j + 1), ParentID: uint64(j), Resource: "GET /users/?"}
		}
		spans[0].Meta = []payload.KV{{Key: "env", Value: "prod"}, {Key: "http.url", Value: "http://shop/users/1"}, {Key: "http.useragent", Value: "curl/8"}}
		chunks[i] = payload.Chunk{Spans: spans}
	}
	p := []payload.Payload{{}}
	b.ReportAllocs()
	for b.Loop() {
		p[0].Chunks = chunks
		if c := f.Payloads(p); c.Chunks != ([NumReasons]int{}) {
			b.Fatal("a chunk was dropped")
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*1000), "ns/span")
}

// BenchmarkDropRejected: 100 chunks of 10 spans, 9 in 10 rejected (a 10 % sample rate), the
// priority in the root's metric as v0.4 tracers send it; reported per span.
func BenchmarkDropRejected(b *testing.B) {
	chunks := make([]payload.Chunk, 100)
	for i := range chunks {
		spans := make([]payload.Span, 10)
		for j := range spans {
			spans[j] = payload.Span{SpanID: uint64(j + 1), ParentID: uint64(j), Metrics: []payload.KF{{Key: "_dd.measured", Value: 1}}}
		}
		priority := -1.0
		if i%10 == 0 {
			priority = 2
		}
		spans[0].Metrics = append(spans[0].Metrics, payload.KF{Key: payload.PriorityMetric, Value: priority})
		chunks[i] = payload.Chunk{Priority: payload.PriorityNone, Spans: spans}
	}
	work := make([]payload.Chunk, len(chunks))
	p := []payload.Payload{{}}
	b.ReportAllocs()
	for b.Loop() {
		copy(work, chunks)
		p[0].Chunks = work
		if c := DropRejected(p); c.Chunks[RejectedPriority] != 90 {
			b.Fatalf("%d chunks dropped, want 90", c.Chunks[RejectedPriority])
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*1000), "ns/span")
}
