package bufferprocessor

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"
)

// TestStateLogOutage: an outage is one line when it starts, at most one a minute while it lasts,
// and one when deliveries succeed again, each with what the buffer holds.
func TestStateLogOutage(t *testing.T) {
	core, logs := observer.New(zapcore.InfoLevel)
	s := newStateLog(zap.New(core), func() heldItems { return heldItems{field: "spans", memory: 10, disk: 20, inFlight: 30} })
	t0 := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	down := errors.New("connection refused")
	for _, sec := range []int{0, 1, 5, 30, 59, 61, 90, 120, 121, 130} {
		s.failed(down, 2*time.Second, t0.Add(time.Duration(sec)*time.Second))
	}
	s.succeeded(t0.Add(140 * time.Second))
	s.succeeded(t0.Add(141 * time.Second)) // already working: no line

	var got []string
	for _, e := range logs.All() {
		f := e.ContextMap()
		require.Equal(t, zapcore.WarnLevel, e.Level, e.Message)
		assert.Equal(t, []any{int64(10), int64(20), int64(30)}, []any{f["memory_spans"], f["disk_spans"], f["in_flight_spans"]}, e.Message)
		got = append(got, fmt.Sprintf("%s|%v|%v|%v", e.Message[:30], f["failing_for"], f["failed_for"], f["failed_attempts"]))
	}
	assert.Equal(t, []string{
		"Deliveries to Elasticsearch ar|<nil>|<nil>|<nil>",
		"Deliveries to Elasticsearch st|1m1s|<nil>|6",
		"Deliveries to Elasticsearch st|2m1s|<nil>|9",
		"Deliveries to Elasticsearch su|<nil>|2m20s|10",
	}, got)
	first := logs.All()[0].ContextMap()
	assert.Equal(t, "connection refused", first["error"])
	assert.Equal(t, 2*time.Second, first["next_retry_in"])

	// A second outage starts afresh.
	s.failed(down, time.Second, t0.Add(200*time.Second))
	assert.Equal(t, 5, logs.Len())
}

// TestStateLogFull: refusals because the buffer is full are one line a minute with what was
// refused since the last; other refusals (shutting down) write nothing.
func TestStateLogFull(t *testing.T) {
	core, logs := observer.New(zapcore.InfoLevel)
	s := newStateLog(zap.New(core), func() heldItems { return heldItems{field: "spans", memory: 1} })
	t0 := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	for sec := range 130 {
		s.refusedFull(100, fmt.Errorf("queue: %w", ErrFull), t0.Add(time.Duration(sec)*time.Second))
		s.refusedFull(100, ErrShuttingDown, t0.Add(time.Duration(sec)*time.Second))
	}
	var refused []any
	for _, e := range logs.All() {
		refused = append(refused, e.ContextMap()["refused_spans"])
	}
	assert.Equal(t, []any{int64(100), int64(6000), int64(6000)}, refused, "at 0 s, 60 s and 120 s")
}
