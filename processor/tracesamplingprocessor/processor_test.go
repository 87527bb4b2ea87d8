package tracesamplingprocessor

import (
	"context"
	"encoding/binary"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/processor/processortest"

	"github.com/tracegate/tracegate/processor/tracesamplingprocessor/internal/metadata"
	"github.com/tracegate/tracegate/processor/tracesamplingprocessor/internal/metadatatest"
)

// spanSpec describes one test span; trace and id become the low bytes of its ids.
type spanSpec struct {
	trace, id, parent uint64
	service, resource string
	priority          int64 // priorityNone: no sampling.priority attribute
	err               bool
	kind              ptrace.SpanKind
	attrs             map[string]any
}

func dd(trace uint64, priority int64) spanSpec {
	return spanSpec{trace: trace, id: 1, service: "checkout", resource: "GET /cart", priority: priority}
}

func otel(trace uint64) spanSpec {
	return spanSpec{trace: trace, id: 1, service: "web", resource: "GET /", priority: priorityNone}
}

// batch builds a request: one ResourceSpans per service, in order of first use.
func batch(specs ...spanSpec) ptrace.Traces {
	return batchOf(nil, specs...)
}

// batchOf is batch, failing t (when given) on an attribute value pdata cannot hold.
func batchOf(t require.TestingT, specs ...spanSpec) ptrace.Traces {
	td := ptrace.NewTraces()
	byService := map[string]ptrace.SpanSlice{}
	for _, sp := range specs {
		spans, ok := byService[sp.service]
		if !ok {
			rs := td.ResourceSpans().AppendEmpty()
			rs.Resource().Attributes().PutStr("service.name", sp.service)
			rs.Resource().Attributes().PutStr("deployment.environment.name", "prod")
			spans = rs.ScopeSpans().AppendEmpty().Spans()
			byService[sp.service] = spans
		}
		fill(t, spans.AppendEmpty(), sp)
	}
	return td
}

func fill(t require.TestingT, s ptrace.Span, sp spanSpec) {
	var tid [16]byte
	binary.BigEndian.PutUint64(tid[8:], sp.trace)
	s.SetTraceID(tid)
	s.SetSpanID(spanID(sp.id))
	if sp.parent != 0 {
		s.SetParentSpanID(spanID(sp.parent))
	}
	s.SetName(sp.resource)
	s.SetKind(sp.kind)
	if sp.priority != priorityNone {
		s.Attributes().PutInt(attrPriority, sp.priority)
	}
	if sp.err {
		s.Status().SetCode(ptrace.StatusCodeError)
	}
	for k, v := range sp.attrs {
		if err := s.Attributes().PutEmpty(k).FromRaw(v); err != nil && t != nil {
			t.Errorf("attribute %s: %v", k, err)
		}
	}
}

func spanID(v uint64) pcommon.SpanID {
	var id [8]byte
	binary.BigEndian.PutUint64(id[:], v)
	return id
}

// keptTraces returns the low 64 bits of the trace ids left in td, with their span counts.
func keptTraces(td ptrace.Traces) map[uint64]int {
	out := map[uint64]int{}
	rss := td.ResourceSpans()
	for i := 0; i < rss.Len(); i++ {
		sss := rss.At(i).ScopeSpans()
		for j := 0; j < sss.Len(); j++ {
			spans := sss.At(j).Spans()
			for k := 0; k < spans.Len(); k++ {
				id := spans.At(k).TraceID()
				out[binary.BigEndian.Uint64(id[8:])]++
			}
		}
	}
	return out
}

// newTestProcessor returns the processor with cfg changed by edit, on a clock the test moves.
func newTestProcessor(t *testing.T, edit func(*Config)) (*samplingProcessor, *time.Time) {
	t.Helper()
	cfg := createDefaultConfig().(*Config)
	if edit != nil {
		edit(cfg)
	}
	require.NoError(t, cfg.Validate())
	p, err := newSamplingProcessor(processortest.NewNopSettings(metadata.Type), cfg)
	require.NoError(t, err)
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	p.now = func() time.Time { return now }
	return p, &now
}

func process(t *testing.T, p *samplingProcessor, td ptrace.Traces) map[uint64]int {
	t.Helper()
	out, err := p.processTraces(context.Background(), td)
	if err != nil {
		require.ErrorIs(t, err, errSkip)
		return map[uint64]int{}
	}
	return keptTraces(out)
}

