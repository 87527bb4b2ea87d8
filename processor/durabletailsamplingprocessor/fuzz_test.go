package durabletailsamplingprocessor

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// FuzzReplay feeds arbitrary record payloads, as a damaged or hostile log could hold them past
// their checksum, to the replay: it must not panic, and the store's counts must match its traces.
func FuzzReplay(f *testing.F) {
	cfg := testConfig(errorsOnly)
	cfg.NumTraces, cfg.DecisionCache.SampledCacheSize, cfg.DecisionCache.NonSampledCacheSize = 16, 16, 16 // small maps: fast runs
	good := spansPayload(f, newTestProcessor(f, cfg, &recordingSink{}),
		request("api", spanSpec{1, 0, true}, spanSpec{2, 0, false}, spanSpec{1, 1, false}))
	f.Add(recordSpans, good)
	f.Add(recordSpans, good[:len(good)-3])
	f.Add(recordSpans, []byte{0xff, 0xff, 0xff, 0x7f})
	f.Add(recordDone, make([]byte, 20))
	f.Add(byte(9), []byte("unknown kind"))
	f.Fuzz(func(t *testing.T, kind byte, payload []byte) {
		p := newTestProcessor(t, cfg, &recordingSink{})
		p.replay(1, 8, recordSpans, good, t0)
		p.replay(2, 8, kind, payload, t0)
		var spans, bytes int64
		for _, tr := range p.pending.traces {
			inMemory := int64(0)
			for _, h := range tr.frags {
				assert.Positive(t, h.n)
				inMemory += int64(len(h.data))
				if h.data == nil {
					assert.GreaterOrEqual(t, h.at, int64(8+4), "a place in the record read")
				}
			}
			assert.Equal(t, inMemory, tr.bytes)
			spans += tr.count
			bytes += tr.bytes
		}
		assert.Equal(t, spans, p.pending.spans)
		assert.Equal(t, bytes, p.pending.bytes)
		assert.Equal(t, bytes, p.heldBytes)
	})
}

// spansPayload is the payload of the spans record persist writes for td.
func spansPayload(tb testing.TB, p *tailProcessor, td ptrace.Traces) []byte {
	frags := splitByTrace(td)
	_, err := p.prepare(frags)
	require.NoError(tb, err)
	var out []byte
	for _, part := range recordParts(frags) {
		out = append(out, part...)
	}
	return out
}

// The record format round-trips: what persist writes, decodeFragments reads back whole.
func TestFragmentsRoundTrip(t *testing.T) {
	p := newTestProcessor(t, testConfig(errorsOnly), &recordingSink{})
	td := request("api", spanSpec{1, 0, true}, spanSpec{2, 0, false}, spanSpec{1, 1, false})
	want := splitByTrace(request("api", spanSpec{1, 0, true}, spanSpec{2, 0, false}, spanSpec{1, 1, false}))
	got, err := decodeFragments(spansPayload(t, p, td))
	require.NoError(t, err)
	require.Len(t, got, 2)
	for i := range got {
		assert.Equal(t, want[i].id, got[i].id)
		assert.Equal(t, want[i].spans, got[i].spans)
		assert.NotEmpty(t, got[i].encoded, "a fragment of one trace keeps its bytes")
	}
}

// splitByTrace: a request of one trace moves whole (resources and scopes kept as they are); a
// request of several traces gets one fragment per trace, each span under a copy of its resource
// and scope, in the order the traces first appear.
func TestSplitByTrace(t *testing.T) {
	one := request("api", spanSpec{1, 0, false}, spanSpec{1, 1, true})
	one.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans().AppendEmpty().SetTraceID(traceID(1))
	frags := splitByTrace(one)
	require.Len(t, frags, 1)
	assert.Equal(t, int64(3), frags[0].count)
	assert.Equal(t, 2, frags[0].spans.ResourceSpans().Len(), "resources kept as they came")
	assert.Zero(t, one.SpanCount(), "moved, not copied")

	mixed := request("api", spanSpec{2, 0, false}, spanSpec{3, 0, false}, spanSpec{2, 1, false})
	frags = splitByTrace(mixed)
	require.Len(t, frags, 2)
	assert.Equal(t, traceID(2), frags[0].id)
	assert.Equal(t, int64(2), frags[0].count)
	assert.Equal(t, traceID(3), frags[1].id)
	for _, f := range frags {
		rs := f.spans.ResourceSpans().At(0)
		name, _ := rs.Resource().Attributes().Get("service.name")
		assert.Equal(t, "api", name.Str())
		assert.Equal(t, "test", rs.ScopeSpans().At(0).Scope().Name())
		assert.Equal(t, 1, f.spans.ResourceSpans().Len(), "consecutive spans share one copy")
	}
	assert.Empty(t, splitByTrace(ptrace.NewTraces()))
}
