package bufferprocessor

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/featuregate"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/xpdata/pref"
)

// pipelineOwned wraps a consumer as the collector's service wraps every processor and exporter
// (service/internal/refconsumer): the first wrapper a request passes marks it as owned by the
// pipeline and releases it when ConsumeTraces returns. With pdata.useProtoPooling, releasing
// returns its objects to pdata's pools, where the next request's data comes from.
type pipelineOwned struct{ next consumer.Traces }

func (c pipelineOwned) Capabilities() consumer.Capabilities { return c.next.Capabilities() }

func (c pipelineOwned) ConsumeTraces(ctx context.Context, td ptrace.Traces) error {
	if pref.MarkPipelineOwnedTraces(td) {
		defer pref.UnrefTraces(td)
	}
	return c.next.ConsumeTraces(ctx, td)
}

// useProtoPooling turns the collector-wide pdata.useProtoPooling feature gate on for one test.
// Not parallel: the gate is global.
func useProtoPooling(t *testing.T) {
	const gate = "pdata.useProtoPooling"
	require.NoError(t, featuregate.GlobalRegistry().Set(gate, true))
	t.Cleanup(func() { require.NoError(t, featuregate.GlobalRegistry().Set(gate, false)) })
}

// TestPooledDataSurvivesTheBuffer: with the pooling gate on, the pipeline recycles a request's
// memory as soon as the buffer's ConsumeTraces returns, and the exporter's wrapper recycles a
// batch it is the first to own after one attempt. The buffer keeps batches past both (queued, and
// retried), so it must hold references: without them, queued spans are overwritten by later
// requests and a retry sends recycled memory.
func TestPooledDataSurvivesTheBuffer(t *testing.T) {
	const requests, perRequest = 300, 3
	for _, tc := range []struct {
		name string
		cfg  func(dir string) *Config
	}{
		{"memory, one request per delivery", func(string) *Config {
			cfg := memCfg()
			cfg.QueueSize, cfg.MaxBatchItems = requests, 0
			return cfg
		}},
		{"memory, merged deliveries", func(string) *Config {
			cfg := memCfg()
			cfg.QueueSize = requests
			return cfg
		}},
		{"overflow to disk", func(dir string) *Config {
			cfg := diskCfg(dir, ModeOverflow, FsyncNever)
			cfg.QueueSize = 2
			return cfg
		}},
		{"write_ahead", func(dir string) *Config { return diskCfg(dir, ModeWriteAhead, FsyncNever) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			useProtoPooling(t)
			rec := newRecorder()
			// Every delivery's first attempt fails: the retry must send what the first one did.
			rec.failFn = func(call int) error {
				if call%2 == 1 {
					return errDown
				}
				return nil
			}
			h := start(t, tc.cfg(t.TempDir()), pipelineOwned{rec}, nil)
			in := pipelineOwned{h.p}
			for i := range requests {
				require.NoError(t, in.ConsumeTraces(context.Background(), makeTraces(rangeIDs(i*perRequest, perRequest)...)))
			}
			rec.waitDistinct(t, requests*perRequest)
			h.shutdown(t)
			assert.Zero(t, rec.checkAll(t, rangeIDs(0, requests*perRequest)), "duplicates")
			assert.Equal(t, requests*perRequest, rec.distinct(), "spans that were never sent")
		})
	}
}

// TestPooledDataDroppedRefusedAndDrained covers the other ways a batch leaves the buffer with the
// pooling gate on: dropped by drop_oldest, refused when full, and written to disk at the shutdown
// deadline (then replayed). A reference given back twice would panic ("Cannot unref freed data");
// one given back too early would show as a span that was never sent, or a lost one.
func TestPooledDataDroppedRefusedAndDrained(t *testing.T) {
	const requests, perRequest = 50, 3
	useProtoPooling(t)
	send := func(t *testing.T, in consumer.Traces) (refused int) {
		for i := range requests {
			if err := in.ConsumeTraces(context.Background(), makeTraces(rangeIDs(i*perRequest, perRequest)...)); err != nil {
				require.ErrorIs(t, err, ErrFull)
				refused++
			}
		}
		return refused
	}

	for _, whenFull := range []string{WhenFullDropOldest, WhenFullRefuse} {
		t.Run(whenFull, func(t *testing.T) {
			rec := newRecorder()
			rec.gate = make(chan struct{})
			cfg := memCfg()
			cfg.QueueSize, cfg.Threads, cfg.MaxBatchItems, cfg.WhenFull = 5, 1, 0, whenFull
			h := start(t, cfg, pipelineOwned{rec}, nil)
			refused := send(t, pipelineOwned{h.p})
			close(rec.gate)
			h.shutdown(t)
			dropped := h.sum(t, "processor_buffer_dropped_spans", reasonFull)
			assert.Positive(t, dropped+int64(refused))
			assert.Equal(t, int64(requests*perRequest), int64(rec.distinct())+dropped+int64(refused*perRequest))
			rec.mu.Lock()
			defer rec.mu.Unlock()
			for name, n := range rec.seen {
				id, err := strconv.Atoi(name)
				require.NoError(t, err, "a span that was never sent: %q", name)
				assert.Less(t, id, requests*perRequest)
				assert.Equal(t, 1, n, "span %d delivered more than once", id)
			}
		})
	}

	t.Run("drained to disk at the shutdown deadline", func(t *testing.T) {
		dir := t.TempDir()
		cfg := diskCfg(dir, ModeOverflow, FsyncNever)
		cfg.QueueSize, cfg.ShutdownTimeout = requests, 200*time.Millisecond
		hang := consumerFunc(func(ctx context.Context, _ ptrace.Traces) error {
			<-ctx.Done()
			return ctx.Err()
		})
		h := start(t, cfg, pipelineOwned{hang}, nil)
		require.Zero(t, send(t, pipelineOwned{h.p}))
		require.NoError(t, h.p.Shutdown(context.Background()))
		assert.Zero(t, h.sum(t, "processor_buffer_dropped_spans", ""))

		rec := newRecorder()
		h2 := start(t, cfg, pipelineOwned{rec}, nil)
		rec.waitDistinct(t, requests*perRequest)
		h2.shutdown(t)
		assert.Zero(t, rec.checkAll(t, rangeIDs(0, requests*perRequest)), "duplicates")
		assert.Equal(t, requests*perRequest, rec.distinct())
	})
}
