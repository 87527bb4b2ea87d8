package bufferprocessor

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// TestShutdownTimeout: the collector shuts down without a deadline (SIGTERM). Deliveries that
// hang (an exporter retrying a dead Elasticsearch) must not hold the process beyond
// shutdown_timeout: with storage their records are saved and delivered after the restart, without
// storage they are counted as dropped.
func TestShutdownTimeout(t *testing.T) {
	for _, withStorage := range []bool{false, true} {
		t.Run(fmt.Sprintf("storage=%v", withStorage), func(t *testing.T) {
			dir := t.TempDir()
			cfg := overflowCfgIf(withStorage, dir)
			cfg.Threads, cfg.ShutdownTimeout = 2, 200*time.Millisecond
			rec := newRecorder()
			rec.gate = make(chan struct{}) // never opened: deliveries hang until cancelled
			h := start(t, cfg, rec, nil)
			for i := range 5 {
				require.NoError(t, h.p.ConsumeTraces(context.Background(), makeTraces(i)))
			}
			// No deadline from the collector: shutdown_timeout must end the hanging deliveries.
			require.NoError(t, shutdownReturns(context.Background(), t, h))
			if !withStorage {
				assert.Equal(t, int64(5), h.sum(t, "processor_buffer_dropped_spans", reasonShutdown))
				return
			}
			assert.Zero(t, h.sum(t, "processor_buffer_dropped_spans", reasonShutdown))
			// Restart on the same directory: every record is delivered.
			rec2 := newRecorder()
			h2 := start(t, cfg, rec2, nil)
			rec2.waitDistinct(t, 5)
			h2.shutdown(t)
			rec2.checkAll(t, rangeIDs(0, 5))
		})
	}
}

// ignoringConsumer blocks every delivery until release is closed, whatever its context says.
type ignoringConsumer struct {
	entered chan struct{}
	release chan struct{}
}

func (c *ignoringConsumer) Capabilities() consumer.Capabilities { return consumer.Capabilities{} }

func (c *ignoringConsumer) ConsumeTraces(context.Context, ptrace.Traces) error {
	select {
	case c.entered <- struct{}{}:
	default:
	}
	<-c.release
	return nil
}

// TestShutdownLeavesDeliveriesThatIgnoreCancellation: a next consumer that ignores cancellation
// holds its delivery past the deadline. Shutdown waits stuckGrace for it, then saves the memory
// queue to disk and returns anyway, counting the stuck delivery's memory-only spans as lost,
// instead of waiting until the process is killed with the whole memory queue unsaved.
func TestShutdownLeavesDeliveriesThatIgnoreCancellation(t *testing.T) {
	dir := t.TempDir()
	stuck := &ignoringConsumer{entered: make(chan struct{}, 1), release: make(chan struct{})}
	defer close(stuck.release) // lets the left-behind goroutine end before the leak check
	cfg := diskCfg(dir, ModeOverflow, FsyncNever)
	cfg.Threads, cfg.MaxBatchItems, cfg.ShutdownTimeout = 1, 0, 100*time.Millisecond
	h := start(t, cfg, stuck, nil)
	h.p.timing.stuckGrace = 100 * time.Millisecond
	require.NoError(t, h.p.ConsumeTraces(context.Background(), makeTraces(rangeIDs(0, 5)...)))
	<-stuck.entered // the first batch is in the stuck delivery
	for i := 1; i <= 3; i++ {
		require.NoError(t, h.p.ConsumeTraces(context.Background(), makeTraces(rangeIDs(i*10, 5)...)))
	}
	require.NoError(t, shutdownReturns(context.Background(), t, h))
	assert.Equal(t, int64(5), h.sum(t, "processor_buffer_dropped_spans", reasonShutdown), "the stuck delivery's spans")

	up := newRecorder()
	h2 := start(t, diskCfg(dir, ModeOverflow, FsyncNever), up, nil)
	up.waitDistinct(t, 15)
	h2.shutdown(t)
	up.checkAll(t, append(append(rangeIDs(10, 5), rangeIDs(20, 5)...), rangeIDs(30, 5)...))
}
