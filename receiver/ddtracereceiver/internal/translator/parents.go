package translator

import (
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/tracegate/tracegate/receiver/ddtracereceiver/internal/payload"
)

// chunkParents finds spans' parents within one chunk, to tell local parents from remote ones.
type chunkParents struct {
	spans []payload.Span
	index map[uint64]int // built on first use for chunks above maxScannedParents
}

// maxScannedParents is the chunk size up to which a parent is found by scanning the chunk.
const maxScannedParents = 32

func (c *chunkParents) find(id uint64) (*payload.Span, bool) {
	if len(c.spans) <= maxScannedParents {
		for i := range c.spans {
			if c.spans[i].SpanID == id {
				return &c.spans[i], true
			}
		}
		return nil, false
	}
	if c.index == nil {
		c.index = make(map[uint64]int, len(c.spans))
		for i := range c.spans {
			c.index[c.spans[i].SpanID] = i
		}
	}
	i, ok := c.index[id]
	if !ok {
		return nil, false
	}
	return &c.spans[i], true
}

// remote tells whether span s (of resource service service, and kind kind) has a parent in another
// service or process: Datadog's top-level spans that have a parent, and server or consumer spans
// whose parent is a client or producer span (a call the process made to itself). A parent outside
// the chunk is remote, unless the tracer marks top-level spans (computedTopLevel) and s has no
// mark: a partial flush then sent s before its local parent.
func (c *chunkParents) remote(s *payload.Span, service string, kind ptrace.SpanKind, topLevel, computedTopLevel bool) bool {
	if s.ParentID == 0 {
		return false
	}
	parent, ok := c.find(s.ParentID)
	if !ok {
		return topLevel || !computedTopLevel
	}
	if kind == ptrace.SpanKindServer || kind == ptrace.SpanKindConsumer {
		parentKind, _ := parent.MetaValue("span.kind")
		if k := spanKind(parentKind, ""); k == ptrace.SpanKindClient || k == ptrace.SpanKindProducer {
			return true
		}
	}
	if parent.Service == service {
		return false
	}
	// An integration may rename its span's service; the application is its base service.
	base, _ := parent.MetaValue("_dd.base_service")
	return base != service
}
