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

// parentPlace is where a span's parent is, as far as the payload tells.
type parentPlace uint8

const (
	parentNone    parentPlace = iota // a root span
	parentUnknown                    // not in the chunk, and the tracer does not say
	parentLocal
	parentRemote
)

// place tells where span s (of resource service service, and kind kind) has its parent: remote
// when in another service or process (Datadog's top-level spans that have a parent, and server or
// consumer spans whose parent is a client or producer span: a call the process made to itself).
// A parent outside the chunk is remote when s carries the top-level mark; local when the tracer
// marks top-level spans (computedTopLevel) and s has none (a partial flush sent s before its local
// parent); otherwise unknown, and consumers such as Elastic's APM enrichment fall back on the kind.
func (c *chunkParents) place(s *payload.Span, service string, kind ptrace.SpanKind, topLevel, computedTopLevel bool) parentPlace {
	if s.ParentID == 0 {
		return parentNone
	}
	parent, ok := c.find(s.ParentID)
	switch {
	case !ok && topLevel:
		return parentRemote
	case !ok && computedTopLevel:
		return parentLocal
	case !ok:
		return parentUnknown
	}
	if kind == ptrace.SpanKindServer || kind == ptrace.SpanKindConsumer {
		parentKind, _ := parent.MetaValue("span.kind")
		if k := spanKind(parentKind, ""); k == ptrace.SpanKindClient || k == ptrace.SpanKindProducer {
			return parentRemote
		}
	}
	if parent.Service == service {
		return parentLocal
	}
	// An integration may rename its span's service; the application is its base service.
	if base, _ := parent.MetaValue("_dd.base_service"); base == service {
		return parentLocal
	}
	return parentRemote
}
