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
