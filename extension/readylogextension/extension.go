package readylogextension

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/extension/extensioncapabilities"
	"go.uber.org/zap"

	"github.com/tracegate/tracegate/processor/bufferprocessor"
)

// readyLog keeps the collector's configuration (NotifyConfig comes before the pipelines start)
// and writes the ready line when the service reports every pipeline started (Ready).
type readyLog struct {
	component.StartFunc
	component.ShutdownFunc
	logger *zap.Logger
	level  string

	mu   sync.Mutex
	conf map[string]any
}

var (
	_ extensioncapabilities.ConfigWatcher   = (*readyLog)(nil)
	_ extensioncapabilities.PipelineWatcher = (*readyLog)(nil)
)

func (r *readyLog) NotifyConfig(_ context.Context, conf *confmap.Conf) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.conf = conf.ToStringMap()
	return nil
}

// Ready writes the line. The service calls it once every receiver has started listening.
func (r *readyLog) Ready() error {
	r.mu.Lock()
	conf := r.conf
	r.mu.Unlock()
	fields := []zap.Field{
		zap.Strings("endpoints", receiverEndpoints(conf)),
		zap.Strings("buffers", bufferModes(conf)),
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

// inPipelines returns the ids of kind (receivers, processors) that some pipeline uses, sorted.
func inPipelines(conf map[string]any, kind string) []string {
	seen := map[string]bool{}
	pipelines, _ := dig(conf, "service", "pipelines").(map[string]any)
	for _, p := range pipelines {
		ids, _ := dig(p, kind).([]any)
		for _, id := range ids {
			seen[fmt.Sprint(id)] = true
		}
	}
	out := make([]string, 0, len(seen))
	for id := range seen {
		out = append(out, id)
	}
	sort.Strings(out)
	return out
}

// receiverEndpoints lists "<receiver>[/<protocol path>]=<address>" for every listening address
// in the configuration of the receivers the pipelines use (keys endpoint and host_port).
func receiverEndpoints(conf map[string]any) []string {
	var out []string
	for _, id := range inPipelines(conf, "receivers") {
		collectEndpoints(dig(conf, "receivers", id), id, &out)
	}
	return out
}

func collectEndpoints(v any, path string, out *[]string) {
	m, ok := v.(map[string]any)
	if !ok {
		return
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		switch val := m[k].(type) {
		case map[string]any:
			collectEndpoints(val, path+"/"+k, out)
		case string:
			if k == "endpoint" || k == "host_port" {
				*out = append(*out, path+"="+val)
			}
		}
	}
}

// bufferModes lists "<processor>=memory" or "<processor>=<mode> <directory>" for every buffer
// processor the pipelines use.
func bufferModes(conf map[string]any) []string {
	var out []string
	for _, id := range inPipelines(conf, "processors") {
		if id != "buffer" && !strings.HasPrefix(id, "buffer/") {
			continue
		}
		storage, _ := dig(conf, "processors", id, "storage").(map[string]any)
		if storage == nil {
			out = append(out, id+"=memory")
			continue
		}
		mode := fmt.Sprint(storage["mode"])
		if storage["mode"] == nil {
			mode = bufferprocessor.ModeOverflow // the buffer's default
		}
		out = append(out, fmt.Sprintf("%s=%s %v", id, mode, storage["directory"]))
	}
	return out
}

func dig(v any, keys ...string) any {
	for _, k := range keys {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[k]
	}
	return v
}
