package durabletailsamplingprocessor

import (
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
)

// idCache remembers up to size trace ids for ttl each; when full the oldest is forgotten. The
// ring keeps insertion order so that eviction costs O(1) and memory is fixed.
type idCache struct {
	size int
	ttl  time.Duration
	at   map[pcommon.TraceID]time.Time
	ring []pcommon.TraceID
	next int
}

func newIDCache(size int, ttl time.Duration) *idCache {
	return &idCache{size: size, ttl: ttl, at: make(map[pcommon.TraceID]time.Time, min(size, 1<<16))}
}

func (c *idCache) put(id pcommon.TraceID, now time.Time) {
	if c.size == 0 {
		return
	}
	if _, ok := c.at[id]; ok {
		c.at[id] = now
		return
	}
	if len(c.ring) < c.size {
		c.ring = append(c.ring, id)
	} else {
		delete(c.at, c.ring[c.next])
		c.ring[c.next] = id
		c.next = (c.next + 1) % c.size
	}
	c.at[id] = now
}

func (c *idCache) has(id pcommon.TraceID, now time.Time) bool {
	t, ok := c.at[id]
	return ok && now.Sub(t) < c.ttl
}

// decisions remembers recent decisions, kept and dropped apart (sized apart, as in contrib).
type decisions struct{ kept, dropped *idCache }

func newDecisions(cfg DecisionCacheConfig) *decisions {
	return &decisions{
		kept:    newIDCache(cfg.SampledCacheSize, cfg.TTL),
		dropped: newIDCache(cfg.NonSampledCacheSize, cfg.TTL),
	}
}

// lookup says whether the trace was decided recently, and if so whether it was kept.
func (d *decisions) lookup(id pcommon.TraceID, now time.Time) (decided, kept bool) {
	if d.kept.has(id, now) {
		return true, true
	}
	return d.dropped.has(id, now), false
}

func (d *decisions) record(id pcommon.TraceID, kept bool, now time.Time) {
	if kept {
		d.kept.put(id, now)
	} else {
		d.dropped.put(id, now)
	}
}
