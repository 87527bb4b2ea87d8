// Package policy decides, for one whole trace, whether it is kept, using policies of the kinds
// (and in the YAML) of contrib's tail_sampling processor. Decisions of the same policies on the
// same trace agree with contrib's (the differential test), except where the README names a
// difference.
package policy

import (
	"errors"
	"fmt"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// Decision is what one policy, or the whole set, says of a trace.
type Decision int8

const (
	NotSampled Decision = iota // this policy does not keep it
	Sampled                    // keep the trace
	Dropped                    // a drop policy matched: drop it whatever the others say
)

// Trace is what the policies see of one trace: its spans (under their resources) and how many.
type Trace struct {
	Spans     ptrace.Traces
	SpanCount int64
}

type evaluator interface {
	evaluate(id pcommon.TraceID, t *Trace, now time.Time) Decision
}

type named struct {
	name string
	eval evaluator
}

// Set is the configured policies in order. It is not safe for concurrent use (rate_limiting
// counts): one goroutine decides.
type Set struct {
	policies      []named
	firstMatchWin bool
}

// NoPolicy names the decision of a trace no policy kept.
const NoPolicy = "no_policy"

// New builds the policies; cfgs must have passed Validate.
func New(cfgs []Config, sampleOnFirstMatch bool) (*Set, error) {
	s := &Set{firstMatchWin: sampleOnFirstMatch}
	for i := range cfgs {
		c := &cfgs[i]
		e, err := build(c.sub(), c.And.SubPolicies, c.Drop.SubPolicies, true)
		if err != nil {
			return nil, fmt.Errorf("policy %q: %w", c.Name, err)
		}
		s.policies = append(s.policies, named{name: c.Name, eval: e})
	}
	return s, nil
}

// Names lists the policies' names in order (for telemetry).
func (s *Set) Names() []string {
	out := make([]string, len(s.policies))
	for i, p := range s.policies {
		out[i] = p.name
	}
	return out
}

// Decide evaluates the policies in order: a drop policy that matches drops the trace at once;
// otherwise the trace is kept when any policy keeps it, and the first that did is named.
func (s *Set) Decide(id pcommon.TraceID, t *Trace, now time.Time) (Decision, string) {
	keptBy := ""
	for _, p := range s.policies {
		switch p.eval.evaluate(id, t, now) {
		case Dropped:
			return Dropped, p.name
		case Sampled:
			if keptBy == "" {
				keptBy = p.name
			}
			if s.firstMatchWin {
				return Sampled, keptBy
			}
		}
	}
	if keptBy != "" {
		return Sampled, keptBy
	}
	return NotSampled, NoPolicy
}

// build makes one evaluator; top says whether and/drop may appear (not inside each other).
func build(c SubConfig, and, drop []SubConfig, top bool) (evaluator, error) {
	switch c.Type {
	case TypeAnd, TypeDrop:
		if !top {
			return nil, fmt.Errorf("%s cannot be nested in and/drop", c.Type)
		}
		subs := and
		if c.Type == TypeDrop {
			subs = drop
		}
		return buildAll(c.Type, subs)
	}
	if hint, ok := unsupported[c.Type]; ok {
		return nil, fmt.Errorf("type %q is not supported here: %s", c.Type, hint)
	}
	return buildLeaf(c)
}

func buildAll(typ string, subs []SubConfig) (evaluator, error) {
	if len(subs) == 0 {
		return nil, fmt.Errorf("%s needs at least one sub-policy (%s_sub_policy)", typ, typ)
	}
	all := allOf{drop: typ == TypeDrop}
	for i := range subs {
		e, err := build(subs[i], nil, nil, false)
		if err != nil {
			return nil, fmt.Errorf("%s_sub_policy %q: %w", typ, subs[i].Name, err)
		}
		all.subs = append(all.subs, e)
	}
	return all, nil
}

func buildLeaf(c SubConfig) (evaluator, error) {
	switch c.Type {
	case TypeAlwaysSample:
		return always{}, nil
	case TypeLatency:
		return newLatency(c.Latency)
	case TypeStatusCode:
		return newStatusCode(c.StatusCode)
	case TypeProbabilistic:
		return newProbabilistic(c.Probabilistic)
	case TypeStringAttribute:
		return newStringAttribute(c.StringAttribute)
	case TypeNumericAttribute:
		return newNumericAttribute(c.NumericAttribute)
	case TypeBooleanAttribute:
		return newBooleanAttribute(c.BooleanAttribute)
	case TypeSpanCount:
		return newSpanCount(c.SpanCount)
	case TypeTraceState:
		return newTraceState(c.TraceState)
	case TypeRateLimiting:
		return newRateLimiting(c.RateLimiting)
	case "":
		return nil, errors.New("type must be set")
	}
	return nil, fmt.Errorf("unknown type %q", c.Type)
}

// allOf is and (kept when every sub-policy keeps) and drop (dropped when every one matches).
type allOf struct {
	subs []evaluator
	drop bool
}

func (a allOf) evaluate(id pcommon.TraceID, t *Trace, now time.Time) Decision {
	for _, s := range a.subs {
		if s.evaluate(id, t, now) != Sampled {
			return NotSampled
		}
	}
	if a.drop {
		return Dropped
	}
	return Sampled
}

type always struct{}

func (always) evaluate(pcommon.TraceID, *Trace, time.Time) Decision { return Sampled }

func decision(keep bool) Decision {
	if keep {
		return Sampled
	}
	return NotSampled
}

// anySpan reports whether f holds for one of the trace's spans; res is the span's resource.
func anySpan(td ptrace.Traces, f func(res pcommon.Resource, s ptrace.Span) bool) bool {
	for i := 0; i < td.ResourceSpans().Len(); i++ {
		rs := td.ResourceSpans().At(i)
		for j := 0; j < rs.ScopeSpans().Len(); j++ {
			spans := rs.ScopeSpans().At(j).Spans()
			for k := 0; k < spans.Len(); k++ {
				if f(rs.Resource(), spans.At(k)) {
					return true
				}
			}
		}
	}
	return false
}
