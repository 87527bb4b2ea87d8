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
