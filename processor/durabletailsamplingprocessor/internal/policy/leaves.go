package policy

import (
	"errors"
	"fmt"
	"hash/fnv"
	"math"
	"math/big"
	"regexp"
	"strings"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

type latency struct {
	slot         int
	lower, upper int64
	perService   map[string]int64
}

func newLatency(c LatencyConfig, slot int) (evaluator, error) {
	if c.ThresholdMs < 0 || c.UpperThresholdMs < 0 {
		return nil, errors.New("latency: thresholds must not be negative")
	}
	if c.UpperThresholdMs != 0 && c.UpperThresholdMs <= c.ThresholdMs {
		return nil, errors.New("latency: upper_threshold_ms must be above threshold_ms")
	}
	for svc, ms := range c.ServiceThresholdMs {
		if ms < 0 {
			return nil, fmt.Errorf("latency: service_threshold_ms of %q must not be negative", svc)
		}
	}
	return latency{slot: slot, lower: c.ThresholdMs, upper: c.UpperThresholdMs, perService: c.ServiceThresholdMs}, nil
}

// observe widens the trace's time range and notes the root's and the earliest span's service.
func (l latency) observe(o Observation, rs ptrace.ResourceSpans) {
	st := &o[l.slot]
	anySpan(rs, func(s ptrace.Span) bool {
		if st.first == 0 || s.StartTimestamp() < st.first {
			st.first = s.StartTimestamp()
			if len(l.perService) > 0 {
				st.earliestService = serviceOf(rs)
			}
		}
		st.last = max(st.last, s.EndTimestamp())
		if !st.haveRoot && s.ParentSpanID().IsEmpty() {
			st.haveRoot = true
			if len(l.perService) > 0 {
				st.rootService = serviceOf(rs)
			}
		}
		return false
	})
}

func serviceOf(rs ptrace.ResourceSpans) string {
	v, _ := rs.Resource().Attributes().Get("service.name")
	return v.Str()
}

// decide measures the whole trace, earliest start to latest end: contrib stops at the first span
// that brings the running span into range, which differs only with an upper threshold.
func (l latency) decide(o Observation, _ pcommon.TraceID, _ int64, _ time.Time) Decision {
	st := &o[l.slot]
	if st.last < st.first {
		return NotSampled
	}
	ms := time.Duration(st.last - st.first).Milliseconds()
	lower := l.lower
	if len(l.perService) > 0 {
		svc := st.earliestService
		if st.haveRoot {
			svc = st.rootService
		}
		if own, ok := l.perService[svc]; ok {
			lower = own
		}
	}
	if l.upper == 0 {
		return decision(ms >= lower)
	}
	return decision(lower < ms && ms <= l.upper)
}

type statusCode struct {
	slot  int
	codes [3]bool
}

func newStatusCode(c StatusCodeConfig, slot int) (evaluator, error) {
	if len(c.StatusCodes) == 0 {
		return nil, errors.New("status_code: status_codes needs at least one of OK, ERROR, UNSET")
	}
	s := statusCode{slot: slot}
	for _, name := range c.StatusCodes {
		switch name {
		case "OK":
			s.codes[ptrace.StatusCodeOk] = true
		case "ERROR":
			s.codes[ptrace.StatusCodeError] = true
		case "UNSET":
			s.codes[ptrace.StatusCodeUnset] = true
		default:
			return nil, fmt.Errorf("status_code: unknown status code %q (OK, ERROR, UNSET)", name)
		}
	}
	return s, nil
}

func (s statusCode) observe(o Observation, rs ptrace.ResourceSpans) {
	st := &o[s.slot]
	st.hit = st.hit || anySpan(rs, func(sp ptrace.Span) bool {
		c := sp.Status().Code()
		return int(c) < len(s.codes) && s.codes[c]
	})
}

func (s statusCode) decide(o Observation, _ pcommon.TraceID, _ int64, _ time.Time) Decision {
	return decision(o[s.slot].hit)
}

// defaultHashSalt is contrib's, so that a trace kept by contrib's processor at a percentage is
// kept here at the same one.
const defaultHashSalt = "default-hash-seed"

type probabilistic struct {
	noObservation
	salt      string
	threshold uint64
}

func newProbabilistic(c ProbabilisticConfig) (evaluator, error) {
	if c.SamplingPercentage < 0 || c.SamplingPercentage > 100 || math.IsNaN(c.SamplingPercentage) {
		return nil, errors.New("probabilistic: sampling_percentage must be within 0-100")
	}
	salt := c.HashSalt
	if salt == "" {
		salt = defaultHashSalt
	}
	// The share of the 64-bit hash space, computed in big floats: float64 cannot hold 2^64-1.
	space := new(big.Float).SetUint64(math.MaxUint64)
	threshold, _ := space.Mul(space, big.NewFloat(c.SamplingPercentage/100)).Uint64()
	return probabilistic{salt: salt, threshold: threshold}, nil
}

func (p probabilistic) decide(_ Observation, id pcommon.TraceID, _ int64, _ time.Time) Decision {
	h := fnv.New64a()
	_, _ = h.Write([]byte(p.salt))
	_, _ = h.Write(id[:])
	return decision(h.Sum64() <= p.threshold)
}

// attribute keeps a trace with a resource or span attribute key whose value matches; with
// invert, it keeps the traces where none does. Spans' empty strings never match, as in contrib.
type attribute struct {
	slot   int
	key    string
	match  func(v pcommon.Value, onSpan bool) bool
	invert bool
}

func (a attribute) observe(o Observation, rs ptrace.ResourceSpans) {
	st := &o[a.slot]
	if st.hit {
		return
	}
	if v, ok := rs.Resource().Attributes().Get(a.key); ok && a.match(v, false) {
		st.hit = true
		return
	}
	st.hit = anySpan(rs, func(s ptrace.Span) bool {
		v, ok := s.Attributes().Get(a.key)
		return ok && a.match(v, true)
	})
}

func (a attribute) decide(o Observation, _ pcommon.TraceID, _ int64, _ time.Time) Decision {
	return decision(o[a.slot].hit != a.invert)
}

// regexCacheLimit bounds the remembered regular-expression results when cache_max_size is unset.
const regexCacheLimit = 128

func newStringAttribute(c StringAttributeConfig, slot int) (evaluator, error) {
	if c.Key == "" {
		return nil, errors.New("string_attribute: key must be set")
	}
	if !c.EnabledRegexMatching {
		set := map[string]bool{}
		for _, v := range c.Values {
			if v != "" {
				set[v] = true
			}
		}
		return attribute{slot: slot, key: c.Key, invert: c.InvertMatch, match: func(v pcommon.Value, onSpan bool) bool {
			s, ok := stringOf(v, onSpan)
			return ok && set[s]
		}}, nil
	}
	res, err := checkRegexps(c.Values)
	if err != nil {
		return nil, err
	}
	limit := c.CacheMaxSize
	if limit <= 0 {
		limit = regexCacheLimit
	}
	m := &regexMatcher{res: res, seen: map[string]bool{}, limit: limit}
	return attribute{slot: slot, key: c.Key, invert: c.InvertMatch, match: func(v pcommon.Value, onSpan bool) bool {
		s, ok := stringOf(v, onSpan)
		return ok && m.matches(s)
	}}, nil
}

// stringOf is a string value to match; other types do not match (contrib reads them as "").
func stringOf(v pcommon.Value, onSpan bool) (string, bool) {
	if v.Type() != pcommon.ValueTypeStr || (onSpan && v.Str() == "") {
		return "", false
	}
	return v.Str(), true
}

// regexMatcher remembers recent results: attribute values repeat across traces (routes,
// services). The memory is cleared when full rather than tracking recency.
type regexMatcher struct {
	res   []*regexp.Regexp
	seen  map[string]bool
	limit int
}

func (m *regexMatcher) matches(s string) bool {
	if r, ok := m.seen[s]; ok {
		return r
	}
	r := false
	for _, re := range m.res {
		if re.MatchString(s) {
			r = true
			break
		}
	}
	if len(m.seen) >= m.limit {
		clear(m.seen)
	}
	m.seen[s] = r
	return r
}

func newNumericAttribute(c NumericAttributeConfig, slot int) (evaluator, error) {
	if c.Key == "" {
		return nil, errors.New("numeric_attribute: key must be set")
	}
	if c.MinValue == nil && c.MaxValue == nil {
		return nil, errors.New("numeric_attribute: min_value or max_value must be set")
	}
	lo, hi := int64(math.MinInt64), int64(math.MaxInt64)
	if c.MinValue != nil {
		lo = *c.MinValue
	}
	if c.MaxValue != nil {
		hi = *c.MaxValue
	}
	if lo > hi {
		return nil, errors.New("numeric_attribute: min_value is above max_value")
	}
	return attribute{slot: slot, key: c.Key, invert: c.InvertMatch, match: func(v pcommon.Value, _ bool) bool {
		return v.Type() == pcommon.ValueTypeInt && v.Int() >= lo && v.Int() <= hi
	}}, nil
}

func newBooleanAttribute(c BooleanAttributeConfig, slot int) (evaluator, error) {
	if c.Key == "" {
		return nil, errors.New("boolean_attribute: key must be set")
	}
	return attribute{slot: slot, key: c.Key, invert: c.InvertMatch, match: func(v pcommon.Value, _ bool) bool {
		return v.Type() == pcommon.ValueTypeBool && v.Bool() == c.Value
	}}, nil
}

type spanCount struct {
	noObservation
	lo, hi int64
}

func newSpanCount(c SpanCountConfig) (evaluator, error) {
	if c.MinSpans < 0 || c.MaxSpans < 0 || (c.MaxSpans != 0 && c.MaxSpans < c.MinSpans) {
		return nil, errors.New("span_count: need 0 <= min_spans <= max_spans (max_spans 0: no maximum)")
	}
	return spanCount{lo: int64(c.MinSpans), hi: int64(c.MaxSpans)}, nil
}

func (c spanCount) decide(_ Observation, _ pcommon.TraceID, spans int64, _ time.Time) Decision {
	return decision(spans >= c.lo && (c.hi == 0 || spans <= c.hi))
}

type traceState struct {
	slot   int
	key    string
	values map[string]bool
}

func newTraceState(c TraceStateConfig, slot int) (evaluator, error) {
	if c.Key == "" || len(c.Values) == 0 {
		return nil, errors.New("trace_state: key and values must be set")
	}
	ts := traceState{slot: slot, key: c.Key, values: map[string]bool{}}
	for _, v := range c.Values {
		ts.values[v] = true
	}
	return ts, nil
}

// observe reads the W3C tracestate list (key=value members separated by commas).
func (ts traceState) observe(o Observation, rs ptrace.ResourceSpans) {
	st := &o[ts.slot]
	st.hit = st.hit || anySpan(rs, func(s ptrace.Span) bool {
		for member := range strings.SplitSeq(s.TraceState().AsRaw(), ",") {
			k, v, ok := strings.Cut(strings.TrimSpace(member), "=")
			if ok && k == ts.key && ts.values[v] {
				return true
			}
		}
		return false
	})
}

func (ts traceState) decide(o Observation, _ pcommon.TraceID, _ int64, _ time.Time) Decision {
	return decision(o[ts.slot].hit)
}

type rateLimiting struct {
	noObservation
	limit  int64
	second int64
	used   int64
}

func newRateLimiting(c RateLimitingConfig) (evaluator, error) {
	if c.SpansPerSecond <= 0 {
		return nil, errors.New("rate_limiting: spans_per_second must be above 0")
	}
	return &rateLimiting{limit: c.SpansPerSecond}, nil
}

// decide keeps a trace while the spans kept in this wall-clock second stay below the limit.
func (r *rateLimiting) decide(_ Observation, _ pcommon.TraceID, spans int64, now time.Time) Decision {
	if sec := now.Unix(); sec != r.second {
		r.second, r.used = sec, 0
	}
	if r.used+spans >= r.limit {
		return NotSampled
	}
	r.used += spans
	return Sampled
}
