package policy

import (
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// Trace is a whole trace for the tests: its spans (under their resources) and how many.
type Trace struct {
	Spans     ptrace.Traces
	SpanCount int64
}

// Decide observes the whole trace and decides it (DecideObserved).
func (s *Set) Decide(id pcommon.TraceID, t *Trace, now time.Time) (Decision, string) {
	o := s.NewObservation()
	s.Observe(o, t.Spans)
	return s.DecideObserved(id, o, t.SpanCount, now)
}
