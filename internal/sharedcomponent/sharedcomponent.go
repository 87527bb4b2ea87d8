// Package sharedcomponent shares one instance among the components the collector creates
// separately: a receiver once per signal (CreateTraces, CreateLogs, ...), a connector once per
// pair of pipelines, a processor once per pipeline. One server on one port must take every
// signal (as contrib's otlpreceiver does with its internal package of the same name), one store
// must serve every side of a connector, and the buffers of one directory share its capacity.
package sharedcomponent

import (
	"context"
	"sync"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/receiver"
)

// Registry holds one value per key for the holders that acquire it: the first holder's create
// makes it, later holders share it, and it is forgotten when the last holder releases it, so that
// a new pipeline graph (a reload) makes a new one. The zero Registry is ready to use.
type Registry[K comparable, V any] struct {
	mu sync.Mutex
	m  map[K]*entry[V]
}

type entry[V any] struct {
	v       V
	holders int
}

// Acquire returns key's value, made by create when no holder has it (an error stores nothing),
// and the function that releases this holder's share (once, however often it is called).
func (r *Registry[K, V]) Acquire(key K, create func() (V, error)) (V, func(), error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	e := r.m[key]
	if e == nil {
		v, err := create()
		if err != nil {
			return v, nil, err
		}
		e = r.store(key, v)
	}
	return e.v, r.hold(key, e), nil
}

// Share is Acquire for a value whose making cannot fail.
func (r *Registry[K, V]) Share(key K, create func() V) (V, func()) {
	r.mu.Lock()
	defer r.mu.Unlock()
	e := r.m[key]
	if e == nil {
		e = r.store(key, create())
	}
	return e.v, r.hold(key, e)
}

func (r *Registry[K, V]) store(key K, v V) *entry[V] {
	if r.m == nil {
		r.m = map[K]*entry[V]{}
	}
	e := &entry[V]{v: v}
	r.m[key] = e
	return e
}

// hold counts a holder of e (under mu) and returns its release.
func (r *Registry[K, V]) hold(key K, e *entry[V]) func() {
	e.holders++
	var once sync.Once
	return func() {
		once.Do(func() {
			r.mu.Lock()
			defer r.mu.Unlock()
			e.holders--
			if e.holders == 0 {
				delete(r.m, key)
			}
		})
	}
}

// Map holds the shared component instances by key (a component id and its configuration).
type Map[K comparable, V component.Component] struct {
	r Registry[K, *Component[V]]
}

// LoadOrStore returns the instance for key, creating it with create the first time.
func (m *Map[K, V]) LoadOrStore(key K, create func() (V, error)) (*Component[V], error) {
	c, release, err := m.r.Acquire(key, func() (*Component[V], error) {
		v, err := create()
		if err != nil {
			return nil, err
		}
		return &Component[V]{Unwrap: v}, nil
	})
	if err != nil {
		return nil, err
	}
	// The instance keeps the first share for every signal it serves (the others are given back
	// at once), so its first Shutdown forgets it.
	if !c.keep(release) {
		release()
	}
	return c, nil
}

// Component is a shared instance: started by the first Start, shut down by the first Shutdown,
// which also forgets it, so that a new pipeline graph (a reload) builds a new one.
type Component[V component.Component] struct {
	Unwrap V

	startOnce, stopOnce, keepOnce sync.Once
	startErr, stopErr             error
	forget                        func()
}

func (c *Component[V]) keep(release func()) (kept bool) {
	c.keepOnce.Do(func() { c.forget, kept = release, true })
	return kept
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

// Signals are the next consumers of a receiver that serves every signal on one server; a signal
// no pipeline takes from it stays nil.
type Signals struct {
	Traces  consumer.Traces
	Metrics consumer.Metrics
	Logs    consumer.Logs
}

// SignalsReceiver is a receiver that serves every signal on one server.
type SignalsReceiver interface {
	component.Component
	// NextConsumers are where its signals go, filled in as the collector creates it per signal.
	NextConsumers() *Signals
}

// Receivers builds a SignalsReceiver once per component id and configuration, whichever signals
// use it, and hands it each signal's next consumer: its Create* methods are the factory's.
type Receivers[C any, V SignalsReceiver] struct {
	// New makes the receiver from its configuration.
	New func(*C, receiver.Settings) (V, error)

	m Map[receiverKey[C], V]
}

type receiverKey[C any] struct {
	id  component.ID
	cfg *C
}

func (rs *Receivers[C, V]) shared(set receiver.Settings, cfg component.Config) (*Component[V], error) {
	c := cfg.(*C)
	return rs.m.LoadOrStore(receiverKey[C]{id: set.ID, cfg: c}, func() (V, error) { return rs.New(c, set) })
}

// CreateTraces is the factory's traces receiver: the shared one, taking traces to next.
func (rs *Receivers[C, V]) CreateTraces(_ context.Context, set receiver.Settings, cfg component.Config, next consumer.Traces) (receiver.Traces, error) {
	r, err := rs.shared(set, cfg)
	if err != nil {
		return nil, err
	}
	r.Unwrap.NextConsumers().Traces = next
	return r, nil
}

// CreateMetrics is the factory's metrics receiver: the shared one, taking metrics to next.
func (rs *Receivers[C, V]) CreateMetrics(_ context.Context, set receiver.Settings, cfg component.Config, next consumer.Metrics) (receiver.Metrics, error) {
	r, err := rs.shared(set, cfg)
	if err != nil {
		return nil, err
	}
	r.Unwrap.NextConsumers().Metrics = next
	return r, nil
}

// CreateLogs is the factory's logs receiver: the shared one, taking logs to next.
func (rs *Receivers[C, V]) CreateLogs(_ context.Context, set receiver.Settings, cfg component.Config, next consumer.Logs) (receiver.Logs, error) {
	r, err := rs.shared(set, cfg)
	if err != nil {
		return nil, err
	}
	r.Unwrap.NextConsumers().Logs = next
	return r, nil
}
