// Package readinesstest records the readiness reports components make, for their tests.
package readinesstest

import (
	"strconv"
	"sync"

	"go.opentelemetry.io/collector/component"

	"github.com/tracegate/tracegate/internal/readiness"
)

// Board is an extension that records every report, in order.
type Board struct {
	component.StartFunc
	component.ShutdownFunc

	mu        sync.Mutex
	listeners []readiness.Listener
	buffers   []readiness.Buffer
}

var _ readiness.Board = (*Board)(nil)

func (b *Board) Listening(l readiness.Listener) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.listeners = append(b.listeners, l)
}

func (b *Board) Buffering(buf readiness.Buffer) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.buffers = append(b.buffers, buf)
}

// Listeners are the listener reports so far.
func (b *Board) Listeners() []readiness.Listener {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]readiness.Listener(nil), b.listeners...)
}

// Buffers are the buffer reports so far.
func (b *Board) Buffers() []readiness.Buffer {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]readiness.Buffer(nil), b.buffers...)
}

// Host is a host whose extensions are b (as "board") and the others given.
func (b *Board) Host(others ...component.Component) component.Host {
	exts := map[component.ID]component.Component{component.MustNewID("board"): b}
	for i, o := range others {
		exts[component.MustNewIDWithName("other", strconv.Itoa(i))] = o
	}
	return host(exts)
}

type host map[component.ID]component.Component

func (h host) GetExtensions() map[component.ID]component.Component { return h }
