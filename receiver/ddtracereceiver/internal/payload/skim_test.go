package payload

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
)

func rejected(priority int64) bool { return priority < 0 }

// sampledSpan is a span of trace with its ids, and the priority metric when prio is not nil.
func sampledSpan(e *enc, trace, id, parent uint64, prio *float64) *enc {
	n := 6
	if prio != nil {
		n++
	}
	e = e.mapN(n).kv("service", "svc").kv("name", "op").
		str("trace_id").u(trace).str("span_id").u(id).str("parent_id").u(parent).
		str("meta").mapN(2).kv("env", "prod").kv("http.method", "GET")
	if prio != nil {
		e = e.str("metrics").mapN(2).kf("_dd.measured", 1).kf(PriorityMetric, *prio)
	}
	return e
}

func ptr(v float64) *float64 { return &v }

// seedsDropping are bodies where the skim has a decision to make: priorities on the root, on a
// child only, on an orphan of a partial flush, absent; nil spans; a metrics map sent twice; fields
// the skim leaves to the full decoder; a malformed span in a rejected chunk.
func seedsDropping(f *testing.F) {
	f.Add(sampledSpan(sampledSpan(newEnc().arr(2).arr(1), 1, 1, 0, ptr(2)).arr(1), 2, 1, 0, ptr(-1)).bytes())
	f.Add(sampledSpan(sampledSpan(newEnc().arr(1).arr(3).nil(), 3, 2, 1, ptr(-1)), 3, 1, 0, nil).bytes())
	f.Add(sampledSpan(sampledSpan(newEnc().arr(1).arr(2), 4, 7, 5, nil), 4, 5, 9, ptr(-1)).bytes())
	f.Add(sampledSpan(newEnc().arr(2).arr(1), 5, 1, 0, nil).arr(0).bytes())
	f.Add(newEnc().arr(1).arr(1).mapN(3).str("parent_id").u(0).
		str("metrics").mapN(1).kf(PriorityMetric, -1).str("metrics").mapN(1).kf("x", 1).bytes())
	f.Add(newEnc().arr(1).arr(1).mapN(2).str("metrics").mapN(1).kf(PriorityMetric, -1).
		str("meta_struct").mapN(1).str("k").bin([]byte{1}).bytes())
	f.Add(newEnc().arr(1).arr(1).mapN(2).str("metrics").mapN(1).kf(PriorityMetric, -1).str("error").i(1 << 40).bytes())
	f.Add(newEnc().arr(1).arr(1).mapN(2).str("metrics").mapN(1).kf(PriorityMetric, -1).str("service").i(3).bytes())
	f.Add(newEnc().arr(1).arr(1).mapN(2).str("metrics").mapN(1).str(PriorityMetric).i(-2).str("meta").mapN(1).bin([]byte{0xff}).nil().bytes())
}

// FuzzDecodeDropping: for any input, DecodeTracesMsgpackDropping gives what DecodeTracesMsgpack
// followed by the removal of the rejected chunks gives: the same error or none, the same kept
// chunks with the same spans, the same nil span count, and the removed chunks and spans counted.
func FuzzDecodeDropping(f *testing.F) {
	seedsV04(f)
	seedsDropping(f)
	f.Fuzz(func(t *testing.T, b []byte) {
		full, ferr := DecodeTracesMsgpack(b)
		got, skipped, err := DecodeTracesMsgpackDropping(b, rejected)
		if ferr != nil {
			require.EqualError(t, err, ferr.Error())
			return
		}
		require.NoError(t, err)
		defer full.Release()
		defer got.Release()
		var want Skipped
		var kept []Chunk
		for _, c := range full.Chunks {
			if prio, _, ok := c.SamplingPriority(c.Root()); ok && rejected(prio) {
				want.Chunks++
				want.Spans += len(c.Spans)
				continue
			}
			kept = append(kept, c)
		}
		require.Equal(t, want, skipped)
		require.Equal(t, full.NilSpans, got.NilSpans)
		require.Len(t, got.Chunks, len(kept))
		for i := range kept {
			// Printed: a NaN metric is not equal to itself.
			require.Equal(t, fmt.Sprintf("%#v", kept[i]), fmt.Sprintf("%#v", got.Chunks[i]), "chunk %d", i)
		}
	})
}

// TestDecodeDroppingSkipsRejected: a rejected chunk is left out and counted, a kept one decoded,
// and a body of rejected chunks only is never copied for its strings.
func TestDecodeDroppingSkipsRejected(t *testing.T) {
	body := sampledSpan(sampledSpan(sampledSpan(newEnc().arr(2).arr(1), 1, 1, 0, ptr(1)).arr(3).nil(), 2, 2, 1, nil), 2, 1, 0, ptr(-1)).bytes()
	p, skipped, err := DecodeTracesMsgpackDropping(body, rejected)
	require.NoError(t, err)
	defer p.Release()
	require.Equal(t, Skipped{Chunks: 1, Spans: 2}, skipped)
	require.Equal(t, 1, p.NilSpans)
	require.Len(t, p.Chunks, 1)
	require.Equal(t, uint64(1), p.Chunks[0].Spans[0].TraceID)
	require.Equal(t, "svc", p.Chunks[0].Spans[0].Service)

	rejectedOnly := sampledSpan(newEnc().arr(1).arr(1), 3, 1, 0, ptr(-1)).bytes()
	p2, skipped, err := DecodeTracesMsgpackDropping(rejectedOnly, rejected)
	require.NoError(t, err)
	require.Equal(t, Skipped{Chunks: 1, Spans: 1}, skipped)
	require.Empty(t, p2.Chunks)
	require.Empty(t, p2.arena.src, "the body was copied for no string")
	p2.Release()
}
