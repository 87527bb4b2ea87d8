package tracesamplingprocessor

import (
	"context"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/tracegate/tracegate/internal/testbed/tracemodel"

	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/processor/processortest"

	"github.com/tracegate/tracegate/processor/tracesamplingprocessor/internal/metadata"
)

// The copy of each input is outside the timer, so run with a fixed count: -benchtime 3000x
// (bench-go does); with the default 1s target the untimed copies would take minutes.
//
// benchRequest is one request of tracegen's spans: 10 traces of 10 spans. priority is what each
// trace's spans carry (tracegen sets sampling.priority on every span); keepOneIn marks one trace
// in keepOneIn with priority 1 and the others 0, as a tracer sampling at 1/keepOneIn does.
func benchRequest(rng *rand.Rand, keepOneIn int, otlp bool) ptrace.Traces {
	td := ptrace.NewTraces()
	for i := range 10 {
		tr := tracemodel.OTLPTraces(tracemodel.NewTrace(rng, "checkout", 10, time.Now()))
		rs := tr.ResourceSpans().At(0)
		spans := rs.ScopeSpans().At(0).Spans()
		for k := 0; k < spans.Len(); k++ {
			attrs := spans.At(k).Attributes()
			switch {
			case otlp:
				attrs.Remove(attrPriority)
			case i%keepOneIn == 0:
				attrs.PutInt(attrPriority, 1)
			default:
				attrs.PutInt(attrPriority, 0)
			}
		}
		rs.MoveTo(td.ResourceSpans().AppendEmpty())
	}
	return td
}

func BenchmarkProcessTraces(b *testing.B) {
	cases := []struct {
		name      string
		keepOneIn int
		otlp      bool
		edit      func(*Config)
	}{
		{"otlp-no-priority", 1, true, nil},
		{"priority-all-kept", 1, false, nil},
		{"priority-10pct", 10, false, nil},
		{"priority-10pct-rare", 10, false, func(c *Config) { c.Datadog.RareSampler.Enabled = true }},
		{"datakit-rate-0.1", 1, true, func(c *Config) { c.Datakit.SamplingRate = 0.1 }},
		{"keep-everything", 10, false, func(c *Config) { c.Datadog.HonourPriority = false; c.Elastic.DropUnsampled = false }},
	}
	for _, bc := range cases {
		b.Run(bc.name, func(b *testing.B) {
			cfg := createDefaultConfig().(*Config)
			if bc.edit != nil {
				bc.edit(cfg)
			}
			p, err := newSamplingProcessor(processortest.NewNopSettings(metadata.Type), cfg)
			if err != nil {
				b.Fatal(err)
			}
			rng := rand.New(rand.NewPCG(7, 8))
			const pool = 64
			inputs := make([]ptrace.Traces, pool)
			for i := range inputs {
				inputs[i] = benchRequest(rng, bc.keepOneIn, bc.otlp)
			}
			spans := inputs[0].SpanCount()
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				work := ptrace.NewTraces()
				inputs[i%pool].CopyTo(work)
				b.StartTimer()
				_, _ = p.processTraces(context.Background(), work)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*spans), "ns/span")
		})
	}
}
