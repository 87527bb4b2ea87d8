package ddtracereceiver

import (
	"context"
	"net"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/config/confignet"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/receiver/receivertest"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/tracegate/tracegate/internal/readiness"
	"github.com/tracegate/tracegate/internal/readiness/readinesstest"
	"github.com/tracegate/tracegate/receiver/ddtracereceiver/internal/metadata"
)

// TestStartTellsWhereItListens: Start logs and reports the address it bound (the port the kernel
// chose for port 0, a Unix socket's path), and that is where it serves.
func TestStartTellsWhereItListens(t *testing.T) {
	socket := filepath.Join(t.TempDir(), "apm.socket")
	for _, tt := range []struct{ transport, endpoint string }{
		{"tcp", "127.0.0.1:0"},
		{"unix", socket},
	} {
		t.Run(tt.transport, func(t *testing.T) {
			cfg := createDefaultConfig().(*Config)
			cfg.NetAddr.Endpoint = tt.endpoint
			cfg.NetAddr.Transport = confignet.TransportType(tt.transport)
			core, logs := observer.New(zapcore.InfoLevel)
			set := receivertest.NewNopSettings(metadata.Type)
			set.Logger = zap.New(core)
			r, err := newReceiver(cfg, set, new(consumertest.TracesSink))
			require.NoError(t, err)
			board := &readinesstest.Board{}
			require.NoError(t, r.Start(context.Background(), board.Host()))
			t.Cleanup(func() { require.NoError(t, r.Shutdown(context.Background())) })

			reported := board.Listeners()
			require.Len(t, reported, 1)
			addr := reported[0].Addr
			assert.Equal(t, readiness.Listener{ID: set.ID, Addr: addr}, reported[0])
			if tt.transport == "tcp" {
				_, port, err := net.SplitHostPort(addr)
				require.NoError(t, err)
				assert.NotEqual(t, "0", port)
			} else {
				assert.Equal(t, socket, addr)
			}
			conn, err := net.Dial(tt.transport, addr)
			require.NoError(t, err, "it serves where it says")
			require.NoError(t, conn.Close())

			lines := logs.FilterMessage("ddtrace receiver listening").All()
			require.Len(t, lines, 1)
			assert.Equal(t, addr, lines[0].ContextMap()["endpoint"])
		})
	}
}
