package readiness_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"

	"github.com/tracegate/tracegate/internal/readiness"
	"github.com/tracegate/tracegate/internal/readiness/readinesstest"
)

type other struct {
	component.StartFunc
	component.ShutdownFunc
}

// TestReportsReachEveryBoard: a report reaches each extension that is a Board, and only those.
func TestReportsReachEveryBoard(t *testing.T) {
	a, b := &readinesstest.Board{}, &readinesstest.Board{}
	h := a.Host(b, other{})
	l := readiness.Listener{ID: component.MustNewIDWithName("ddtrace", "unix"), Addr: "/var/run/datadog/apm.socket"}
	buf := readiness.Buffer{ID: component.MustNewID("buffer"), Mode: "write_ahead", Directory: "/var/lib/tracegate/buffer"}
	readiness.ReportListener(h, l)
	readiness.ReportBuffer(h, buf)
	for _, got := range []*readinesstest.Board{a, b} {
		assert.Equal(t, []readiness.Listener{l}, got.Listeners())
		assert.Equal(t, []readiness.Buffer{buf}, got.Buffers())
	}
}

// TestNoBoardNoReport: a host without a Board takes a report as nothing.
func TestNoBoardNoReport(t *testing.T) {
	assert.NotPanics(t, func() {
		readiness.ReportListener(componenttest.NewNopHost(), readiness.Listener{ID: component.MustNewID("ddtrace"), Addr: "127.0.0.1:8126"})
		readiness.ReportBuffer(componenttest.NewNopHost(), readiness.Buffer{ID: component.MustNewID("buffer"), Mode: readiness.ModeMemory})
	})
}
