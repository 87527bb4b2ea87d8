package sharedcomponent

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/receiver"
	"go.opentelemetry.io/collector/receiver/receivertest"
)

type counting struct{ starts, stops int }

func (c *counting) Start(context.Context, component.Host) error { c.starts++; return nil }
func (c *counting) Shutdown(context.Context) error              { c.stops++; return nil }

func TestOneInstancePerKey(t *testing.T) {
	var m Map[string, *counting]
	created := 0
	create := func() (*counting, error) { created++; return &counting{}, nil }
	a, err := m.LoadOrStore("x", create)
	require.NoError(t, err)
	b, err := m.LoadOrStore("x", create)
	require.NoError(t, err)
	other, err := m.LoadOrStore("y", create)
	require.NoError(t, err)
	assert.Same(t, a, b)
	assert.NotSame(t, a, other)
	assert.Equal(t, 2, created)

	for range 3 {
		require.NoError(t, a.Start(context.Background(), componenttest.NewNopHost()))
	}
	for range 3 {
		require.NoError(t, b.Shutdown(context.Background()))
	}
	assert.Equal(t, 1, a.Unwrap.starts)
	assert.Equal(t, 1, a.Unwrap.stops)

	// After a shutdown the key is free again: a reload builds a new instance.
	c, err := m.LoadOrStore("x", create)
	require.NoError(t, err)
	assert.NotSame(t, a, c)
}

func TestCreateErrorIsNotStored(t *testing.T) {
	var m Map[string, *counting]
	_, err := m.LoadOrStore("x", func() (*counting, error) { return nil, errors.New("boom") })
	require.EqualError(t, err, "boom")
	c, err := m.LoadOrStore("x", func() (*counting, error) { return &counting{}, nil })
	require.NoError(t, err)
	assert.NotNil(t, c.Unwrap)
}

// TestRegistryLastReleaseForgets: holders of a key share one value until the last of them
// releases it; a release counts once however often it is called.
func TestRegistryLastReleaseForgets(t *testing.T) {
	var r Registry[string, *int]
	made := 0
	create := func() (*int, error) { made++; v := made; return &v, nil }
	a, releaseA, err := r.Acquire("x", create)
	require.NoError(t, err)
	b, releaseB, err := r.Acquire("x", create)
	require.NoError(t, err)
	other, releaseOther, err := r.Acquire("y", create)
	require.NoError(t, err)
	assert.Same(t, a, b)
	assert.NotSame(t, a, other)
	assert.Equal(t, 2, made)

	releaseA()
	releaseA()
	c, releaseC, err := r.Acquire("x", create)
	require.NoError(t, err)
	assert.Same(t, a, c, "b still holds x")
	releaseB()
	releaseC()
	releaseOther()
	assert.Empty(t, r.m)

	d, _, err := r.Acquire("x", create)
	require.NoError(t, err)
	assert.NotSame(t, a, d, "x was forgotten: a new value")
}

func TestRegistryCreateErrorIsNotStored(t *testing.T) {
	var r Registry[string, *int]
	_, release, err := r.Acquire("x", func() (*int, error) { return nil, errors.New("boom") })
	require.EqualError(t, err, "boom")
	assert.Nil(t, release)
	assert.Empty(t, r.m)
}

func TestRegistryShare(t *testing.T) {
	var r Registry[string, *int]
	create := func() *int { return new(int) }
	a, releaseA := r.Share("x", create)
	b, releaseB := r.Share("x", create)
	assert.Same(t, a, b)
	releaseA()
	releaseB()
	assert.Empty(t, r.m)
}

// signalsReceiver records what Receivers hands it.
type signalsReceiver struct {
	component.StartFunc
	component.ShutdownFunc
	next Signals
}

func (r *signalsReceiver) NextConsumers() *Signals { return &r.next }

type receiverConfig struct{ name string }

func TestReceiversShareOneInstanceForAllSignals(t *testing.T) {
	made := 0
	rs := Receivers[receiverConfig, *signalsReceiver]{New: func(*receiverConfig, receiver.Settings) (*signalsReceiver, error) {
		made++
		return &signalsReceiver{}, nil
	}}
	set := receivertest.NewNopSettings(component.MustNewType("shared"))
	cfg := &receiverConfig{name: "a"}
	traces, metrics, logs := new(consumertest.TracesSink), new(consumertest.MetricsSink), new(consumertest.LogsSink)
	tr, err := rs.CreateTraces(context.Background(), set, cfg, traces)
	require.NoError(t, err)
	mr, err := rs.CreateMetrics(context.Background(), set, cfg, metrics)
	require.NoError(t, err)
	lr, err := rs.CreateLogs(context.Background(), set, cfg, logs)
	require.NoError(t, err)
	assert.Equal(t, 1, made, "one receiver for the three signals")
	assert.Same(t, tr, mr)
	assert.Same(t, tr, lr)
	next := tr.(*Component[*signalsReceiver]).Unwrap.next
	assert.Equal(t, Signals{Traces: traces, Metrics: metrics, Logs: logs}, next)

	other, err := rs.CreateTraces(context.Background(), set, &receiverConfig{name: "b"}, traces)
	require.NoError(t, err)
	assert.NotSame(t, tr, other, "another configuration, another receiver")
	require.NoError(t, tr.Shutdown(context.Background()))
	again, err := rs.CreateTraces(context.Background(), set, cfg, traces)
	require.NoError(t, err)
	assert.NotSame(t, tr, again, "after its shutdown a new pipeline graph gets a new one")
}

func TestReceiversPassTheError(t *testing.T) {
	rs := Receivers[receiverConfig, *signalsReceiver]{New: func(*receiverConfig, receiver.Settings) (*signalsReceiver, error) {
		return nil, errors.New("bad endpoint")
	}}
	_, err := rs.CreateLogs(context.Background(), receivertest.NewNopSettings(component.MustNewType("shared")), &receiverConfig{}, new(consumertest.LogsSink))
	require.EqualError(t, err, "bad endpoint")
}
