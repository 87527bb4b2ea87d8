package esstandin

import (
	"encoding/json"
	"path"
	"slices"
	"sort"
	"sync"

	"github.com/tracegate/tracegate/internal/esversion"
)

// IndexTemplate is the part of a composable index template the stand-in acts on: which names it
// matches and whether it turns them into data streams.
type IndexTemplate struct {
	Name       string
	Patterns   []string
	Priority   int
	Version    int
	DataStream bool
	// TimeSeries is index.mode time_series (a TSDS): Elasticsearch derives each document's _id
	// from its dimensions and @timestamp, so an identical document is refused as a duplicate.
	TimeSeries bool
}

// body renders the template as Elasticsearch returns it.
func (t IndexTemplate) body() json.RawMessage {
	doc := map[string]any{"index_patterns": t.Patterns, "priority": t.Priority, "version": t.Version}
	if t.DataStream {
		doc["data_stream"] = map[string]any{}
	}
	if t.TimeSeries {
		doc["template"] = map[string]any{"settings": map[string]any{"index": map[string]any{"mode": "time_series"}}}
	}
	b, _ := json.Marshal(doc)
	return b
}

// builtinTemplates returns the data stream templates Elasticsearch of the given version installs by
// itself. The otel ones (traces-*.otel-* and friends) ship with the otel-data plugin from 8.16; the
// logs-*-* and metrics-*-* ones exist in every 8.x. No built-in template matches traces-*-* (apm-data
// only covers traces-apm*), which is why ECS-mode spans fail on a bare cluster.
func builtinTemplates(version string) []IndexTemplate {
	major, minor := esversion.Parse(version)
	var ts []IndexTemplate
	if major >= 8 {
		ts = append(ts,
			IndexTemplate{Name: "logs", Patterns: []string{"logs-*-*"}, Priority: 100, DataStream: true},
			IndexTemplate{Name: "metrics", Patterns: []string{"metrics-*-*"}, Priority: 100, DataStream: true},
		)
	}
	if major > 8 || (major == 8 && minor >= 16) {
		ts = append(ts,
			IndexTemplate{Name: "traces-otel@template", Patterns: []string{"traces-*.otel-*"}, Priority: 120, DataStream: true},
			IndexTemplate{Name: "logs-otel@template", Patterns: []string{"logs-*.otel-*"}, Priority: 120, DataStream: true},
			IndexTemplate{Name: "metrics-otel@template", Patterns: []string{"metrics-*.otel-*"}, Priority: 120, DataStream: true, TimeSeries: true},
		)
	}
	return ts
}

// target is what a bulk item writes into once it exists: a data stream or a plain index.
type target struct {
	dataStream   bool
	timeSeries   bool
	backingIndex string // the name reported in item responses (.ds-<name>-<date>-000001 for data streams)
}

// catalog holds templates and the indices and data streams created from them.
type catalog struct {
	mu        sync.Mutex
	templates []IndexTemplate
	targets   map[string]target
	today     func() string
}

func newCatalog(version string, today func() string) *catalog {
	return &catalog{templates: builtinTemplates(version), targets: map[string]target{}, today: today}
}

func (c *catalog) putTemplate(t IndexTemplate) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for i := range c.templates {
		if c.templates[i].Name == t.Name {
			c.templates[i] = t
			return
		}
	}
	c.templates = append(c.templates, t)
}

func (c *catalog) deleteTemplate(name string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.templates = slices.DeleteFunc(c.templates, func(t IndexTemplate) bool { return t.Name == name })
}

func (c *catalog) templateList() []IndexTemplate {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := append([]IndexTemplate(nil), c.templates...)
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// resolve returns the target a write to name goes to, creating it the way Elasticsearch auto-creates
// indices and data streams, or false when requireDataStream forbids creating anything but a data
// stream.
func (c *catalog) resolve(name string, requireDataStream bool) (target, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if t, ok := c.targets[name]; ok {
		return t, !requireDataStream || t.dataStream
	}
	var best *IndexTemplate
	for i := range c.templates {
		t := &c.templates[i]
		for _, p := range t.Patterns {
			if ok, _ := path.Match(p, name); ok && (best == nil || t.Priority > best.Priority) {
				best = t
			}
		}
	}
	t := target{backingIndex: name}
	if best != nil && best.DataStream {
		t = target{dataStream: true, timeSeries: best.TimeSeries, backingIndex: ".ds-" + name + "-" + c.today() + "-000001"}
	}
	if requireDataStream && !t.dataStream {
		return target{}, false
	}
	c.targets[name] = t
	return t, true
}
