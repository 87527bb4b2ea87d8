package payload

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestRoot(t *testing.T) {
	for _, tt := range []struct {
		name  string
		spans []Span
		want  uint64 // SpanID of the root; 0 for none
	}{
		{name: "no spans", spans: nil, want: 0},
		{name: "the span without a parent", spans: []Span{{SpanID: 2, ParentID: 1}, {SpanID: 1}, {SpanID: 3, ParentID: 1}}, want: 1},
		{name: "the last of two without a parent", spans: []Span{{SpanID: 1}, {SpanID: 2}}, want: 2},
		{name: "partial flush: the parent is not in the chunk", spans: []Span{{SpanID: 3, ParentID: 2}, {SpanID: 2, ParentID: 9}, {SpanID: 4, ParentID: 2}}, want: 2},
		{name: "a cycle: the last span", spans: []Span{{SpanID: 1, ParentID: 2}, {SpanID: 2, ParentID: 1}}, want: 2},
	} {
		t.Run(tt.name, func(t *testing.T) {
			root := (&Chunk{Spans: tt.spans}).Root()
			if tt.want == 0 {
				assert.Nil(t, root)
				return
			}
			assert.Equal(t, tt.want, root.SpanID)
		})
	}
}

// TestRootOfLongPartialFlush: a partial flush of more spans than the quadratic search takes.
func TestRootOfLongPartialFlush(t *testing.T) {
	spans := make([]Span, 200)
	for i := range spans {
		spans[i] = Span{SpanID: uint64(i + 2), ParentID: uint64(i + 1)} // a chain under span 1, absent
	}
	spans[0], spans[150] = spans[150], spans[0]
	assert.Equal(t, uint64(2), (&Chunk{Spans: spans}).Root().SpanID)
	for i := range spans {
		spans[i].ParentID = spans[(i+1)%len(spans)].SpanID // a cycle: no root at all
	}
	assert.Same(t, &spans[len(spans)-1], (&Chunk{Spans: spans}).Root())
}

// TestSamplingPriority: where the priority is read, as the agent reads it: the v0.7 chunk's own,
// else the root's metric, else the first span's; fractions cut towards zero.
func TestSamplingPriority(t *testing.T) {
	prio := func(v float64) []KF { return []KF{{Key: "_sample_rate", Value: 0.5}, {Key: PriorityMetric, Value: v}} }
	for _, tt := range []struct {
		name     string
		chunk    Chunk
		want     int64
		carrier  uint64 // SpanID of the span it was read from
		wantNone bool
	}{
		{name: "v0.7: the chunk's own, on the root", chunk: Chunk{Priority: -1, Spans: []Span{{SpanID: 2, ParentID: 1}, {SpanID: 1, Metrics: prio(1)}}}, want: -1, carrier: 1},
		{name: "v0.7: 0 is a priority", chunk: Chunk{Priority: 0, Spans: []Span{{SpanID: 1}}}, want: 0, carrier: 1},
		{name: "v0.4: the root's metric", chunk: Chunk{Priority: PriorityNone, Spans: []Span{{SpanID: 1, Metrics: prio(2)}, {SpanID: 2, ParentID: 1}}}, want: 2, carrier: 1},
		{name: "v0.4: the root's before an earlier span's", chunk: Chunk{Priority: PriorityNone, Spans: []Span{{SpanID: 2, ParentID: 1, Metrics: prio(1)}, {SpanID: 1, Metrics: prio(-1)}}}, want: -1, carrier: 1},
		{name: "v0.4: else the first span's", chunk: Chunk{Priority: PriorityNone, Spans: []Span{{SpanID: 1}, {SpanID: 2, ParentID: 1, Metrics: prio(-1)}, {SpanID: 3, ParentID: 1, Metrics: prio(2)}}}, want: -1, carrier: 2},
		{name: "v0.4: a fraction is cut towards zero", chunk: Chunk{Priority: PriorityNone, Spans: []Span{{SpanID: 1, Metrics: prio(-0.5)}}}, want: 0, carrier: 1},
		{name: "v0.4: none", chunk: Chunk{Priority: PriorityNone, Spans: []Span{{SpanID: 1, Metrics: []KF{{Key: "_sample_rate", Value: 1}}}}}, wantNone: true},
		{name: "no spans", chunk: Chunk{Priority: 1}, wantNone: true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			p, carrier, ok := tt.chunk.SamplingPriority(tt.chunk.Root())
			if tt.wantNone {
				assert.False(t, ok)
				assert.Nil(t, carrier)
				return
			}
			assert.True(t, ok)
			assert.Equal(t, tt.want, p)
			assert.Equal(t, tt.carrier, carrier.SpanID)
		})
	}
}
