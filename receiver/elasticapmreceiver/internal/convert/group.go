// One resource per distinct resource of a request: EDOT gives every event a ResourceSpans of its
// own, and then every later stage (the buffer's encoding, the exporter) handles a resource with
// some 25 attributes per span. The events of a request share their metadata, so they mostly share
// a resource too.

package convert

import (
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/elastic/apm-data/model/modelpb"

	"github.com/tracegate/tracegate/receiver/elasticapmreceiver/internal/mappers"
)

// resources finds the ResourceSpans of a request by their attributes.
type resources struct {
	scratch pcommon.Map
	spans   []ptrace.ResourceSpans
	last    int // the index of the last match: consecutive events mostly share one
}

// newSpan appends a span for event under its resource and sets the fields EDOT's
// elasticEventToOtelSpan sets.
func (c *Converter) newSpan(out *Output, event *modelpb.APMEvent, ts uint64) ptrace.Span {
	if !c.groupResources {
		rs := out.Traces.ResourceSpans().AppendEmpty()
		c.setResourceAttributes(rs.Resource().Attributes(), event)
		return c.elasticEventToOtelSpan(&rs, event, ts)
	}
	s := c.scopeSpansFor(out, event).Spans().AppendEmpty()
	mappers.SetTopLevelFieldsSpan(event, ts, s, c.logger)
	c.elasticSpanLinksToOTelSpanLinks(event, s)
	s.SetKind(mapSpanKind(event.GetSpan().GetKind()))
	return s
}

// scopeSpansFor is the one ScopeSpans of the ResourceSpans whose resource is event's, made when
// the request has none yet.
func (c *Converter) scopeSpansFor(out *Output, event *modelpb.APMEvent) ptrace.ScopeSpans {
	r := &out.resources
	if r.scratch == (pcommon.Map{}) {
		r.scratch = pcommon.NewMap()
	}
	r.scratch.Clear()
	c.setResourceAttributes(r.scratch, event)
	if r.last < len(r.spans) && r.spans[r.last].Resource().Attributes().Equal(r.scratch) {
		return r.spans[r.last].ScopeSpans().At(0)
	}
	for i, rs := range r.spans {
		if rs.Resource().Attributes().Equal(r.scratch) {
			r.last = i
			return rs.ScopeSpans().At(0)
		}
	}
	rs := out.Traces.ResourceSpans().AppendEmpty()
	r.scratch.MoveTo(rs.Resource().Attributes())
	r.scratch = pcommon.NewMap()
	r.spans = append(r.spans, rs)
	r.last = len(r.spans) - 1
	return rs.ScopeSpans().AppendEmpty()
}
