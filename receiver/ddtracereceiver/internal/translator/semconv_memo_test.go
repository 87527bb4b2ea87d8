package translator

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/tracegate/tracegate/receiver/ddtracereceiver/internal/payload"
)

// TestRuleMemoGivesTheLookedUpRules holds the memo to semconvRuleOf over spans whose keys repeat,
// move, change and come and go between one span and the next.
func TestRuleMemoGivesTheLookedUpRules(t *testing.T) {
	span := func(meta []string, metrics ...string) *payload.Span {
		s := &payload.Span{}
		for _, k := range meta {
			s.Meta = append(s.Meta, payload.KV{Key: k, Value: "v"})
		}
		for _, k := range metrics {
			s.Metrics = append(s.Metrics, payload.KF{Key: k})
		}
		return s
	}
	spans := []*payload.Span{
		span([]string{"http.method", "http.url", "env"}, "_sampling_priority_v1", "http.status_code"),
		span([]string{"http.method", "http.url", "env"}, "_sampling_priority_v1", "http.status_code"), // same keys
		span([]string{"http.url", "http.method"}, "http.status_code"),                                 // moved
		span([]string{"http.url", "db.type", "out.host", "Custom.Tag"}),                               // changed, longer
		span(nil, "out.port", "_dd.measured"),                                                         // no meta
		span([]string{"http.url"}, "out.port", "process_id", "kafka.partition"),                       // metrics shift
		span(nil),
	}
	m := newRuleMemo()
	for n, s := range spans {
		var want []tagRule
		for _, kv := range s.Meta {
			want = append(want, semconvRuleOf(kv.Key))
		}
		for _, kf := range s.Metrics {
			want = append(want, semconvRuleOf(kf.Key))
		}
		got, _ := m.of(s)
		assert.Equal(t, want, append([]tagRule(nil), got...), "span %d", n)
	}
	m.reset()
	assert.Nil(t, m.prev, "a pooled memo keeps no span")
}
