// One resource per distinct resource of a request: the events of a request share their metadata,
// so their spans share one ResourceSpans, and every later stage (the buffer's encoding, the
// exporter) handles the resource once per request rather than once per span.

package convert

import (
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/elastic/apm-data/model/modelpb"
)

// resources finds the ResourceSpans of a request by their attributes.
type resources struct {
	scratch pcommon.Map
	spans   []ptrace.ResourceSpans
	last    int // the index of the last match: consecutive events mostly share one
}

// spanUnder appends an empty span under the ResourceSpans whose resource is e's, made when the
// request has none yet.
func (r *resources) spanUnder(traces ptrace.Traces, e *modelpb.APMEvent) ptrace.Span {
	if r.scratch == (pcommon.Map{}) {
		r.scratch = pcommon.NewMap()
	}
	r.scratch.Clear()
	putResource(r.scratch, e)
	if r.last < len(r.spans) && r.spans[r.last].Resource().Attributes().Equal(r.scratch) {
		return r.spans[r.last].ScopeSpans().At(0).Spans().AppendEmpty()
	}
	for i, rs := range r.spans {
		if rs.Resource().Attributes().Equal(r.scratch) {
			r.last = i
			return rs.ScopeSpans().At(0).Spans().AppendEmpty()
		}
	}
	rs := traces.ResourceSpans().AppendEmpty()
	r.scratch.MoveTo(rs.Resource().Attributes())
	r.scratch = pcommon.NewMap()
	r.spans = append(r.spans, rs)
	r.last = len(r.spans) - 1
	return rs.ScopeSpans().AppendEmpty().Spans().AppendEmpty()
}
