// A request's metadata line, decoded once per agent process: an agent sends the same line at the
// start of every request, and with it cached a request of spans spanjson takes needs no apm-data
// at all.

package elasticapmreceiver

import (
	"sync"

	"github.com/elastic/apm-data/model/modelpb"
)

// maxCachedMetadata and maxCachedLine bound the cache (16 MiB of lines at most): about one entry
// per agent process sending to this collector, a few KiB each. A longer line is decoded with
// every request.
const (
	maxCachedMetadata = 1024
	maxCachedLine     = 16 << 10
)

// metadataCache maps a metadata line, as sent, to the event apm-data decoded from it. The events
// are shared by every request that sent the line and are never changed.
type metadataCache struct {
	mu     sync.RWMutex
	events map[string]*modelpb.APMEvent
}

func newMetadataCache() *metadataCache {
	return &metadataCache{events: make(map[string]*modelpb.APMEvent)}
}

func (c *metadataCache) get(line []byte) (*modelpb.APMEvent, bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	e, ok := c.events[string(line)]
	return e, ok
}

// put keeps e for line; when the cache is full, an arbitrary entry makes room.
func (c *metadataCache) put(line []byte, e *modelpb.APMEvent) {
	if len(line) > maxCachedLine {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.events) >= maxCachedMetadata {
		for k := range c.events {
			delete(c.events, k)
			break
		}
	}
	c.events[string(line)] = e
}
