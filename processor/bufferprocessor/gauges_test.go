package bufferprocessor

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
)

// gauge returns a gauge's value (0 when it has no data point yet).
func (h *harness) gauge(t *testing.T, name string) float64 {
	t.Helper()
	m, err := h.tel.GetMetric("otelcol_" + name)
	require.NoError(t, err, "gauge %s", name)
	switch g := m.Data.(type) {
	case metricdata.Gauge[int64]:
		if len(g.DataPoints) > 0 {
			return float64(g.DataPoints[0].Value)
		}
	case metricdata.Gauge[float64]:
		if len(g.DataPoints) > 0 {
			return g.DataPoints[0].Value
		}
	}
	return 0
}

// TestGaugesAddUp: while the next consumer fails, what the buffer holds is in memory, on disk or
// in a delivery being retried, and the three gauges add up to every span acknowledged; the oldest
// held span's age is the time since it was accepted; once deliveries succeed everything reads 0.
func TestGaugesAddUp(t *testing.T) {
	for _, mode := range []string{"", ModeOverflow, ModeWriteAhead} {
		t.Run("storage="+mode, func(t *testing.T) {
			cfg := memCfg()
			cfg.QueueSize = 20 // memory only: room for every batch
			cfg.MaxBatchItems = 100
			if mode != "" {
				cfg = diskCfg(t.TempDir(), mode, FsyncNever)
				cfg.QueueSize = 4 // the rest overflows to disk
				cfg.MaxBatchItems = 100
			}
			rec := newRecorder()
			down := make(chan struct{})
			rec.failFn = func(int) error {
				select {
				case <-down:
					return nil
				default:
					return errDown
				}
			}
			clk := newFakeClock()
			h := start(t, cfg, rec, nil, withClock(clk))
			const batches, per = 10, 100
			for i := range batches {
				require.NoError(t, h.p.ConsumeTraces(context.Background(), makeTraces(rangeIDs(i*per, per)...)))
			}
			held := func() float64 {
				return h.gauge(t, "processor_buffer_memory_spans") + h.gauge(t, "processor_buffer_in_flight_spans") +
					diskSpans(t, h, mode)
			}
			// Once every worker waits to retry a failing delivery, nothing moves until the clock
			// does: the gauges, read one after the other, see the same buffer.
			clk.waitTimers(t, cfg.Threads)
			assert.InDelta(t, batches*per, held(), 0, "memory + disk + in flight = what was acknowledged")
			assert.Positive(t, h.gauge(t, "processor_buffer_retrying_spans"))
			assert.Zero(t, h.gauge(t, "processor_buffer_oldest_age"), "the clock has not moved since the spans came")
			clk.Advance(50 * time.Millisecond) // past every backoff: one probe fails, the workers wait again
			clk.waitTimers(t, cfg.Threads)
			assert.InDelta(t, batches*per, held(), 0)
			assert.InDelta(t, 0.05, h.gauge(t, "processor_buffer_oldest_age"), 1e-9, "seconds since the oldest span came")

			close(down)
			clk.Advance(50 * time.Millisecond) // the next probe succeeds and wakes every delivery
			rec.waitDistinct(t, batches*per)
			require.Eventually(t, func() bool { return held() == 0 && h.gauge(t, "processor_buffer_oldest_age") == 0 },
				5*time.Second, 5*time.Millisecond, "everything delivered: nothing held")
			h.shutdown(t)
		})
	}
}

func diskSpans(t *testing.T, h *harness, mode string) float64 {
	if mode == "" {
		return 0
	}
	return h.gauge(t, "processor_buffer_disk_spans")
}
