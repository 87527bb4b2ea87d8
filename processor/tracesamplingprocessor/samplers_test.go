package tracesamplingprocessor

import (
	"context"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/processor/processortest"

	"github.com/tracegate/tracegate/processor/tracesamplingprocessor/internal/metadata"
	"github.com/tracegate/tracegate/processor/tracesamplingprocessor/internal/metadatatest"
)

// 100 failing priority-0 chunks a second of one shape for a minute: the error sampler holds them
// to about errors_per_second once its rates settle (they are recomputed every 5 s).
func TestErrorSamplerBudget(t *testing.T) {
	p, now := newTestProcessor(t, func(c *Config) { c.Datadog.ErrorsPerSecond = 10 })
	rng := rand.New(rand.NewPCG(1, 2))
	keptPerSecond := make([]int, 60)
	for sec := range 60 {
		for range 100 {
			s := dd(rng.Uint64(), 0)
			s.err = true
			keptPerSecond[sec] += len(process(t, p, batch(s)))
			*now = now.Add(10 * time.Millisecond)
		}
	}
	settled := 0
	for _, k := range keptPerSecond[15:] {
		settled += k
	}
	avg := float64(settled) / 45
	assert.InDelta(t, 10, avg, 3, "kept per second once settled: %v", keptPerSecond)
	assert.Greater(t, keptPerSecond[0], 10, "the first second keeps more: no rate is known yet")
}

func TestRareSampler(t *testing.T) {
	p, now := newTestProcessor(t, func(c *Config) {
		c.Datadog.RareSampler = RareSamplerConfig{Enabled: true, TracesPerSecond: 5, Cooldown: time.Minute, Cardinality: 200}
	})
	chunk := func(trace uint64, resource string) ptrace.Traces {
		s := dd(trace, 0)
		s.resource = resource
		s.attrs = map[string]any{attrResourceName: resource}
		return batch(s)
	}
	assert.Len(t, process(t, p, chunk(1, "GET /a")), 1, "a new signature is rare")
	assert.Empty(t, process(t, p, chunk(2, "GET /a")), "seen within the cooldown")
	assert.Len(t, process(t, p, chunk(3, "GET /b")), 1, "another resource is another signature")
	assert.Empty(t, process(t, p, batch(dd(4, -1))), "never for a user reject")
	*now = now.Add(61 * time.Second)
	assert.Len(t, process(t, p, chunk(5, "GET /a")), 1, "rare again after the cooldown")
}

// A chunk the tracer rejected is dropped before the rare sampler sees it, as the agent drops it:
// its signature stays unseen and it spends none of the limiter's tokens.
func TestRareSamplerSkipsRejects(t *testing.T) {
	p, _ := newTestProcessor(t, func(c *Config) {
		c.Datadog.RareSampler = RareSamplerConfig{Enabled: true, TracesPerSecond: 1, Cooldown: time.Minute, Cardinality: 200}
	})
	chunk := func(trace uint64, priority int64, resource string) ptrace.Traces {
		s := dd(trace, priority)
		s.attrs = map[string]any{attrResourceName: resource}
		return batch(s)
	}
	for i := range 60 { // more than the burst of 50
		assert.Empty(t, process(t, p, chunk(uint64(i+1), -1, "GET /new")), "a user reject")
	}
	assert.Len(t, process(t, p, chunk(100, 0, "GET /new")), 1, "the signature is still rare, and a token is left")
}

// The rare sampler's limiter: at most its burst of 50, then traces_per_second.
func TestRareSamplerLimit(t *testing.T) {
	p, now := newTestProcessor(t, func(c *Config) {
		c.Datadog.RareSampler = RareSamplerConfig{Enabled: true, TracesPerSecond: 5, Cooldown: time.Hour, Cardinality: 10_000}
	})
	kept := 0
	for i := range 200 {
		s := dd(uint64(i+1), 0)
		s.attrs = map[string]any{attrResourceName: "GET /" + string(rune('a'+i%26)) + string(rune('a'+i/26))}
		kept += len(process(t, p, batch(s)))
	}
	assert.Equal(t, 50, kept, "the burst")
	*now = now.Add(2 * time.Second)
	for i := range 200 {
		s := dd(uint64(1000+i), 0)
		s.attrs = map[string]any{attrResourceName: "POST /" + string(rune('a'+i%26)) + string(rune('a'+i/26))}
		kept += len(process(t, p, batch(s)))
	}
	assert.Equal(t, 60, kept, "5 a second for 2 s")
}

