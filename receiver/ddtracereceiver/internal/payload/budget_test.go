package payload

import (
	"bytes"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/encoding/protowire"
)

// repeat returns n copies of b.
func repeat(b []byte, n int) []byte { return bytes.Repeat(b, n) }

// hostileBodies are well-formed bodies whose elements are one byte each on the wire and hundreds
// of bytes in memory.
func hostileBodies(n int) []struct {
	name   string
	decode func([]byte) (Payload, error)
	body   []byte
} {
	emptyMap, emptyArr := []byte{0x80}, []byte{0x90}
	span := func(field string) []byte { // one span with field = [n empty maps]
		return append(newEnc().arr(1).arr(1).mapN(3).str("trace_id").u(1).str("span_id").u(1).str(field).raw([]byte{0xdd, byte(n >> 24), byte(n >> 16), byte(n >> 8), byte(n)}).bytes(), repeat(emptyMap, n)...)
	}
	return []struct {
		name   string
		decode func([]byte) (Payload, error)
		body   []byte
	}{
		{"v0.4 empty spans", DecodeTracesMsgpack, append(newEnc().arr(1).raw([]byte{0xdd, byte(n >> 24), byte(n >> 16), byte(n >> 8), byte(n)}).bytes(), repeat(emptyMap, n)...)},
		{"v0.4 empty traces", DecodeTracesMsgpack, append(newEnc().raw([]byte{0xdd, byte(n >> 24), byte(n >> 16), byte(n >> 8), byte(n)}).bytes(), repeat(emptyArr, n)...)},
		{"v0.4 nil spans", DecodeTracesMsgpack, append(newEnc().arr(1).raw([]byte{0xdd, byte(n >> 24), byte(n >> 16), byte(n >> 8), byte(n)}).bytes(), repeat([]byte{0xc0}, n)...)},
		{"v0.4 empty span links", DecodeTracesMsgpack, span("span_links")},
		{"v0.4 empty span events", DecodeTracesMsgpack, span("span_events")},
		{"v0.7 empty chunks", DecodeV07, append(newEnc().mapN(1).str("chunks").raw([]byte{0xdd, byte(n >> 24), byte(n >> 16), byte(n >> 8), byte(n)}).bytes(), repeat(emptyMap, n)...)},
		{"json empty spans", DecodeTracesJSON, []byte("[[" + strings.Repeat("{},", n) + "{}]]")},
		{"json empty traces", DecodeTracesJSON, []byte("[" + strings.Repeat("[],", n) + "[]]")},
		{"json null spans", DecodeTracesJSON, []byte("[[" + strings.Repeat("null,", n) + "null]]")},
	}
}

// TestDecodingMemoryIsBounded: a body of one-byte elements is refused as too many elements before
// its structures are allocated. Without the bound a 4 MiB body of empty maps took ~1 GB (a Span
// is 232 bytes).
func TestDecodingMemoryIsBounded(t *testing.T) {
	const n = 4 << 20
	for _, tt := range hostileBodies(n) {
		t.Run(tt.name, func(t *testing.T) {
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			p, err := tt.decode(tt.body)
			runtime.ReadMemStats(&after)
			p.Release()
			if tt.name != "json null spans" { // nulls cost a pointer each: decoded, and cheaply
				require.Error(t, err)
				require.ErrorIs(t, err, ErrTooManyElements, "%v", err)
			}
			allocated := after.TotalAlloc - before.TotalAlloc
			assert.Less(t, allocated, uint64(maxStructBytesPerBodyByte+4)*uint64(len(tt.body)),
				"decoding a %d-byte body allocated %d bytes", len(tt.body), allocated)
		})
	}
}

// TestBudgetFitsRealPayloads: the densest real encodings stay within the bound: v0.5 spans whose
// 30 meta entries are one-byte dictionary indexes, and v0.4 spans with 30 one-letter tags.
func TestBudgetFitsRealPayloads(t *testing.T) {
	const spans = 20000
	v05 := newEnc().arr(2).arr(3).str("").str("a").str("b").arr(1).arr(spans)
	v04 := newEnc().arr(1).arr(spans)
	for i := range spans {
		v05.arr(12).u(1).u(1).u(1).u(uint64(i + 1)).u(uint64(i + 1)).u(0).i(1).i(1).i(0).mapN(30)
		v04.mapN(3).str("trace_id").u(1).str("span_id").u(uint64(i + 1)).str("meta").mapN(30)
		for j := range 30 {
			v05.u(uint64(1 + j%2)).u(2)
			v04.kv(string(rune('a'+j%26))+string(rune('a'+j/26)), "v")
		}
		v05.mapN(0).u(0)
	}
	p, err := DecodeV05(v05.bytes())
	require.NoError(t, err)
	assert.Len(t, p.Chunks[0].Spans, spans)
	p.Release()
	p, err = DecodeTracesMsgpack(v04.bytes())
	require.NoError(t, err)
	assert.Len(t, p.Chunks[0].Spans, spans)
	p.Release()
}

// emptySpansAgentPayload is an AgentPayload with one tracer payload of one chunk of n empty spans
// (two bytes each on the wire).
func emptySpansAgentPayload(n int) []byte {
	chunk := bytes.Repeat(protowire.AppendBytes(protowire.AppendTag(nil, 3, protowire.BytesType), nil), n)
	tracer := protowire.AppendBytes(protowire.AppendTag(nil, 6, protowire.BytesType), chunk)
	return protowire.AppendBytes(protowire.AppendTag(nil, 5, protowire.BytesType), tracer)
}

// TestAgentPayloadIsBounded: /api/v0.2 bodies are walked before the agent's protobuf decoder
// allocates them; payloads in the indexed format, which would be decoded and then ignored, are
// refused with a clear error.
func TestAgentPayloadIsBounded(t *testing.T) {
	body := emptySpansAgentPayload(2 << 20)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	_, err := DecodeAgentPayload(body)
	runtime.ReadMemStats(&after)
	require.ErrorIs(t, err, ErrTooManyElements)
	assert.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(len(body)), "refused before decoding")

	ps, err := DecodeAgentPayload(emptySpansAgentPayload(100))
	require.NoError(t, err, "a small payload passes")
	require.Len(t, ps, 1)
	assert.Len(t, ps[0].Chunks[0].Spans, 100)

	_, err = DecodeAgentPayload(protowire.AppendBytes(protowire.AppendTag(nil, idxTracerPayloads, protowire.BytesType), []byte{}))
	require.ErrorIs(t, err, errUnsupportedFormat)

	_, err = DecodeAgentPayload([]byte{0x2a, 0xff, 0xff, 0xff, 0xff, 0x07}) // length past the end
	require.Error(t, err)
}
