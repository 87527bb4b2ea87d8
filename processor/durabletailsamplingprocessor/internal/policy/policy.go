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

// Observation is what the policies remember of a trace's spans so far: one state per leaf
// policy. A trace's fragments are observed as they arrive, so the decision needs none of its
// spans; observing fragments one by one gives the state observing them together would.
type Observation []leafState

// leafState is one leaf policy's memory of a trace.
type leafState struct {
	hit         bool // a span or resource matched (attribute, status code, trace state)
	first, last pcommon.Timestamp
	// Services of the root span and of the earliest span (latency's per-service threshold).
	rootService, earliestService string
	haveRoot                     bool
}

// evaluator is a policy: it observes a trace's resources as they arrive into its slots of the
// observation, and decides from them.
type evaluator interface {
	observe(o Observation, rs ptrace.ResourceSpans)
	decide(o Observation, id pcommon.TraceID, spans int64, now time.Time) Decision
}

type named struct {
	name string
	eval evaluator
}

// Set is the configured policies in order. It is not safe for concurrent use (rate_limiting
// counts): one goroutine decides.
type Set struct {
	policies      []named
	slots         int
	firstMatchWin bool
}

// NoPolicy names the decision of a trace no policy kept.
const NoPolicy = "no_policy"

// New builds the policies; cfgs must have passed Validate.
func New(cfgs []Config, sampleOnFirstMatch bool) (*Set, error) {
	s := &Set{firstMatchWin: sampleOnFirstMatch}
	for i := range cfgs {
		c := &cfgs[i]
		e, err := build(c.SubConfig, c.And.SubPolicies, c.Drop.SubPolicies, true, &s.slots)
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

// NewObservation is the state of a trace nothing of which was observed yet.
func (s *Set) NewObservation() Observation { return make(Observation, s.slots) }

// Observe folds a fragment of a trace (spans of that trace only) into o.
func (s *Set) Observe(o Observation, td ptrace.Traces) {
	rss := td.ResourceSpans()
	for i := 0; i < rss.Len(); i++ {
		for _, p := range s.policies {
			p.eval.observe(o, rss.At(i))
		}
	}
}

// Merge folds what was observed of another fragment of the same trace into o, as if o had
// observed it too.
func (o Observation) Merge(f Observation) {
	for i := range o {
		a, b := &o[i], &f[i]
		a.hit = a.hit || b.hit
		if b.first != 0 && (a.first == 0 || b.first < a.first) {
			a.first, a.earliestService = b.first, b.earliestService
		}
		a.last = max(a.last, b.last)
		if !a.haveRoot && b.haveRoot {
			a.haveRoot, a.rootService = true, b.rootService
		}
	}
}

// DecideObserved evaluates the policies in order on what was observed of a trace of spans spans:
// a drop policy that matches drops the trace at once; otherwise the trace is kept when any
// policy keeps it, and the first that did is named.
func (s *Set) DecideObserved(id pcommon.TraceID, o Observation, spans int64, now time.Time) (Decision, string) {
	keptBy := ""
	for _, p := range s.policies {
		switch p.eval.decide(o, id, spans, now) {
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
// slots counts the observation's slots taken so far; each leaf takes the next.
func build(c SubConfig, and, drop []SubConfig, top bool, slots *int) (evaluator, error) {
	switch c.Type {
	case TypeAnd, TypeDrop:
		if !top {
			return nil, fmt.Errorf("%s cannot be nested in and/drop", c.Type)
		}
		subs := and
		if c.Type == TypeDrop {
			subs = drop
		}
		return buildAll(c.Type, subs, slots)
	}
	if hint, ok := unsupported[c.Type]; ok {
		return nil, fmt.Errorf("type %q is not supported here: %s", c.Type, hint)
	}
	e, err := buildLeaf(c, *slots)
	*slots++
	return e, err
}

func buildAll(typ string, subs []SubConfig, slots *int) (evaluator, error) {
	if len(subs) == 0 {
		return nil, fmt.Errorf("%s needs at least one sub-policy (%s_sub_policy)", typ, typ)
	}
	all := allOf{drop: typ == TypeDrop}
	for i := range subs {
		e, err := build(subs[i], nil, nil, false, slots)
		if err != nil {
			return nil, fmt.Errorf("%s_sub_policy %q: %w", typ, subs[i].Name, err)
		}
		all.subs = append(all.subs, e)
	}
	return all, nil
}

// buildLeaf makes a leaf policy whose state is the observation's slot.
func buildLeaf(c SubConfig, slot int) (evaluator, error) {
	switch c.Type {
	case TypeAlwaysSample:
		return always{}, nil
	case TypeLatency:
		return newLatency(c.Latency, slot)
	case TypeStatusCode:
		return newStatusCode(c.StatusCode, slot)
	case TypeProbabilistic:
		return newProbabilistic(c.Probabilistic)
	case TypeStringAttribute:
		return newStringAttribute(c.StringAttribute, slot)
	case TypeNumericAttribute:
		return newNumericAttribute(c.NumericAttribute, slot)
	case TypeBooleanAttribute:
		return newBooleanAttribute(c.BooleanAttribute, slot)
	case TypeSpanCount:
		return newSpanCount(c.SpanCount)
	case TypeTraceState:
		return newTraceState(c.TraceState, slot)
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

func (a allOf) observe(o Observation, rs ptrace.ResourceSpans) {
	for _, s := range a.subs {
		s.observe(o, rs)
	}
}

func (a allOf) decide(o Observation, id pcommon.TraceID, spans int64, now time.Time) Decision {
	for _, s := range a.subs {
		if s.decide(o, id, spans, now) != Sampled {
			return NotSampled
		}
	}
	if a.drop {
		return Dropped
	}
	return Sampled
}

type always struct{}

func (always) observe(Observation, ptrace.ResourceSpans) {}

func (always) decide(Observation, pcommon.TraceID, int64, time.Time) Decision { return Sampled }

// noObservation is embedded by the policies that decide from the trace id or counts alone.
type noObservation struct{}

func (noObservation) observe(Observation, ptrace.ResourceSpans) {}

func decision(keep bool) Decision {
	if keep {
		return Sampled
	}
	return NotSampled
}

// anySpan reports whether f holds for one of the resource's spans.
func anySpan(rs ptrace.ResourceSpans, f func(s ptrace.Span) bool) bool {
	for j := 0; j < rs.ScopeSpans().Len(); j++ {
		spans := rs.ScopeSpans().At(j).Spans()
		for k := 0; k < spans.Len(); k++ {
			if f(spans.At(k)) {
				return true
			}
		}
	}
	return false
}
