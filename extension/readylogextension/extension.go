package readylogextension

import (
	"context"
	"slices"
	"strings"
	"sync"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/extension/extensioncapabilities"
	"go.uber.org/zap"

	"github.com/tracegate/tracegate/internal/readiness"
)

// readyLog takes what the components report at Start (the receivers' bound addresses, the
// buffers' modes) and the collector's configuration (NotifyConfig comes before the pipelines
// start; it is read for the receivers that report nothing), and writes the ready line when the
// service reports every pipeline started (Ready).
type readyLog struct {
	component.StartFunc
	component.ShutdownFunc
	logger *zap.Logger
	level  string
	gc     string // the garbage collector's settings, as gcdefaults decided them

	mu        sync.Mutex
	conf      map[string]any
	listeners map[component.ID]string // the address each receiver bound
	buffers   map[component.ID]readiness.Buffer
}

var (
	_ extensioncapabilities.ConfigWatcher   = (*readyLog)(nil)
	_ extensioncapabilities.PipelineWatcher = (*readyLog)(nil)
	_ readiness.Board                       = (*readyLog)(nil)
)

func newReadyLog(logger *zap.Logger, level string) *readyLog {
	return &readyLog{
		logger: logger, level: level,
		listeners: map[component.ID]string{}, buffers: map[component.ID]readiness.Buffer{},
	}
}

func (r *readyLog) NotifyConfig(_ context.Context, conf *confmap.Conf) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.conf = conf.ToStringMap()
	return nil
}

// Listening takes a receiver's report from its Start.
func (r *readyLog) Listening(l readiness.Listener) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.listeners[l.ID] = l.Addr
}

// Buffering takes a buffer's report from its Start (one per signal, all alike).
func (r *readyLog) Buffering(b readiness.Buffer) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.buffers[b.ID] = b
}

// Ready writes the line. The service calls it once every receiver has started listening.
func (r *readyLog) Ready() error {
	fields := []zap.Field{zap.Strings("endpoints", r.endpoints()), zap.Strings("buffers", r.bufferModes())}
	if r.gc != "" {
		fields = append(fields, zap.String("gc", r.gc))
	}
	const msg = "tracegate is ready"
	if r.level == "info" {
		r.logger.Info(msg, fields...)
	} else {
		r.logger.Warn(msg, fields...)
	}
	return nil
}

func (*readyLog) NotReady() error { return nil }

// endpoints lists "<receiver>=<address>" for every receiver that reported its address, and
// "<receiver>/<path>=<address>" for the addresses configured for the others (configured.go).
func (r *readyLog) endpoints() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]string, 0, len(r.listeners))
	reported := make(map[string]bool, len(r.listeners))
	for id, addr := range r.listeners {
		out = append(out, id.String()+"="+addr)
		reported[id.String()] = true
	}
	out = append(out, configuredEndpoints(r.conf, reported)...)
	sortByName(out)
	return out
}

// bufferModes lists "<processor>=memory" or "<processor>=<mode> <directory>" for every buffer
// that reported.
func (r *readyLog) bufferModes() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]string, 0, len(r.buffers))
	for id, b := range r.buffers {
		mode := b.Mode
		if b.Directory != "" {
			mode += " " + b.Directory
		}
		out = append(out, id.String()+"="+mode)
	}
	sortByName(out)
	return out
}

// sortByName sorts "<name>=<value>" entries by name ("buffer" before "buffer/disk").
func sortByName(entries []string) {
	name := func(e string) string {
		n, _, _ := strings.Cut(e, "=")
		return n
	}
	slices.SortFunc(entries, func(a, b string) int { return strings.Compare(name(a), name(b)) })
}
