package policy

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// span describes one span of a test trace.
type span struct {
	service  string
	root     bool
	start    time.Duration // from the trace's epoch
	duration time.Duration
	status   ptrace.StatusCode
	attrs    map[string]any
	state    string
}

var epoch = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

func traceOf(spans ...span) *Trace {
	td := ptrace.NewTraces()
	for i, s := range spans {
		rs := td.ResourceSpans().AppendEmpty()
		rs.Resource().Attributes().PutStr("service.name", s.service)
		sp := rs.ScopeSpans().AppendEmpty().Spans().AppendEmpty()
		sp.SetSpanID(pcommon.SpanID{byte(i + 1)})
		if !s.root {
			sp.SetParentSpanID(pcommon.SpanID{0xff})
		}
		sp.SetStartTimestamp(pcommon.NewTimestampFromTime(epoch.Add(s.start)))
		sp.SetEndTimestamp(pcommon.NewTimestampFromTime(epoch.Add(s.start + s.duration)))
		sp.Status().SetCode(s.status)
		_ = sp.Attributes().FromRaw(s.attrs)
		sp.TraceState().FromRaw(s.state)
	}
	return &Trace{Spans: td, SpanCount: int64(len(spans))}
}

func i64(v int64) *int64 { p := v; return &p }

func TestLeafPolicies(t *testing.T) {
	slowRoot := traceOf(span{service: "checkout", root: true, duration: 1500 * time.Millisecond},
		span{service: "db", start: 100 * time.Millisecond, duration: 10 * time.Millisecond})
	fast := traceOf(span{service: "checkout", root: true, duration: 20 * time.Millisecond})
	failing := traceOf(span{service: "api", root: true, duration: time.Millisecond},
		span{service: "db", status: ptrace.StatusCodeError, duration: time.Millisecond})
	tagged := traceOf(span{service: "api", root: true, attrs: map[string]any{
		"http.route": "/health", "http.status_code": int64(503), "debug": true, "ratio": 0.5, "empty": "",
	}})
	stated := traceOf(span{service: "api", root: true, state: "vendor=a, tier=gold"})

	tests := []struct {
		name  string
		cfg   SubConfig
		trace *Trace
		want  Decision
	}{
		{"latency above", SubConfig{Type: TypeLatency, Latency: LatencyConfig{ThresholdMs: 1000}}, slowRoot, Sampled},
		{"latency below", SubConfig{Type: TypeLatency, Latency: LatencyConfig{ThresholdMs: 1000}}, fast, NotSampled},
		{"latency exactly at threshold", SubConfig{Type: TypeLatency, Latency: LatencyConfig{ThresholdMs: 1500}}, slowRoot, Sampled},
		{"latency within upper", SubConfig{Type: TypeLatency, Latency: LatencyConfig{ThresholdMs: 1000, UpperThresholdMs: 2000}}, slowRoot, Sampled},
		{"latency above upper", SubConfig{Type: TypeLatency, Latency: LatencyConfig{ThresholdMs: 100, UpperThresholdMs: 1000}}, slowRoot, NotSampled},
		{"latency per root service raises", SubConfig{Type: TypeLatency, Latency: LatencyConfig{ThresholdMs: 1000, ServiceThresholdMs: map[string]int64{"checkout": 2000}}}, slowRoot, NotSampled},
		{"latency per service of another service", SubConfig{Type: TypeLatency, Latency: LatencyConfig{ThresholdMs: 1000, ServiceThresholdMs: map[string]int64{"db": 5000}}}, slowRoot, Sampled},
		{"latency per service lowers", SubConfig{Type: TypeLatency, Latency: LatencyConfig{ThresholdMs: 1000, ServiceThresholdMs: map[string]int64{"checkout": 10}}}, fast, Sampled},
		{"status error", SubConfig{Type: TypeStatusCode, StatusCode: StatusCodeConfig{StatusCodes: []string{"ERROR"}}}, failing, Sampled},
		{"status error absent", SubConfig{Type: TypeStatusCode, StatusCode: StatusCodeConfig{StatusCodes: []string{"ERROR"}}}, fast, NotSampled},
		{"status unset", SubConfig{Type: TypeStatusCode, StatusCode: StatusCodeConfig{StatusCodes: []string{"OK", "UNSET"}}}, fast, Sampled},
		{"always", SubConfig{Type: TypeAlwaysSample}, fast, Sampled},
		{"probabilistic 100", SubConfig{Type: TypeProbabilistic, Probabilistic: ProbabilisticConfig{SamplingPercentage: 100}}, fast, Sampled},
		{"probabilistic 0", SubConfig{Type: TypeProbabilistic, Probabilistic: ProbabilisticConfig{SamplingPercentage: 0}}, fast, NotSampled},
		{"string value", SubConfig{Type: TypeStringAttribute, StringAttribute: StringAttributeConfig{Key: "http.route", Values: []string{"/health"}}}, tagged, Sampled},
		{"string resource value", SubConfig{Type: TypeStringAttribute, StringAttribute: StringAttributeConfig{Key: "service.name", Values: []string{"db"}}}, failing, Sampled},
		{"string other value", SubConfig{Type: TypeStringAttribute, StringAttribute: StringAttributeConfig{Key: "http.route", Values: []string{"/orders"}}}, tagged, NotSampled},
		{"string inverted", SubConfig{Type: TypeStringAttribute, StringAttribute: StringAttributeConfig{Key: "http.route", Values: []string{"/health"}, InvertMatch: true}}, tagged, NotSampled},
		{"string inverted absent", SubConfig{Type: TypeStringAttribute, StringAttribute: StringAttributeConfig{Key: "http.route", Values: []string{"/health"}, InvertMatch: true}}, fast, Sampled},
		{"string regex", SubConfig{Type: TypeStringAttribute, StringAttribute: StringAttributeConfig{Key: "http.route", Values: []string{"^/heal"}, EnabledRegexMatching: true}}, tagged, Sampled},
		{"string regex on a number", SubConfig{Type: TypeStringAttribute, StringAttribute: StringAttributeConfig{Key: "http.status_code", Values: []string{".*"}, EnabledRegexMatching: true}}, tagged, NotSampled},
		{"string empty on a span", SubConfig{Type: TypeStringAttribute, StringAttribute: StringAttributeConfig{Key: "empty", Values: []string{"^$"}, EnabledRegexMatching: true}}, tagged, NotSampled},
		{"numeric in range", SubConfig{Type: TypeNumericAttribute, NumericAttribute: NumericAttributeConfig{Key: "http.status_code", MinValue: i64(500), MaxValue: i64(599)}}, tagged, Sampled},
		{"numeric open max", SubConfig{Type: TypeNumericAttribute, NumericAttribute: NumericAttributeConfig{Key: "http.status_code", MinValue: i64(400)}}, tagged, Sampled},
		{"numeric out of range", SubConfig{Type: TypeNumericAttribute, NumericAttribute: NumericAttributeConfig{Key: "http.status_code", MaxValue: i64(499)}}, tagged, NotSampled},
		{"numeric on a double", SubConfig{Type: TypeNumericAttribute, NumericAttribute: NumericAttributeConfig{Key: "ratio", MinValue: i64(0), MaxValue: i64(1)}}, tagged, NotSampled},
		{"numeric inverted", SubConfig{Type: TypeNumericAttribute, NumericAttribute: NumericAttributeConfig{Key: "http.status_code", MinValue: i64(500), InvertMatch: true}}, tagged, NotSampled},
		{"boolean", SubConfig{Type: TypeBooleanAttribute, BooleanAttribute: BooleanAttributeConfig{Key: "debug", Value: true}}, tagged, Sampled},
		{"boolean other value", SubConfig{Type: TypeBooleanAttribute, BooleanAttribute: BooleanAttributeConfig{Key: "debug", Value: false}}, tagged, NotSampled},
		{"boolean absent, false wanted", SubConfig{Type: TypeBooleanAttribute, BooleanAttribute: BooleanAttributeConfig{Key: "debug", Value: false}}, fast, NotSampled},
		{"span count", SubConfig{Type: TypeSpanCount, SpanCount: SpanCountConfig{MinSpans: 2}}, failing, Sampled},
		{"span count too few", SubConfig{Type: TypeSpanCount, SpanCount: SpanCountConfig{MinSpans: 2}}, fast, NotSampled},
		{"span count too many", SubConfig{Type: TypeSpanCount, SpanCount: SpanCountConfig{MinSpans: 1, MaxSpans: 1}}, failing, NotSampled},
		{"trace state", SubConfig{Type: TypeTraceState, TraceState: TraceStateConfig{Key: "tier", Values: []string{"gold"}}}, stated, Sampled},
		{"trace state other value", SubConfig{Type: TypeTraceState, TraceState: TraceStateConfig{Key: "tier", Values: []string{"silver"}}}, stated, NotSampled},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e, err := buildLeaf(tt.cfg, 0)
			require.NoError(t, err)
			o := make(Observation, 1)
			for _, rs := range tt.trace.Spans.ResourceSpans().All() { // one fragment per resource
				e.observe(o, rs)
			}
			assert.Equal(t, tt.want, e.decide(o, pcommon.TraceID{1}, tt.trace.SpanCount, epoch))
		})
	}
}

