package policy

import (
	"context"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/open-telemetry/opentelemetry-collector-contrib/processor/tailsamplingprocessor"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/processor/processortest"
)

// The policy sets both processors are given, as YAML maps: each kind this package shares with
// contrib's tail_sampling v0.148.0. Not here: rate_limiting (depends on the second a trace is
// decided in) and latency with upper_threshold_ms (contrib decides on a running span, README).
var differentialPolicies = map[string][]any{
	"tracegate defaults": {
		map[string]any{"name": "errors", "type": "status_code", "status_code": map[string]any{"status_codes": []any{"ERROR"}}},
		map[string]any{"name": "slow", "type": "latency", "latency": map[string]any{"threshold_ms": 1000}},
		map[string]any{"name": "ten-percent", "type": "probabilistic", "probabilistic": map[string]any{"sampling_percentage": 10}},
	},
	"salted share": {
		map[string]any{"name": "quarter", "type": "probabilistic", "probabilistic": map[string]any{"sampling_percentage": 25, "hash_salt": "tracegate"}},
	},
	"strings": {
		map[string]any{"name": "routes", "type": "string_attribute", "string_attribute": map[string]any{"key": "http.route", "values": []any{"/orders", "/pay"}}},
		map[string]any{"name": "not-api", "type": "string_attribute", "string_attribute": map[string]any{"key": "service.name", "values": []any{"api"}, "invert_match": true}},
	},
	"regex": {
		map[string]any{"name": "user-routes", "type": "string_attribute", "string_attribute": map[string]any{"key": "http.route", "values": []any{"^/users/"}, "enabled_regex_matching": true}},
	},
	"numbers": {
		map[string]any{"name": "5xx", "type": "numeric_attribute", "numeric_attribute": map[string]any{"key": "http.status_code", "min_value": 500, "max_value": 599}},
	},
	"numbers inverted": {
		map[string]any{"name": "no-2xx", "type": "numeric_attribute", "numeric_attribute": map[string]any{"key": "http.status_code", "min_value": 200, "max_value": 299, "invert_match": true}},
	},
	"booleans": {
		map[string]any{"name": "debug", "type": "boolean_attribute", "boolean_attribute": map[string]any{"key": "debug", "value": true}},
	},
	"span count": {
		map[string]any{"name": "mid", "type": "span_count", "span_count": map[string]any{"min_spans": 3, "max_spans": 5}},
	},
	"trace state": {
		map[string]any{"name": "gold", "type": "trace_state", "trace_state": map[string]any{"key": "tier", "values": []any{"gold"}}},
	},
	"and": {
		map[string]any{"name": "slow-checkout", "type": "and", "and": map[string]any{"and_sub_policy": []any{
			map[string]any{"name": "checkout", "type": "string_attribute", "string_attribute": map[string]any{"key": "service.name", "values": []any{"checkout"}}},
			map[string]any{"name": "slow", "type": "latency", "latency": map[string]any{"threshold_ms": 500}},
		}}},
	},
	"drop": {
		map[string]any{"name": "all", "type": "always_sample"},
		map[string]any{"name": "no-health", "type": "drop", "drop": map[string]any{"drop_sub_policy": []any{
			map[string]any{"name": "health", "type": "string_attribute", "string_attribute": map[string]any{"key": "http.route", "values": []any{"/health"}}},
		}}},
	},
}

// TestDifferentialWithContrib feeds the same random traces to contrib's tail_sampling processor
// and to these policies, loaded from the same YAML, and expects the same traces kept.
func TestDifferentialWithContrib(t *testing.T) {
	traces := randomTraces(rand.New(rand.NewPCG(7, 11)), 600)
	var wg sync.WaitGroup
	for name, policies := range differentialPolicies {
		wg.Go(func() { // contrib decides a second after the first span: run the sets together
			t.Run(name, func(t *testing.T) {
				want := contribKept(t, policies, traces)
				got := ourKept(t, policies, traces)
				assert.Equal(t, want, got)
				assert.NotEmpty(t, got, "a policy set that keeps nothing proves little")
				assert.Less(t, len(got), len(traces), "nor one that keeps everything")
			})
		})
	}
	wg.Wait()
}

