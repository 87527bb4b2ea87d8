package bufferprocessor

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"
)

// FuzzRecordPayload: the payload of a disk record (its checksum verified, its bytes otherwise
// untrusted: a log written by another release, a damaged disk) is decoded as the log's signal by
// assemble: it becomes a batch that encodes back to a batch of the same items, or it is dropped
// and counted as undecodable. Never a panic. which picks the signal.
func FuzzRecordPayload(f *testing.F) {
	for _, seed := range [][]byte{
		mustMarshal(tracesTest.sig.marshal(makeTraces(1, 2))),
		mustMarshal(logsTest.sig.marshal(makeLogs(1, 2))),
		mustMarshal(metricsTest.sig.marshal(makeMetrics(1, 2))),
		{0x0a, 0x80},
		{0xff},
		{},
	} {
		for which := range uint8(3) {
			f.Add(which, seed)
		}
	}
	f.Fuzz(func(t *testing.T, which uint8, payload []byte) {
		switch which % 3 {
		case 0:
			checkPayload(t, tracesTest, payload)
		case 1:
			checkPayload(t, logsTest, payload)
		default:
			checkPayload(t, metricsTest, payload)
		}
	})
}

func mustMarshal(b []byte, err error) []byte {
	if err != nil {
		panic(err)
	}
	return b
}

func checkPayload[T any](t *testing.T, ts testSignal[T], payload []byte) {
	var dropped int64
	p := &bufferProcessor[T]{sig: ts.sig}
	p.q = newQueue(queueSettings[T]{sig: ts.sig, onDrop: func(reason string, n int64) {
		assert.Equal(t, reasonUndecodable, reason)
		dropped += n
	}, logger: zap.NewNop(), clock: systemClock{}})
	d := done[T]{q: p.q, batches: []batch[T]{serializedBatch[T](payload, 1, time.Time{})}}
	data := p.assemble(&d)
	if len(d.batches) == 0 {
		assert.Equal(t, int64(1), dropped, "an undecodable payload is counted")
		assert.Equal(t, formNone, data.form)
		return
	}
	require.Zero(t, dropped)
	require.Equal(t, formDecoded, data.form)
	again, err := ts.sig.marshal(data.data)
	require.NoError(t, err)
	decoded, err := ts.sig.unmarshal(again)
	require.NoError(t, err, "what a payload decodes to encodes to something that decodes")
	assert.Equal(t, ts.sig.items(data.data), ts.sig.items(decoded))
	d.delivered()
	p.refs().release(&data)
}
