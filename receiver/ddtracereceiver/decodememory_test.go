package ddtracereceiver

import (
	"context"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tinylib/msgp/msgp"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/tracegate/tracegate/receiver/ddtracereceiver/internal/payload"
	"github.com/tracegate/tracegate/receiver/ddtracereceiver/internal/translator"
)

// minimalV05 is the body that decodes and translates to the most memory per byte within the
// decoders' budget: v0.5 spans of 13 bytes (a 12-element array of one-byte values, every id set,
// empty meta and metrics), each becoming a pdata span with its attributes.
func minimalV05(spans int) []byte {
	b := msgp.AppendArrayHeader(nil, 2)
	b = msgp.AppendArrayHeader(b, 2)
	b = msgp.AppendString(b, "")
	b = msgp.AppendString(b, "a")
	b = msgp.AppendArrayHeader(b, 1)
	b = msgp.AppendArrayHeader(b, uint32(spans))
	for i := range spans {
		b = msgp.AppendArrayHeader(b, 12)
		// service, name, resource, trace id, span id, parent id, start, duration, error
		for _, v := range []uint64{1, 1, 1, 1, uint64(i%100 + 1), 0, 1, 1, 0} {
			b = msgp.AppendUint64(b, v)
		}
		b = msgp.AppendMapHeader(b, 0) // meta
		b = msgp.AppendMapHeader(b, 0) // metrics
		b = msgp.AppendUint64(b, 0)    // type
	}
	return b
}

// TestDecodeMemoryReservationCoversTheWorstBody: what a request reserves per byte of body
// (decodeExpansion) covers what the worst body decodes and translates to.
func TestDecodeMemoryReservationCoversTheWorstBody(t *testing.T) {
	body := minimalV05(200_000)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	p, err := payload.DecodeV05(body)
	require.NoError(t, err)
	res := translator.New(translator.Options{}).ToTraces([]payload.Payload{p}, translator.Headers{})
	runtime.ReadMemStats(&after)
	require.Equal(t, 200_000, res.Spans)
	perByte := float64(after.TotalAlloc-before.TotalAlloc) / float64(len(body))
	t.Logf("%d-byte body: %.1f bytes allocated per byte decoding and translating it", len(body), perByte)
	assert.Less(t, perByte, float64(decodeExpansion))
	assert.Greater(t, perByte, float64(decodeExpansion)/4, "the reservation is far above the worst case: lower decodeExpansion")
	runtime.KeepAlive(res)
	p.Release()
}

// blockingSink holds every ConsumeTraces until released.
type blockingSink struct {
	consumertest.TracesSink
	entered chan struct{}
	release chan struct{}
}

func (s *blockingSink) ConsumeTraces(ctx context.Context, td ptrace.Traces) error {
	s.entered <- struct{}{}
	<-s.release
	return s.TracesSink.ConsumeTraces(ctx, td)
}

// TestDecodeMemoryBudget: requests whose reservations exceed decode_memory_mib wait for room and
// are refused after queue_timeout (429 with the real-status header, counted as refused); room
// comes back when a request is done.
func TestDecodeMemoryBudget(t *testing.T) {
	cfg := createDefaultConfig().(*Config)
	cfg.DecodeMemoryMiB, cfg.QueueTimeout = 1, 50*time.Millisecond
	sink := &blockingSink{entered: make(chan struct{}, 4), release: make(chan struct{})}
	set := nopSettings()
	core, logs := observer.New(zap.WarnLevel)
	set.Logger = zap.New(core)
	r, err := newReceiver(cfg, set, sink)
	require.NoError(t, err)
	body := v04Body("m", 1, 100) // ~10 KB: 64 × its size is most of the 1 MiB budget
	require.Greater(t, int64(len(body))*decodeExpansion, int64(1<<20)/2)
	headers := map[string]string{"Datadog-Send-Real-Http-Status": "true"}

	first := make(chan int, 1)
	go func() { first <- serve(t, r, "PUT", "/v0.4/traces", body, headers).Code }()
	<-sink.entered // decoded, holding its reservation while the pipeline takes it

	second := serve(t, r, "PUT", "/v0.4/traces", body, headers)
	assert.Equal(t, 429, second.Code)
	refusals := logs.FilterMessage("trace payload refused").All()
	require.Len(t, refusals, 1)
	assert.Contains(t, refusals[0].ContextMap()["error"], "decode_memory_mib")

	close(sink.release)
	assert.Equal(t, 200, <-first)
	third := serve(t, r, "PUT", "/v0.4/traces", body, headers)
	assert.Equal(t, 200, third.Code, third.Body.String())
	assert.Equal(t, 200, sink.SpanCount())
}

// TestQueueTimeoutBoundsBothWaits: the wait for decode memory gets what the wait for a slot left
// of queue_timeout, not a fresh queue_timeout: a request spent in the slot queue is not held
// for decode memory beyond the tracer's patience. Here queue_timeout is an hour and the deadline
// already passed: with memory taken, the reservation is refused at once (a separate timeout
// would wait the hour; 30 s is a liveness bound), and with room, taken.
func TestQueueTimeoutBoundsBothWaits(t *testing.T) {
	cfg := createDefaultConfig().(*Config)
	cfg.DecodeMemoryMiB, cfg.QueueTimeout = 1, time.Hour
	r, err := newReceiver(cfg, nopSettings(), new(consumertest.TracesSink))
	require.NoError(t, err)
	spent := time.Now().Add(-time.Millisecond)
	all, ok := r.reserveDecodeMemory(context.Background(), 1<<20, spent)
	require.True(t, ok, "room is taken even past the deadline")
	done := make(chan bool, 1)
	go func() {
		_, ok := r.reserveDecodeMemory(context.Background(), 100, spent)
		done <- ok
	}()
	select {
	case ok := <-done:
		assert.False(t, ok, "no room, and no time left to wait for it")
	case <-time.After(30 * time.Second):
		t.Fatal("waited for decode memory past the request's queue deadline")
	}
	r.decodeMemory.Release(all)
}