func TestDatadogPriority(t *testing.T) {
	withErr := func(s spanSpec) spanSpec { s.err = true; return s }
	tests := []struct {
		name   string
		edit   func(*Config)
		in     []spanSpec
		kept   []uint64
		reason string
	}{
		{"user reject is dropped", nil, []spanSpec{dd(1, -1)}, nil, "priority_user_reject"},
		{"user reject with an error is dropped", nil, []spanSpec{withErr(dd(1, -1))}, nil, "priority_user_reject"},
		{"manual drop (-3) is dropped", nil, []spanSpec{dd(1, -3)}, nil, "priority_user_reject"},
		{"auto reject without an error is dropped", nil, []spanSpec{dd(1, 0)}, nil, "priority_auto_reject"},
		{"auto reject with an error: the error sampler keeps it", nil, []spanSpec{withErr(dd(1, 0))}, []uint64{1}, "error_sampler"},
		{"error sampler off", func(c *Config) { c.Datadog.ErrorsPerSecond = 0 }, []spanSpec{withErr(dd(1, 0))}, nil, "priority_auto_reject"},
		{"auto keep", nil, []spanSpec{dd(1, 1)}, []uint64{1}, "priority"},
		{"user keep", nil, []spanSpec{dd(1, 2)}, []uint64{1}, "priority"},
		{"no priority: not a Datadog decision", nil, []spanSpec{otel(1)}, []uint64{1}, ""},
		{"honour_priority false keeps rejects", func(c *Config) { c.Datadog.HonourPriority = false }, []spanSpec{dd(1, -1), dd(2, 0)}, []uint64{1, 2}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tel := componenttest.NewTelemetry()
			t.Cleanup(func() { require.NoError(t, tel.Shutdown(context.Background())) })
			cfg := createDefaultConfig().(*Config)
			if tt.edit != nil {
				tt.edit(cfg)
			}
			p, err := newSamplingProcessor(metadatatest.NewSettings(tel), cfg)
			require.NoError(t, err)
			got := process(t, p, batch(tt.in...))
			assert.ElementsMatch(t, tt.kept, keys(got))
			if tt.reason == "" {
				_, err := tel.GetMetric("otelcol.processor.tracesampling.traces")
				assert.Error(t, err, "nothing decided, nothing counted")
				return
			}
			decision := "kept"
			if len(tt.kept) == 0 {
				decision = "dropped"
			}
			assertTraces(t, tel, decision, tt.reason, 1)
		})
	}
}

func keys(m map[uint64]int) []uint64 {
	out := make([]uint64, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

// A chunk's priority sits on one span; the decision covers every span of the trace, and the
// other traces of the request are decided on their own.
func TestChunkDecidedWhole(t *testing.T) {
	p, _ := newTestProcessor(t, nil)
	in := batch(
		spanSpec{trace: 1, id: 1, service: "checkout", resource: "GET /cart", priority: 0},
		spanSpec{trace: 1, id: 2, parent: 1, service: "db", resource: "SELECT", priority: priorityNone},
		spanSpec{trace: 2, id: 3, service: "checkout", resource: "GET /cart", priority: 1},
		spanSpec{trace: 2, id: 4, parent: 3, service: "db", resource: "SELECT", priority: priorityNone},
		otel(3),
	)
	assert.Equal(t, map[uint64]int{2: 2, 3: 1}, process(t, p, in))
}

func TestEverythingDroppedEndsTheRequest(t *testing.T) {
	sink := new(consumertest.TracesSink)
	proc, err := NewFactory().CreateTraces(context.Background(), processortest.NewNopSettings(metadata.Type), createDefaultConfig(), sink)
	require.NoError(t, err)
	require.NoError(t, proc.ConsumeTraces(context.Background(), batch(dd(1, -1), dd(2, 0))))
	assert.Equal(t, 0, sink.SpanCount(), "nothing passed on, and no error for the client: dropping was the decision")
	require.NoError(t, proc.ConsumeTraces(context.Background(), batch(dd(3, 1))))
	assert.Equal(t, 1, sink.SpanCount())
}

func assertTraces(t *testing.T, tel *componenttest.Telemetry, decision, reason string, n int64) {
	t.Helper()
	m, err := tel.GetMetric("otelcol.processor.tracesampling.traces")
	require.NoError(t, err)
	found := false
	for _, dp := range dataPoints(m) {
		d, _ := dp.Attributes.Value("decision")
		r, _ := dp.Attributes.Value("reason")
		if d.AsString() == decision && r.AsString() == reason {
			assert.Equal(t, n, dp.Value)
			found = true
		}
	}
	assert.True(t, found, "no count for %s/%s", decision, reason)
}

// OpenTracing clients (Jaeger, Zipkin, the OTLP shim) set sampling.priority themselves, as a
// double or a string.
func TestPriorityValueTypes(t *testing.T) {
	p, _ := newTestProcessor(t, nil)
	in := batch(
		spanSpec{trace: 1, id: 1, service: "a", priority: priorityNone, attrs: map[string]any{attrPriority: 1.0}},
		spanSpec{trace: 2, id: 1, service: "a", priority: priorityNone, attrs: map[string]any{attrPriority: 0.0}},
		spanSpec{trace: 3, id: 1, service: "a", priority: priorityNone, attrs: map[string]any{attrPriority: "-1"}},
		spanSpec{trace: 4, id: 1, service: "a", priority: priorityNone, attrs: map[string]any{attrPriority: "high"}},
	)
	assert.ElementsMatch(t, []uint64{1, 4}, keys(process(t, p, in)))
}
