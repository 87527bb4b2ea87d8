package payload

import (
	"testing"

	pb "github.com/DataDog/datadog-agent/pkg/proto/pbgo/trace"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestSlab(t *testing.T) {
	var s slab[KV]
	a := s.take(3, 4)
	b := s.take(1, 4)
	c := s.take(2, 4) // does not fit in the first block's one free element
	require.Len(t, s.blocks, 2)
	assert.Equal(t, 3, cap(a), "full slice expression: appending to a cannot overwrite b")
	assert.Same(t, &a[0], &s.blocks[0][0])
	assert.Same(t, &b[0], &s.blocks[0][3])
	assert.Same(t, &c[0], &s.blocks[1][0])
	big := s.take(10, 4) // larger than a block: a block of its own
	assert.Len(t, big, 10)

	a[0] = KV{"k", "v"}
	first := &s.blocks[0][0]
	s.reset()
	assert.Equal(t, 0, s.cur)
	again := s.take(3, 4)
	assert.Same(t, first, &again[0], "a reset slab reuses its blocks")
	assert.Equal(t, KV{}, again[0], "and hands them out zeroed")
}

// TestReleasedPayloadReused decodes a payload with every per-span slice, releases it, and decodes
// others: what the next decodes get from the reused reader must be as from a fresh one, and the
// released payload's strings stay valid.
func TestReleasedPayloadReused(t *testing.T) {
	full := newEnc().arr(1).arr(2)
	for i := range 2 {
		full.mapN(8).kv("service", "svc").str("trace_id").u(1).str("span_id").u(uint64(i+1)).
			str("meta").mapN(1).kv("http.method", "GET").
			str("metrics").mapN(1).kf("m", 1).
			str("meta_struct").mapN(1).str("ms").bin([]byte{1}).
			str("span_links").arr(1).mapN(2).str("trace_id").u(3).str("span_id").u(4).
			str("span_events").arr(1).mapN(1).kv("name", "e")
	}
	first, err := DecodeTracesMsgpack(full.bytes())
	require.NoError(t, err)
	service := first.Chunks[0].Spans[0].Service
	first.Release()
	assert.Equal(t, Payload{}, first, "a released payload is empty")
	assert.Equal(t, "svc", service)

	v05 := newEnc().arr(2).arr(3).str("svc").str("op").str("res").
		arr(1).arr(1).arr(12).u(0).u(1).u(2).u(10).u(11).u(0).i(100).i(50).i(0).mapN(0).mapN(0).u(0).bytes()
	p, err := DecodeV05(v05)
	require.NoError(t, err)
	var agent pb.Traces
	require.NoError(t, agent.UnmarshalMsgDictionary(v05))
	assert.Equal(t, normalize(FromTraces(agent)), normalize(p))
	p.Release()

	again, err := DecodeTracesMsgpack(full.bytes())
	require.NoError(t, err)
	assertSameAsAgentV04(t, full.bytes(), again)
	again.Release()
}

// TestV05CopiesOnlyTheDictionary: a v0.5 body's strings are all in its dictionary, so the reader
// copies that much of the body, and the strings do not change when the request buffer is reused.
func TestV05CopiesOnlyTheDictionary(t *testing.T) {
	dict := newEnc().arr(2).arr(4).str("svc").str("op").str("res").str("http.method").bytes()
	body := newEnc().arr(2).arr(4).str("svc").str("op").str("res").str("http.method").
		arr(1).arr(1).arr(12).u(0).u(1).u(2).u(10).u(11).u(0).i(100).i(50).i(0).mapN(1).u(3).u(1).mapN(0).u(0).bytes()
	require.Equal(t, dict, body[:len(dict)])
	p, err := DecodeV05(body)
	require.NoError(t, err)
	assert.Len(t, p.arena.src, len(dict), "the spans after the dictionary are not copied")
	clear(body) // the handler reuses its buffer for the next request
	s := p.Chunks[0].Spans[0]
	assert.Equal(t, []string{"svc", "op", "res", "svc"}, []string{s.Service, s.Name, s.Resource, s.Type})
	assert.Equal(t, []KV{{"http.method", "op"}}, s.Meta)
	p.Release()

	for _, malformed := range [][]byte{{}, {0x91}, newEnc().arr(2).arr(3).str("a").bytes()} {
		assert.Equal(t, len(malformed), dictionaryEnd(malformed), "%x: the whole body", malformed)
	}
}
