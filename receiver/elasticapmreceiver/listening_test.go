package elasticapmreceiver

import (
	"net"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/tracegate/tracegate/internal/readiness"
	"github.com/tracegate/tracegate/internal/readiness/readinesstest"
	"github.com/tracegate/tracegate/receiver/elasticapmreceiver/internal/metadata"
)

// TestStartTellsWhereItListens: Start logs and reports the address it bound (the port the kernel
// chose for port 0), and that is where it serves.
func TestStartTellsWhereItListens(t *testing.T) {
	core, logs := observer.New(zapcore.InfoLevel)
	board := &readinesstest.Board{}
	tr := startReceiverOn(t, board.Host(), zap.New(core), nil, nil)

	reported := board.Listeners()
	require.Len(t, reported, 1)
	addr := reported[0].Addr
	assert.Equal(t, readiness.Listener{ID: tr.r.set.ID, Addr: addr}, reported[0])
	assert.Equal(t, metadata.Type, reported[0].ID.Type())
	_, port, err := net.SplitHostPort(addr)
	require.NoError(t, err)
	assert.NotEqual(t, "0", port)
	assert.Equal(t, "http://"+addr, tr.url)
	assert.Equal(t, 200, tr.do(t, "GET", "/", nil, nil).status, "it serves where it says")

	lines := logs.FilterMessage("elasticapm receiver listening").All()
	require.Len(t, lines, 1)
	assert.Equal(t, addr, lines[0].ContextMap()["endpoint"])
}
