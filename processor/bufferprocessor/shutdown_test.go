package bufferprocessor

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestShutdownTimeout: the collector shuts down without a deadline (SIGTERM). Deliveries that
// hang (an exporter retrying a dead Elasticsearch) must not hold the process beyond
// shutdown_timeout: with storage their records are saved and delivered after the restart, without
// storage they are counted as dropped.
func TestShutdownTimeout(t *testing.T) {
	for _, withStorage := range []bool{false, true} {
		t.Run(fmt.Sprintf("storage=%v", withStorage), func(t *testing.T) {
			dir := t.TempDir()
			cfg := memCfg()
			if withStorage {
				cfg = diskCfg(dir, ModeOverflow, FsyncNever)
			}
			cfg.Threads, cfg.ShutdownTimeout = 2, 200*time.Millisecond
			rec := newRecorder()
			rec.gate = make(chan struct{}) // never opened: deliveries hang until cancelled
			h := start(t, cfg, rec, nil)
			for i := range 5 {
				require.NoError(t, h.p.ConsumeTraces(context.Background(), makeTraces(i)))
			}
			// No deadline from the collector: shutdown_timeout must end the hanging deliveries.
			require.NoError(t, shutdownReturns(t, h, context.Background()))
			if !withStorage {
				assert.Equal(t, int64(5), h.sum(t, "processor_buffer_dropped_spans", reasonShutdown))
				return
			}
			assert.Zero(t, h.sum(t, "processor_buffer_dropped_spans", reasonShutdown))
			// Restart on the same directory: every record is delivered.
			rec2 := newRecorder()
			h2 := start(t, cfg, rec2, nil)
			deadline := time.Now().Add(10 * time.Second)
			for rec2.distinct() < 5 {
				require.True(t, time.Now().Before(deadline), "replayed %d of 5 spans", rec2.distinct())
				time.Sleep(5 * time.Millisecond)
			}
			h2.shutdown(t)
			rec2.checkAll(t, rangeIDs(0, 5))
		})
	}
}