func ourKept(t *testing.T, policies []any, traces []ptrace.Traces) map[pcommon.TraceID]bool {
	var cfg struct {
		Policies []Config `mapstructure:"policies"`
	}
	require.NoError(t, confmap.NewFromStringMap(map[string]any{"policies": policies}).Unmarshal(&cfg))
	require.NoError(t, Validate(cfg.Policies))
	set, err := New(cfg.Policies, false)
	require.NoError(t, err)
	kept := map[pcommon.TraceID]bool{}
	for _, td := range traces {
		id := td.ResourceSpans().At(0).ScopeSpans().At(0).Spans().At(0).TraceID()
		now := time.Now()
		d, by := set.Decide(id, &Trace{Spans: td, SpanCount: int64(td.SpanCount())}, now)
		// The same decision from fragments observed apart (one per resource) and merged.
		merged := set.NewObservation()
		for _, rs := range td.ResourceSpans().All() {
			frag := ptrace.NewTraces()
			rs.CopyTo(frag.ResourceSpans().AppendEmpty())
			o := set.NewObservation()
			set.Observe(o, frag)
			merged.Merge(o)
		}
		if d2, by2 := set.DecideObserved(id, merged, int64(td.SpanCount()), now); d2 != d || by2 != by {
			t.Errorf("trace %v: %v by %s whole, %v by %s from merged fragments", id, d, by, d2, by2)
		}
		if d == Sampled {
			kept[id] = true
		}
	}
	return kept
}

func contribKept(t *testing.T, policies []any, traces []ptrace.Traces) map[pcommon.TraceID]bool {
	f := tailsamplingprocessor.NewFactory()
	cfg := f.CreateDefaultConfig().(*tailsamplingprocessor.Config)
	require.NoError(t, confmap.NewFromStringMap(map[string]any{"decision_wait": "1s", "policies": policies}).Unmarshal(cfg))
	sink := new(consumertest.TracesSink)
	p, err := f.CreateTraces(context.Background(), processortest.NewNopSettings(component.MustNewType("tail_sampling")), cfg, sink)
	require.NoError(t, err)
	require.NoError(t, p.Start(context.Background(), componenttest.NewNopHost()))
	for _, td := range traces {
		c := ptrace.NewTraces()
		td.CopyTo(c)
		require.NoError(t, p.ConsumeTraces(context.Background(), c))
	}
	time.Sleep(3 * time.Second) // decision_wait and two of contrib's one-second ticks
	require.NoError(t, p.Shutdown(context.Background()))
	kept := map[pcommon.TraceID]bool{}
	for _, td := range sink.AllTraces() {
		for _, rs := range td.ResourceSpans().All() {
			for _, ss := range rs.ScopeSpans().All() {
				for _, s := range ss.Spans().All() {
					kept[s.TraceID()] = true
				}
			}
		}
	}
	return kept
}

// randomTraces builds traces of 1-6 spans with the attributes the policies read.
func randomTraces(r *rand.Rand, n int) []ptrace.Traces {
	services := []string{"api", "checkout", "db", "cache"}
	routes := []string{"/orders", "/pay", "/health", "/users/42", "/users/7/cart", ""}
	codes := []int64{200, 201, 404, 500, 503}
	out := make([]ptrace.Traces, n)
	for i := range out {
		td := ptrace.NewTraces()
		var id pcommon.TraceID
		for j := range id {
			id[j] = byte(r.UintN(256))
		}
		start := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
		rootDur := time.Duration(r.IntN(2000)) * time.Millisecond
		for k := range 1 + r.IntN(6) {
			rs := td.ResourceSpans().AppendEmpty()
			rs.Resource().Attributes().PutStr("service.name", services[r.IntN(len(services))])
			s := rs.ScopeSpans().AppendEmpty().Spans().AppendEmpty()
			s.SetTraceID(id)
			s.SetSpanID(pcommon.SpanID{byte(k + 1), byte(i), byte(i >> 8)})
			d := rootDur
			if k > 0 {
				s.SetParentSpanID(pcommon.SpanID{1, byte(i), byte(i >> 8)})
				d = time.Duration(r.IntN(int(rootDur/time.Millisecond)+1)) * time.Millisecond
			}
			s.SetStartTimestamp(pcommon.NewTimestampFromTime(start))
			s.SetEndTimestamp(pcommon.NewTimestampFromTime(start.Add(d)))
			if r.IntN(20) == 0 {
				s.Status().SetCode(ptrace.StatusCodeError)
			}
			if route := routes[r.IntN(len(routes))]; route != "" {
				s.Attributes().PutStr("http.route", route)
			}
			s.Attributes().PutInt("http.status_code", codes[r.IntN(len(codes))])
			if r.IntN(10) == 0 {
				s.Attributes().PutBool("debug", r.IntN(2) == 0)
			}
			if r.IntN(8) == 0 {
				s.TraceState().FromRaw("vendor=x,tier=" + []string{"gold", "silver"}[r.IntN(2)])
			}
		}
		out[i] = td
	}
	return out
}