func TestDecideCombines(t *testing.T) {
	errs := Config{SubConfig: SubConfig{Name: "errors", Type: TypeStatusCode, StatusCode: StatusCodeConfig{StatusCodes: []string{"ERROR"}}}}
	all := Config{SubConfig: SubConfig{Name: "all", Type: TypeAlwaysSample}}
	health := SubConfig{Name: "health", Type: TypeStringAttribute, StringAttribute: StringAttributeConfig{Key: "http.route", Values: []string{"/health"}}}
	dropHealth := Config{SubConfig: SubConfig{Name: "drop-health", Type: TypeDrop}, Drop: DropConfig{SubPolicies: []SubConfig{health}}}
	andSlowHealth := Config{SubConfig: SubConfig{Name: "slow-health", Type: TypeAnd}, And: SubPoliciesConfig{SubPolicies: []SubConfig{
		health,
		{Name: "slow", Type: TypeLatency, Latency: LatencyConfig{ThresholdMs: 100}},
	}}}

	healthy := traceOf(span{service: "api", root: true, duration: time.Second, attrs: map[string]any{"http.route": "/health"}})
	failing := traceOf(span{service: "api", root: true, status: ptrace.StatusCodeError})
	plain := traceOf(span{service: "api", root: true})

	tests := []struct {
		name       string
		policies   []Config
		firstMatch bool
		trace      *Trace
		want       Decision
		by         string
	}{
		{"first keeping policy named", []Config{errs, all}, false, failing, Sampled, "errors"},
		{"no policy keeps", []Config{errs}, false, plain, NotSampled, NoPolicy},
		{"drop wins over keep", []Config{all, dropHealth}, false, healthy, Dropped, "drop-health"},
		{"drop not matching", []Config{all, dropHealth}, false, plain, Sampled, "all"},
		{"first match stops before drop", []Config{all, dropHealth}, true, healthy, Sampled, "all"},
		{"and needs every sub-policy", []Config{andSlowHealth}, false, healthy, Sampled, "slow-health"},
		{"and with one failing", []Config{andSlowHealth}, false, plain, NotSampled, NoPolicy},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.NoError(t, Validate(tt.policies))
			s, err := New(tt.policies, tt.firstMatch)
			require.NoError(t, err)
			d, by := s.Decide(pcommon.TraceID{1}, tt.trace, epoch)
			assert.Equal(t, tt.want, d)
			assert.Equal(t, tt.by, by)
		})
	}
}

