package tracemodel

import (
	"encoding/binary"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// OTLPTraces returns t as pdata traces: one resource, one scope.
func OTLPTraces(t Trace) ptrace.Traces {
	td := ptrace.NewTraces()
	rs := td.ResourceSpans().AppendEmpty()
	ra := rs.Resource().Attributes()
	ra.PutStr("service.name", t.Service)
	ra.PutStr("host.name", t.Host)
	ra.PutStr("telemetry.sdk.language", "go")
	ra.PutStr("telemetry.sdk.name", "opentelemetry")
	ss := rs.ScopeSpans().AppendEmpty()
	ss.Scope().SetName("github.com/tracegate/tracegate/bench/tracegen")
	var tid pcommon.TraceID
	binary.BigEndian.PutUint64(tid[:8], t.TraceHi)
	binary.BigEndian.PutUint64(tid[8:], t.TraceLo)
	for _, s := range t.Spans {
		sp := ss.Spans().AppendEmpty()
		sp.SetTraceID(tid)
		var sid, pid pcommon.SpanID
		binary.BigEndian.PutUint64(sid[:], s.SpanID)
		sp.SetSpanID(sid)
		if s.ParentID != 0 {
			binary.BigEndian.PutUint64(pid[:], s.ParentID)
			sp.SetParentSpanID(pid)
		}
		sp.SetName(s.Resource)
		switch s.Kind {
		case KindServer:
			sp.SetKind(ptrace.SpanKindServer)
		case KindClient:
			sp.SetKind(ptrace.SpanKindClient)
		default:
			sp.SetKind(ptrace.SpanKindInternal)
		}
		sp.SetStartTimestamp(pcommon.NewTimestampFromTime(s.Start))
		sp.SetEndTimestamp(pcommon.NewTimestampFromTime(s.Start.Add(s.Duration)))
		attrs := sp.Attributes()
		attrs.EnsureCapacity(len(s.Attrs))
		for _, a := range s.Attrs {
			switch a.Type {
			case AttrInt:
				attrs.PutInt(a.Key, a.Int)
			case AttrFloat:
				attrs.PutDouble(a.Key, a.Float)
			case AttrBool:
				attrs.PutBool(a.Key, a.Bool)
			default:
				attrs.PutStr(a.Key, a.Str)
			}
		}
		if s.Error {
			sp.Status().SetCode(ptrace.StatusCodeError)
			sp.Status().SetMessage("internal server error")
		}
	}
	return td
}