func TestDatakitRules(t *testing.T) {
	web := func(trace uint64, status int64) spanSpec {
		s := otel(trace)
		s.kind = ptrace.SpanKindServer
		s.attrs = map[string]any{"http.response.status_code": status}
		return s
	}
	withErr := func(s spanSpec) spanSpec { s.err = true; return s }
	health := spanSpec{trace: 7, id: 2, parent: 1, service: "web", resource: "GET /health", priority: priorityNone}
	tests := []struct {
		name   string
		dk     DatakitConfig
		in     []spanSpec
		kept   []uint64
		reason string
	}{
		{
			"close_resource on any span drops the trace",
			DatakitConfig{SamplingRate: 1, CloseResource: map[string][]string{"*": {"^GET /health$"}}},
			[]spanSpec{otel(7), health, otel(8)},
			[]uint64{8},
			"close_resource",
		},
		{
			"close_resource of another service",
			DatakitConfig{SamplingRate: 1, CloseResource: map[string][]string{"billing": {"health"}}},
			[]spanSpec{otel(7), health},
			[]uint64{7},
			"",
		},
		{
			"close_resource beats an error",
			DatakitConfig{SamplingRate: 1, CloseResource: map[string][]string{"web": {"health"}}},
			[]spanSpec{withErr(otel(7)), health},
			nil, "close_resource",
		},
		{
			"omit_err_status",
			DatakitConfig{SamplingRate: 1, OmitErrStatus: []string{"404"}},
			[]spanSpec{web(1, 404), web(2, 200)},
			[]uint64{2},
			"omit_err_status",
		},
		{
			"an error trace is kept despite omit_err_status",
			DatakitConfig{SamplingRate: 1, OmitErrStatus: []string{"404"}},
			[]spanSpec{withErr(web(1, 404))},
			[]uint64{1},
			"error",
		},
		{
			"sampling_rate keeps low ids",
			DatakitConfig{SamplingRate: 0.1},
			[]spanSpec{otel(10_000 + 999), otel(10_000 + 1000), otel(10_000 + 1001)},
			[]uint64{10_999, 11_000},
			"sampling_rate",
		},
		{
			"errors bypass the sampler",
			DatakitConfig{SamplingRate: 0.1},
			[]spanSpec{withErr(otel(5_000))},
			[]uint64{5_000},
			"error",
		},
		{
			"user keep bypasses the sampler",
			DatakitConfig{SamplingRate: 0.1},
			[]spanSpec{dd(5_000, 2), dd(5_001, 1)},
			[]uint64{5_000},
			"",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tel := componenttest.NewTelemetry()
			t.Cleanup(func() { require.NoError(t, tel.Shutdown(context.Background())) })
			cfg := createDefaultConfig().(*Config)
			cfg.Datakit = tt.dk
			require.NoError(t, cfg.Validate())
			p, err := newSamplingProcessor(metadatatest.NewSettings(tel), cfg)
			require.NoError(t, err)
			assert.ElementsMatch(t, tt.kept, keys(process(t, p, batch(tt.in...))))
			if tt.reason != "" {
				decision := "dropped"
				if tt.reason == "error" {
					decision = "kept"
				}
				assertTraces(t, tel, decision, tt.reason, 1)
			}
		})
	}
}

func TestKeepRareResource(t *testing.T) {
	p, now := newTestProcessor(t, func(c *Config) { c.Datakit = DatakitConfig{SamplingRate: 0.0001, KeepRareResource: true} })
	assert.Len(t, process(t, p, batch(otel(5_555))), 1, "the first GET / of the hour")
	assert.Empty(t, process(t, p, batch(otel(5_556))), "the second is up to the sampler")
	*now = now.Add(time.Hour + time.Second)
	assert.Len(t, process(t, p, batch(otel(5_557))), 1, "an hour later it is rare again")
}

// Two replicas with the same rate keep the same traces: the decision reads only the trace id.
func TestSamplingRateAgreesAcrossReplicas(t *testing.T) {
	edit := func(c *Config) { c.Datakit.SamplingRate = 0.25 }
	a, _ := newTestProcessor(t, edit)
	b, _ := newTestProcessor(t, edit)
	rng := rand.New(rand.NewPCG(3, 4))
	specs := make([]spanSpec, 4000)
	for i := range specs {
		specs[i] = otel(rng.Uint64())
	}
	keptA := process(t, a, batch(specs...))
	keptB := process(t, b, batch(specs[2000:]...))
	for id := range keptB {
		assert.Contains(t, keptA, id)
	}
	assert.InDelta(t, 1000, len(keptA), 100)
}

func TestElasticUnsampledTransactions(t *testing.T) {
	tel := componenttest.NewTelemetry()
	t.Cleanup(func() { require.NoError(t, tel.Shutdown(context.Background())) })
	p, err := newSamplingProcessor(metadatatest.NewSettings(tel), createDefaultConfig().(*Config))
	require.NoError(t, err)
	unsampled := otel(1)
	unsampled.attrs = map[string]any{attrUnsampled: false}
	sampled := otel(2)
	sampled.attrs = map[string]any{attrUnsampled: true}
	assert.Equal(t, map[uint64]int{2: 1}, process(t, p, batch(unsampled, sampled)))
	assertTraces(t, tel, "dropped", "unsampled_transaction", 1)

	keep, _ := newTestProcessor(t, func(c *Config) { c.Elastic.DropUnsampled = false })
	assert.Len(t, process(t, keep, batch(unsampled, sampled)), 2)
}

func TestSpansDroppedCounted(t *testing.T) {
	tel := componenttest.NewTelemetry()
	t.Cleanup(func() { require.NoError(t, tel.Shutdown(context.Background())) })
	p, err := newSamplingProcessor(metadatatest.NewSettings(tel), createDefaultConfig().(*Config))
	require.NoError(t, err)
	child := spanSpec{trace: 1, id: 2, parent: 1, service: "db", resource: "SELECT", priority: priorityNone}
	process(t, p, batch(dd(1, -1), child, dd(2, 0)))
	m, err := tel.GetMetric("otelcol.processor.tracesampling.spans_dropped")
	require.NoError(t, err)
	got := map[string]int64{}
	for _, dp := range dataPoints(m) {
		r, _ := dp.Attributes.Value("reason")
		got[r.AsString()] = dp.Value
	}
	assert.Equal(t, map[string]int64{"priority_user_reject": 2, "priority_auto_reject": 1}, got)
}

func TestShutdown(t *testing.T) {
	processortest.VerifyShutdown(t, NewFactory(), createDefaultConfig())
	_ = metadata.Type
}