func TestRateLimiting(t *testing.T) {
	e, err := newRateLimiting(RateLimitingConfig{SpansPerSecond: 5})
	require.NoError(t, err)
	two := traceOf(span{root: true}, span{})
	var kept []Decision
	for range 4 {
		kept = append(kept, e.decide(nil, pcommon.TraceID{}, two.SpanCount, epoch))
	}
	// 2+2 = 4 < 5 kept; a third would make 6.
	assert.Equal(t, []Decision{Sampled, Sampled, NotSampled, NotSampled}, kept)
	assert.Equal(t, Sampled, e.decide(nil, pcommon.TraceID{}, two.SpanCount, epoch.Add(time.Second)), "a new second starts afresh")
}

// policies makes a policy list of leaf (or empty and/drop) policies.
func policies(subs ...SubConfig) []Config {
	out := make([]Config, len(subs))
	for i, c := range subs {
		out[i] = Config{SubConfig: c}
	}
	return out
}

func TestValidate(t *testing.T) {
	tests := []struct {
		name     string
		policies []Config
		err      string
	}{
		{"none", nil, "at least one policy"},
		{"no name", policies(SubConfig{Type: TypeAlwaysSample}), "name must be set"},
		{"same name", policies(SubConfig{Name: "a", Type: TypeAlwaysSample}, SubConfig{Name: "a", Type: TypeAlwaysSample}), "used twice"},
		{"no type", policies(SubConfig{Name: "a"}), "type must be set"},
		{"unknown type", policies(SubConfig{Name: "a", Type: "sometimes"}), `unknown type "sometimes"`},
		{"contrib type not here", policies(SubConfig{Name: "a", Type: "ottl_condition"}), "not supported here"},
		{"status code", policies(SubConfig{Name: "a", Type: TypeStatusCode, StatusCode: StatusCodeConfig{StatusCodes: []string{"FAILED"}}}), "unknown status code"},
		{"percentage", policies(SubConfig{Name: "a", Type: TypeProbabilistic, Probabilistic: ProbabilisticConfig{SamplingPercentage: 101}}), "0-100"},
		{"regex", policies(SubConfig{Name: "a", Type: TypeStringAttribute, StringAttribute: StringAttributeConfig{Key: "k", Values: []string{"("}, EnabledRegexMatching: true}}), "invalid regular expression"},
		{"numeric bounds", policies(SubConfig{Name: "a", Type: TypeNumericAttribute, NumericAttribute: NumericAttributeConfig{Key: "k"}}), "min_value or max_value"},
		{"latency upper", policies(SubConfig{Name: "a", Type: TypeLatency, Latency: LatencyConfig{ThresholdMs: 10, UpperThresholdMs: 5}}), "upper_threshold_ms"},
		{"rate", policies(SubConfig{Name: "a", Type: TypeRateLimiting}), "spans_per_second"},
		{"empty and", policies(SubConfig{Name: "a", Type: TypeAnd}), "at least one sub-policy"},
		{"nested drop", []Config{{SubConfig: SubConfig{Name: "a", Type: TypeAnd}, And: SubPoliciesConfig{SubPolicies: []SubConfig{{Name: "b", Type: TypeDrop}}}}}, "cannot be nested"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.ErrorContains(t, Validate(tt.policies), tt.err)
		})
	}
}
