package bufferprocessor

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/exporter"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/tracegate/tracegate/internal/testbed/esexportertest"
	"github.com/tracegate/tracegate/internal/testbed/esstandin"
)

func startStandin(t *testing.T) *esstandin.Server {
	return esexportertest.StartStandin(t, esstandin.Options{})
}

func newESExporter(t *testing.T, url string, settings map[string]any) exporter.Traces {
	return esexportertest.NewExporter(t, url, settings)
}

// TestElasticsearchExporterErrorPropagation proves which v0.148.0 exporter settings let a flush
// error reach the caller of ConsumeTraces (the buffer), with Elasticsearch refusing connections.
func TestElasticsearchExporterErrorPropagation(t *testing.T) {
	tests := []struct {
		name      string
		settings  map[string]any
		wantError bool
	}{
		{name: "defaults: queued, error only logged, data dropped", settings: nil, wantError: false},
		{name: "sending_queue disabled: synchronous flush", settings: map[string]any{"sending_queue": map[string]any{"enabled": false}}, wantError: true},
		{name: "wait_for_result: waits for the batch flush", settings: map[string]any{"sending_queue": map[string]any{
			"wait_for_result": true, "batch": map[string]any{"flush_timeout": "50ms"},
		}}, wantError: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			es := startStandin(t)
			exp := newESExporter(t, es.URL(), tt.settings)
			require.NoError(t, es.SetRefusing(true))
			err := exp.ConsumeTraces(context.Background(), makeTraces(1, 2, 3))
			if tt.wantError {
				require.Error(t, err)
			} else {
				require.NoError(t, err)
			}
			require.NoError(t, es.SetRefusing(false))
			// Once Elasticsearch is back, the synchronous exporter succeeds and its documents arrive.
			if tt.wantError {
				require.NoError(t, exp.ConsumeTraces(context.Background(), makeTraces(4)))
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				defer cancel()
				require.NoError(t, es.WaitForDocuments(ctx, 1))
			}
		})
	}
}

// failureCounter passes deliveries to the exporter and counts those that failed.
type failureCounter struct {
	next     consumer.Traces
	failures atomic.Int64
	events   progress // bumped at every failure
}

func (c *failureCounter) Capabilities() consumer.Capabilities { return c.next.Capabilities() }

func (c *failureCounter) ConsumeTraces(ctx context.Context, td ptrace.Traces) error {
	err := c.next.ConsumeTraces(ctx, td)
	if err != nil {
		c.failures.Add(1)
		c.events.bump()
	}
	return err
}

// TestBufferAheadOfElasticsearchLosesNothing: buffer + exporter (sending_queue disabled); the
// stand-in refuses connections for a while and comes back: every acknowledged span arrives.
func TestBufferAheadOfElasticsearchLosesNothing(t *testing.T) {
	for _, mode := range []string{"memory", ModeWriteAhead} {
		t.Run(mode, func(t *testing.T) {
			es := startStandin(t)
			exp := newESExporter(t, es.URL(), map[string]any{"sending_queue": map[string]any{"enabled": false}})
			cfg := memCfg()
			if mode != "memory" {
				cfg = diskCfg(t.TempDir(), mode, FsyncInterval)
			}
			cfg.Retry = RetryConfig{InitialInterval: 10 * time.Millisecond, MaxInterval: 50 * time.Millisecond}
			cfg.Threads, cfg.MaxBatchItems = 4, 500
			failing := &failureCounter{next: exp}
			h := start(t, cfg, failing, nil)

			require.NoError(t, es.SetRefusing(true))
			const batches, per = 40, 25
			for i := range batches {
				require.NoError(t, h.p.ConsumeTraces(context.Background(), makeTraces(rangeIDs(i*per, per)...)))
			}
			failing.events.waitFor(t, "failed deliveries while Elasticsearch is down", func() bool { return failing.failures.Load() >= 5 })
			require.NoError(t, es.SetRefusing(false))

			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			require.NoError(t, es.WaitForDocuments(ctx, batches*per))
			h.shutdown(t)
			st := es.Stats()
			assert.Equal(t, batches*per, st.Documents)
			assert.Zero(t, st.DuplicateSpans)
			assert.Zero(t, h.sum(t, "processor_buffer_dropped_spans", ""))
		})
	}
}
