package durabletailsamplingprocessor

import (
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/tracegate/tracegate/processor/durabletailsamplingprocessor/internal/policy"
	"github.com/tracegate/tracegate/processor/durabletailsamplingprocessor/internal/tracelog"
)

// fragment is the spans of one trace from one request, under copies of their resource and scope.
type fragment struct {
	id    pcommon.TraceID
	spans ptrace.Traces
	count int64
	// encoded is spans in OTLP protobuf: what is held until the decision (and written to the
	// log), so that a dropped trace is never decoded again. obs is what the policies saw of it.
	encoded []byte
	obs     policy.Observation
	// With storage: the encoding's place in the log once written (onDisk), so that memory holds
	// none of it until the trace is kept.
	onDisk bool
	seg    tracelog.SegmentID
	at     int64

	// The resource and scope of the request last written to, so that consecutive spans of the
	// same scope share one copy.
	lastRS, lastSS int
	rs             ptrace.ResourceSpans
	ss             ptrace.ScopeSpans
}

// splitByTrace moves a request's spans into one fragment per trace id, in the order the traces
// first appear. td is left without spans.
func splitByTrace(td ptrace.Traces) []*fragment {
	if id, n, ok := oneTrace(td); ok { // a request of one trace moves whole: nothing to copy
		f := &fragment{id: id, spans: ptrace.NewTraces(), count: n}
		td.ResourceSpans().MoveAndAppendTo(f.spans.ResourceSpans())
		return []*fragment{f}
	}
	var out []*fragment
	index := map[pcommon.TraceID]*fragment{}
	rss := td.ResourceSpans()
	for i := 0; i < rss.Len(); i++ {
		rs := rss.At(i)
		for j := 0; j < rs.ScopeSpans().Len(); j++ {
			ss := rs.ScopeSpans().At(j)
			spans := ss.Spans()
			for k := 0; k < spans.Len(); k++ {
				span := spans.At(k)
				f := index[span.TraceID()]
				if f == nil {
					f = &fragment{id: span.TraceID(), spans: ptrace.NewTraces(), lastRS: -1}
					index[f.id] = f
					out = append(out, f)
				}
				span.MoveTo(f.scopeFor(rs, ss, i, j).Spans().AppendEmpty())
				f.count++
			}
		}
	}
	return out
}

// oneTrace reports whether every span of td has one trace id (td has spans), that id and the
// number of spans.
func oneTrace(td ptrace.Traces) (pcommon.TraceID, int64, bool) {
	var id pcommon.TraceID
	n := int64(0)
	rss := td.ResourceSpans()
	for i := 0; i < rss.Len(); i++ {
		sss := rss.At(i).ScopeSpans()
		for j := 0; j < sss.Len(); j++ {
			spans := sss.At(j).Spans()
			for k := 0; k < spans.Len(); k++ {
				if n > 0 && spans.At(k).TraceID() != id {
					return id, n, false
				}
				id = spans.At(k).TraceID()
				n++
			}
		}
	}
	return id, n, n > 0
}

// scopeFor returns the fragment's copy of the request's scope j under resource i.
func (f *fragment) scopeFor(rs ptrace.ResourceSpans, ss ptrace.ScopeSpans, i, j int) ptrace.ScopeSpans {
	if f.lastRS != i {
		f.rs = f.spans.ResourceSpans().AppendEmpty()
		rs.Resource().CopyTo(f.rs.Resource())
		f.rs.SetSchemaUrl(rs.SchemaUrl())
		f.lastRS, f.lastSS = i, -1
	}
	if f.lastSS != j {
		f.ss = f.rs.ScopeSpans().AppendEmpty()
		ss.Scope().CopyTo(f.ss.Scope())
		f.ss.SetSchemaUrl(ss.SchemaUrl())
		f.lastSS = j
	}
	return f.ss
}

// heldFragment is a fragment waiting with its trace: its encoding in memory (data), or its
// place in the disk log.
type heldFragment struct {
	data  []byte
	seg   tracelog.SegmentID
	at    int64
	n     int
	spans int64
}

// held is what the store keeps of f: its place on disk, or its encoding.
func (f *fragment) held() heldFragment {
	if f.onDisk {
		return heldFragment{seg: f.seg, at: f.at, n: len(f.encoded), spans: f.count}
	}
	return heldFragment{data: f.encoded, n: len(f.encoded), spans: f.count}
}
