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
	good, err := encodeFragments(splitByTrace(request("api", spanSpec{1, 0, true}, spanSpec{2, 0, false}, spanSpec{1, 1, false})))
	require.NoError(f, err)
	f.Add(recordSpans, good)
	f.Add(recordSpans, good[:len(good)-3])
	f.Add(recordSpans, []byte{0xff, 0xff, 0xff, 0x7f})
	f.Add(recordDone, make([]byte, 20))
	f.Add(byte(9), []byte("unknown kind"))
	cfg := testConfig(errorsOnly)
	cfg.NumTraces, cfg.DecisionCache.SampledCacheSize, cfg.DecisionCache.NonSampledCacheSize = 16, 16, 16 // small maps: fast runs
	f.Fuzz(func(t *testing.T, kind byte, payload []byte) {
		p := newTestProcessor(t, cfg, &recordingSink{})
		p.replay(1, recordSpans, good, t0)
		p.replay(2, kind, payload, t0)
		var spans, bytes int64
		for _, tr := range p.pending.traces {
			assert.Equal(t, int64(tr.spans.SpanCount()), tr.count)
			spans += tr.count
			bytes += tr.bytes
		}
		assert.Equal(t, spans, p.pending.spans)
		assert.Equal(t, bytes, p.pending.bytes)
		assert.Equal(t, bytes, p.heldBytes)
	})
}

// The record format round-trips: what encodeFragments writes, decodeFragments reads back whole.
func TestFragmentsRoundTrip(t *testing.T) {
	frags := splitByTrace(request("api", spanSpec{1, 0, true}, spanSpec{2, 0, false}, spanSpec{1, 1, false}))
	want := make([]ptrace.Traces, len(frags))
	for i, f := range frags {
		want[i] = ptrace.NewTraces()
		f.spans.CopyTo(want[i])
	}
	payload, err := encodeFragments(frags)
	require.NoError(t, err)
	got, err := decodeFragments(payload)
	require.NoError(t, err)
	require.Len(t, got, 2)
	for i := range got {
		assert.Equal(t, frags[i].id, got[i].id)
		assert.Equal(t, want[i], got[i].spans)
		assert.Equal(t, frags[i].bytes, got[i].bytes)
	}
}
