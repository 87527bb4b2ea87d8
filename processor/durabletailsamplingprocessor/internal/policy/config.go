package policy

import (
	"errors"
	"fmt"
	"regexp"
)

// The policy types, spelled as contrib's tail_sampling spells them so that its policy YAML loads
// here unchanged.
const (
	TypeAlwaysSample     = "always_sample"
	TypeLatency          = "latency"
	TypeStatusCode       = "status_code"
	TypeProbabilistic    = "probabilistic"
	TypeStringAttribute  = "string_attribute"
	TypeNumericAttribute = "numeric_attribute"
	TypeBooleanAttribute = "boolean_attribute"
	TypeSpanCount        = "span_count"
	TypeTraceState       = "trace_state"
	TypeRateLimiting     = "rate_limiting"
	TypeAnd              = "and"
	TypeDrop             = "drop"
)

// unsupported names the contrib types this processor does not evaluate, so a user bringing such
// a policy is told at start which one, instead of having it ignored.
var unsupported = map[string]string{
	"composite":      "use several policies (any kept decision keeps the trace) and rate_limiting",
	"not":            "use invert_match on the attribute policies",
	"ottl_condition": "use the attribute, status_code and latency policies",
	"bytes_limiting": "use rate_limiting",
	"trace_flags":    "use probabilistic",
}

// Config is one policy. Its keys are those of contrib's tail_sampling policies; a policy reads
// only the block named after its type.
type Config struct {
	SubConfig `mapstructure:",squash"`
	And       SubPoliciesConfig `mapstructure:"and"`
	Drop      DropConfig        `mapstructure:"drop"`
}

// SubConfig is a policy of any type but and/drop: the whole of a policy inside and/drop.
type SubConfig struct {
	Name             string                 `mapstructure:"name"`
	Type             string                 `mapstructure:"type"`
	Latency          LatencyConfig          `mapstructure:"latency"`
	StatusCode       StatusCodeConfig       `mapstructure:"status_code"`
	Probabilistic    ProbabilisticConfig    `mapstructure:"probabilistic"`
	StringAttribute  StringAttributeConfig  `mapstructure:"string_attribute"`
	NumericAttribute NumericAttributeConfig `mapstructure:"numeric_attribute"`
	BooleanAttribute BooleanAttributeConfig `mapstructure:"boolean_attribute"`
	SpanCount        SpanCountConfig        `mapstructure:"span_count"`
	TraceState       TraceStateConfig       `mapstructure:"trace_state"`
	RateLimiting     RateLimitingConfig     `mapstructure:"rate_limiting"`
}

// LatencyConfig keeps a trace whose duration (earliest span start to latest span end) is at least
// ThresholdMs, or within (ThresholdMs, UpperThresholdMs] when an upper bound is set.
// ServiceThresholdMs (tracegate's own key) sets the lower bound per service: the service of the
// trace's root span, or of its earliest span while the root has not arrived.
type LatencyConfig struct {
	ThresholdMs        int64            `mapstructure:"threshold_ms"`
	UpperThresholdMs   int64            `mapstructure:"upper_threshold_ms"`
	ServiceThresholdMs map[string]int64 `mapstructure:"service_threshold_ms"`
}

// StatusCodeConfig keeps a trace with a span of one of these status codes (OK, ERROR, UNSET).
type StatusCodeConfig struct {
	StatusCodes []string `mapstructure:"status_codes"`
}

// ProbabilisticConfig keeps a share of traces chosen by a hash of the salt and the trace id, the
// hash contrib uses: every replica, and contrib's processor with the same salt, keeps the same ones.
type ProbabilisticConfig struct {
	HashSalt           string  `mapstructure:"hash_salt"`
	SamplingPercentage float64 `mapstructure:"sampling_percentage"`
}

// StringAttributeConfig keeps a trace with a resource or span attribute Key whose string value is
// one of Values (or matches one of them as a regular expression).
type StringAttributeConfig struct {
	Key                  string   `mapstructure:"key"`
	Values               []string `mapstructure:"values"`
	EnabledRegexMatching bool     `mapstructure:"enabled_regex_matching"`
	CacheMaxSize         int      `mapstructure:"cache_max_size"`
	InvertMatch          bool     `mapstructure:"invert_match"`
}

// NumericAttributeConfig keeps a trace with an integer attribute Key within [MinValue, MaxValue];
// an unset bound is open.
type NumericAttributeConfig struct {
	Key         string `mapstructure:"key"`
	MinValue    *int64 `mapstructure:"min_value"`
	MaxValue    *int64 `mapstructure:"max_value"`
	InvertMatch bool   `mapstructure:"invert_match"`
}

// BooleanAttributeConfig keeps a trace with a boolean attribute Key equal to Value.
type BooleanAttributeConfig struct {
	Key         string `mapstructure:"key"`
	Value       bool   `mapstructure:"value"`
	InvertMatch bool   `mapstructure:"invert_match"`
}

// SpanCountConfig keeps a trace of at least MinSpans spans (and at most MaxSpans when set).
type SpanCountConfig struct {
	MinSpans int32 `mapstructure:"min_spans"`
	MaxSpans int32 `mapstructure:"max_spans"`
}

// TraceStateConfig keeps a trace with a span whose W3C tracestate has Key set to one of Values.
type TraceStateConfig struct {
	Key    string   `mapstructure:"key"`
	Values []string `mapstructure:"values"`
}

// RateLimitingConfig keeps traces while fewer than SpansPerSecond spans were kept by this policy
// in the current second.
type RateLimitingConfig struct {
	SpansPerSecond int64 `mapstructure:"spans_per_second"`
}

// SubPoliciesConfig is the and policy: kept when every sub-policy keeps.
type SubPoliciesConfig struct {
	SubPolicies []SubConfig `mapstructure:"and_sub_policy"`
}

// DropConfig is the drop policy: the trace is dropped, whatever any other policy says, when every
// sub-policy matches.
type DropConfig struct {
	SubPolicies []SubConfig `mapstructure:"drop_sub_policy"`
}

// Validate checks every policy as New would build it.
func Validate(cfgs []Config) error {
	if len(cfgs) == 0 {
		return errors.New("policies: at least one policy is needed (always_sample keeps every trace)")
	}
	names := map[string]bool{}
	for i := range cfgs {
		c := &cfgs[i]
		if c.Name == "" {
			return fmt.Errorf("policies[%d]: name must be set", i)
		}
		if names[c.Name] {
			return fmt.Errorf("policies: the name %q is used twice", c.Name)
		}
		names[c.Name] = true
		slots := 0
		if _, err := build(c.SubConfig, c.And.SubPolicies, c.Drop.SubPolicies, true, &slots); err != nil {
			return fmt.Errorf("policy %q: %w", c.Name, err)
		}
	}
	return nil
}

func checkRegexps(values []string) ([]*regexp.Regexp, error) {
	out := make([]*regexp.Regexp, 0, len(values))
	for _, v := range values {
		re, err := regexp.Compile(v)
		if err != nil {
			return nil, fmt.Errorf("string_attribute: invalid regular expression %q: %w", v, err)
		}
		out = append(out, re)
	}
	return out, nil
}
