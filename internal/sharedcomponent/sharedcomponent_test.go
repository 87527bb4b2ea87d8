package sharedcomponent

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
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
