// Package sharedcomponent lets one component instance serve several signals: the collector creates
// a receiver once per signal (CreateTraces, CreateLogs, ...), but one server on one port must take
// them all, as contrib's otlpreceiver does with its internal package of the same name.
package sharedcomponent

import (
	"context"
	"sync"

	"go.opentelemetry.io/collector/component"
)

// Map holds the shared instances by key (a component id and its configuration).
type Map[K comparable, V component.Component] struct {
	mu sync.Mutex
	m  map[K]*Component[V]
}

// LoadOrStore returns the instance for key, creating it with create the first time.
func (m *Map[K, V]) LoadOrStore(key K, create func() (V, error)) (*Component[V], error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if c, ok := m.m[key]; ok {
		return c, nil
	}
	v, err := create()
	if err != nil {
		return nil, err
	}
	c := &Component[V]{Unwrap: v, forget: func() {
		m.mu.Lock()
		delete(m.m, key)
		m.mu.Unlock()
	}}
	if m.m == nil {
		m.m = map[K]*Component[V]{}
	}
	m.m[key] = c
	return c, nil
}

// Component is a shared instance: started by the first Start, shut down by the first Shutdown,
// which also forgets it, so that a new pipeline graph (a reload) builds a new one.
type Component[V component.Component] struct {
	Unwrap V

	startOnce, stopOnce sync.Once
	startErr, stopErr   error
	forget              func()
}

// Start starts the instance once.
func (c *Component[V]) Start(ctx context.Context, host component.Host) error {
	c.startOnce.Do(func() { c.startErr = c.Unwrap.Start(ctx, host) })
	return c.startErr
}

// Shutdown shuts the instance down once and forgets it.
func (c *Component[V]) Shutdown(ctx context.Context) error {
	c.stopOnce.Do(func() {
		c.forget()
		c.stopErr = c.Unwrap.Shutdown(ctx)
	})
	return c.stopErr
}
