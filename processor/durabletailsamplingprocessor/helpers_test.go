package durabletailsamplingprocessor

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/processor"
	"go.opentelemetry.io/collector/processor/processortest"

	"github.com/tracegate/tracegate/processor/durabletailsamplingprocessor/internal/metadata"
	"github.com/tracegate/tracegate/processor/durabletailsamplingprocessor/internal/policy"
)

var t0 = time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)

// spanSpec is one span of a test request: its trace, its number within the trace, and whether it
// failed.
type spanSpec struct {
	trace  byte
	n      byte
	failed bool
}

// request builds a request whose spans belong to the given traces, one resource per service.
func request(service string, spans ...spanSpec) ptrace.Traces {
	td := ptrace.NewTraces()
	rs := td.ResourceSpans().AppendEmpty()
	rs.Resource().Attributes().PutStr("service.name", service)
	ss := rs.ScopeSpans().AppendEmpty()
	ss.Scope().SetName("test")
	for _, s := range spans {
		sp := ss.Spans().AppendEmpty()
		sp.SetTraceID(traceID(s.trace))
		sp.SetSpanID(pcommon.SpanID{s.trace, s.n})
		sp.SetName("op")
		sp.SetStartTimestamp(pcommon.NewTimestampFromTime(t0))
		sp.SetEndTimestamp(pcommon.NewTimestampFromTime(t0.Add(time.Millisecond)))
		if s.n != 0 {
			sp.SetParentSpanID(pcommon.SpanID{s.trace, 0})
		}
		if s.failed {
			sp.Status().SetCode(ptrace.StatusCodeError)
		}
	}
	return td
}

func traceID(n byte) pcommon.TraceID { return pcommon.TraceID{0xaa, n} }

// errorsOnly keeps the traces with a failed span.
var errorsOnly = []policy.Config{{SubConfig: policy.SubConfig{
	Name: "errors", Type: policy.TypeStatusCode,
	StatusCode: policy.StatusCodeConfig{StatusCodes: []string{"ERROR"}},
}}}

// recordingSink is the next consumer: it keeps what it accepted and can refuse.
type recordingSink struct {
	mu      sync.Mutex
	refuse  error
	spans   map[pcommon.TraceID][]pcommon.SpanID
	calls   int
	refused int
}

func (s *recordingSink) Capabilities() consumer.Capabilities { return consumer.Capabilities{} }

func (s *recordingSink) ConsumeTraces(_ context.Context, td ptrace.Traces) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls++
	if s.refuse != nil {
		s.refused++
		return s.refuse
	}
	if s.spans == nil {
		s.spans = map[pcommon.TraceID][]pcommon.SpanID{}
	}
	for _, rs := range td.ResourceSpans().All() {
		for _, ss := range rs.ScopeSpans().All() {
			for _, sp := range ss.Spans().All() {
				s.spans[sp.TraceID()] = append(s.spans[sp.TraceID()], sp.SpanID())
			}
		}
	}
	return nil
}

func (s *recordingSink) kept() map[pcommon.TraceID]int {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[pcommon.TraceID]int{}
	for id, spans := range s.spans {
		out[id] = len(spans)
	}
	return out
}

func (s *recordingSink) setRefuse(err error) {
	s.mu.Lock()
	s.refuse = err
	s.mu.Unlock()
}

var errRefused = errors.New("buffer is full")

// testConfig is the default configuration with the given policies.
func testConfig(policies []policy.Config) *Config {
	cfg := createDefaultConfig().(*Config)
	cfg.Policies = policies
	return cfg
}

// newTestProcessor builds a processor driven by the test's clock: nothing decides until the test
// calls step.
func newTestProcessor(tb testing.TB, cfg *Config, next consumer.Traces) *tailProcessor {
	tb.Helper()
	require.NoError(tb, cfg.Validate())
	p, err := newTailProcessor(processortest.NewNopSettings(metadata.Type), cfg, next)
	require.NoError(tb, err)
	p.now = func() time.Time { return t0 }
	if cfg.Storage.Directory != "" {
		require.NoError(tb, p.openLog())
	}
	return p
}

// step moves the processor's clock to at and runs one decision tick.
func (p *tailProcessor) step(at time.Time) {
	p.now = func() time.Time { return at }
	p.decideDue(context.Background(), at)
	p.deliver(context.Background())
}

func processortestSettings() processor.Settings {
	return processortest.NewNopSettings(metadata.Type)
}
