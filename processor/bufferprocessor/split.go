package bufferprocessor

import (
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/xpdata/pref"
)

// splitBySize cuts td into parts of at most maxBytes serialized bytes each, in span order, each
// with its spans' resource and scope. A part of one span may still be larger. td itself becomes
// the last part (its leading spans move out); the others are new batches, owned by the buffer
// (see assemble) and given back by releaseParts. It halves by span count until every part fits:
// a few size computations for the rare batch that needs it, whatever the spans' sizes.
func splitBySize(td ptrace.Traces, maxBytes int) []ptrace.Traces {
	var m ptrace.ProtoMarshaler
	n := td.SpanCount()
	if n <= 1 || m.TracesSize(td) <= maxBytes {
		return []ptrace.Traces{td}
	}
	head := moveLeadingSpans(td, n/2)
	return append(splitBySize(head, maxBytes), splitBySize(td, maxBytes)...)
}

// moveLeadingSpans moves the first n spans of td into a new batch (copying their resources and
// scopes) and removes them from td, with the resources and scopes they leave empty.
func moveLeadingSpans(td ptrace.Traces, n int) ptrace.Traces {
	out := ptrace.NewTraces()
	pref.MarkPipelineOwnedTraces(out)
	rss := td.ResourceSpans()
	for i := 0; i < rss.Len() && n > 0; i++ {
		rs := rss.At(i)
		var outRS ptrace.ResourceSpans // created with its first span: no empty resources in a part
		sss := rs.ScopeSpans()
		for j := 0; j < sss.Len() && n > 0; j++ {
			ss := sss.At(j)
			if ss.Spans().Len() == 0 {
				continue
			}
			if outRS == (ptrace.ResourceSpans{}) {
				outRS = out.ResourceSpans().AppendEmpty()
				rs.Resource().CopyTo(outRS.Resource())
				outRS.SetSchemaUrl(rs.SchemaUrl())
			}
			outSS := outRS.ScopeSpans().AppendEmpty()
			ss.Scope().CopyTo(outSS.Scope())
			outSS.SetSchemaUrl(ss.SchemaUrl())
			spans := ss.Spans()
			take := min(n, spans.Len())
			outSS.Spans().EnsureCapacity(take)
			for k := range take {
				spans.At(k).MoveTo(outSS.Spans().AppendEmpty())
			}
			moved := 0
			spans.RemoveIf(func(ptrace.Span) bool { moved++; return moved <= take })
			n -= take
		}
		sss.RemoveIf(func(ss ptrace.ScopeSpans) bool { return ss.Spans().Len() == 0 })
	}
	rss.RemoveIf(func(rs ptrace.ResourceSpans) bool { return rs.ScopeSpans().Len() == 0 })
	return out
}

// mergeParts returns the parts as one batch: the part itself when there is one, else a new batch
// the parts' contents move into, or are copied into when a part is read-only (the collector's
// fanout marks a batch it offered to several consumers so).
func mergeParts(parts []ptrace.Traces) ptrace.Traces {
	if len(parts) == 1 {
		return parts[0]
	}
	out := ptrace.NewTraces()
	pref.MarkPipelineOwnedTraces(out)
	for _, p := range parts {
		if p.IsReadOnly() {
			rss := p.ResourceSpans()
			for i := range rss.Len() {
				rss.At(i).CopyTo(out.ResourceSpans().AppendEmpty())
			}
			continue
		}
		p.ResourceSpans().MoveAndAppendTo(out.ResourceSpans())
	}
	return out
}

// releaseParts gives back the references of the parts splitBySize made (td, the last part, is
// the delivery's and released with it).
func releaseParts(parts []ptrace.Traces, td ptrace.Traces) {
	for _, p := range parts {
		if p != td {
			pref.UnrefTraces(p)
		}
	}
}
