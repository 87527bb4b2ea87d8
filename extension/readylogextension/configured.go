package readylogextension

import (
	"fmt"
	"sort"
)

// configuredEndpoints lists "<receiver>/<path>=<address>" for every address (keys endpoint and
// host_port, at any depth) in the configuration of the receivers the pipelines use, except those
// in reported.
//
// The configuration is the only place that says where the stock receivers (otlp, zipkin,
// jaeger) listen: they report nothing, they log their addresses at info (below the warn level
// tracegate's configs run at), and the service hands an extension neither the receivers nor
// their listeners. So a listener left at its default address is not listed, and a key that a
// release of those receivers renames drops out of the line: test/e2e's TestReadyLine checks every
// stock listener the configs open.
func configuredEndpoints(conf map[string]any, reported map[string]bool) []string {
	var out []string
	for _, id := range pipelineReceivers(conf) {
		if !reported[id] {
			collectEndpoints(dig(conf, "receivers", id), id, &out)
		}
	}
	return out
}

// pipelineReceivers returns the receiver ids (connectors among them) some pipeline uses, sorted.
func pipelineReceivers(conf map[string]any) []string {
	seen := map[string]bool{}
	pipelines, _ := dig(conf, "service", "pipelines").(map[string]any)
	for _, p := range pipelines {
		ids, _ := dig(p, "receivers").([]any)
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
