package translator

import (
	"container/list"
	"sync"
)

// idCache remembers the high 64 bits of 128-bit trace ids by their low 64 bits, for chunks that
// arrive without the _dd.p.tid tag (tracers put it only on the first span of a flushed chunk, so a
// later partial flush of the same trace lacks it). It is a bounded LRU, safe for concurrent use.
type idCache struct {
	mu    sync.Mutex
	size  int
	order *list.List // front = most recent; values are uint64 low ids
	items map[uint64]cacheEntry
}

type cacheEntry struct {
	high uint64
	elem *list.Element
}

func newIDCache(size int) *idCache {
	return &idCache{size: size, order: list.New(), items: make(map[uint64]cacheEntry, size)}
}

func (c *idCache) put(low, high uint64) {
	if c == nil || c.size <= 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.items[low]; ok {
		c.order.MoveToFront(e.elem)
		c.items[low] = cacheEntry{high: high, elem: e.elem}
		return
	}
	if c.order.Len() >= c.size {
		oldest := c.order.Back()
		c.order.Remove(oldest)
		delete(c.items, oldest.Value.(uint64))
	}
	c.items[low] = cacheEntry{high: high, elem: c.order.PushFront(low)}
}

func (c *idCache) get(low uint64) (uint64, bool) {
	if c == nil || c.size <= 0 {
		return 0, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.items[low]
	if !ok {
		return 0, false
	}
	c.order.MoveToFront(e.elem)
	return e.high, true
}
