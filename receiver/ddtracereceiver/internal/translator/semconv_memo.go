package translator

import "github.com/tracegate/tracegate/receiver/ddtracereceiver/internal/payload"

// ruleMemo keeps the rules of the previous span's keys. The spans of one payload mostly carry the
// same tags in the same order, and comparing a key with the one at its place in the span before
// costs a few nanoseconds where looking it up (semconvRuleOf) costs tens.
type ruleMemo struct {
	prev      *payload.Span // the span translated before, in this request
	prevRules []tagRule     // prev's meta rules, then its metric rules
	rules     []tagRule     // where the next span's rules go
}

func newRuleMemo() *ruleMemo {
	return &ruleMemo{prevRules: make([]tagRule, 0, 32), rules: make([]tagRule, 0, 32)}
}

// metaRule is the rule of the span's meta key i.
func (m *ruleMemo) metaRule(s *payload.Span, i int) tagRule {
	if p := m.prev; p != nil && i < len(p.Meta) && p.Meta[i].Key == s.Meta[i].Key {
		return m.prevRules[i]
	}
	return semconvRuleOf(s.Meta[i].Key)
}

// metricRule is the rule of the span's metric key i.
func (m *ruleMemo) metricRule(s *payload.Span, i int) tagRule {
	if p := m.prev; p != nil && i < len(p.Metrics) && p.Metrics[i].Key == s.Metrics[i].Key {
		return m.prevRules[len(p.Meta)+i]
	}
	return semconvRuleOf(s.Metrics[i].Key)
}

// reset forgets the request's spans, so that a pooled memo pins none of them, and returns the
// rules the memo has room for.
func (m *ruleMemo) reset() int {
	m.prev = nil
	m.prevRules, m.rules = m.prevRules[:0], m.rules[:0]
	return max(cap(m.prevRules), cap(m.rules))
}
