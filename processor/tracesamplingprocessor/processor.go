package tracesamplingprocessor

import (
	"context"
	"sync"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/processor"
	"go.opentelemetry.io/collector/processor/processorhelper"

	"github.com/tracegate/tracegate/processor/tracesamplingprocessor/internal/metadata"
)

// samplingProcessor decides, trace by trace within each request, what is passed on.
type samplingProcessor struct {
	elasticDrop bool
	datadog     *datadogSampler // nil: datadog.honour_priority false
	datakit     *datakitSampler // nil: no Datakit rule set
	rec         *recorder
	now         func() time.Time // the tests' clock

	// mu guards the samplers' memory (rare signatures, budgets), shared by concurrent requests;
	// stateless decisions (priority, sampling_rate, filters) take no lock.
	mu       sync.Mutex
	stateful bool
	scratch  sync.Pool // *scratch
}

func newSamplingProcessor(set processor.Settings, cfg *Config) (*samplingProcessor, error) {
	tb, err := metadata.NewTelemetryBuilder(set.TelemetrySettings)
	if err != nil {
		return nil, err
	}
	p := &samplingProcessor{
		elasticDrop: cfg.Elastic.DropUnsampled,
		datakit:     newDatakitSampler(cfg.Datakit),
		rec:         newRecorder(tb),
		now:         time.Now,
	}
	if cfg.Datadog.HonourPriority {
		p.datadog = &datadogSampler{}
		if cfg.Datadog.ErrorsPerSecond > 0 {
			p.datadog.errors = newErrorSampler(cfg.Datadog.ErrorsPerSecond)
		}
		if cfg.Datadog.RareSampler.Enabled {
			p.datadog.rare = newRareSampler(cfg.Datadog.RareSampler)
		}
	}
	p.stateful = (p.datadog != nil && (p.datadog.errors != nil || p.datadog.rare != nil)) ||
		(p.datakit != nil && p.datakit.rare != nil)
	p.scratch.New = func() any { return newScratch() }
	return p, nil
}

func (p *samplingProcessor) shutdown(context.Context) error { return nil }

// processTraces passes on the spans of the traces kept. A request whose spans were all dropped
// ends here (processorhelper.ErrSkipProcessingData), acknowledged: dropping was the decision.
func (p *samplingProcessor) processTraces(ctx context.Context, td ptrace.Traces) (ptrace.Traces, error) {
	if !p.applies(td) {
		return td, nil
	}
	sc := p.scratch.Get().(*scratch)
	defer p.scratch.Put(sc.reset())
	p.collect(td, sc)
	p.decideAll(td, sc)
	if sc.anyDropped || sc.anyUnsampled {
		p.removeDropped(td, sc)
	}
	p.rec.record(ctx, &sc.counts)
	if td.ResourceSpans().Len() == 0 {
		return td, processorhelper.ErrSkipProcessingData
	}
	return td, nil
}

// applies reports whether any rule can apply to the request; most OTLP requests need no
// grouping by trace when only the Datadog and Elastic rules are on.
func (p *samplingProcessor) applies(td ptrace.Traces) bool {
	if p.datakit != nil {
		return true
	}
	if p.datadog == nil && !p.elasticDrop {
		return false
	}
	rss := td.ResourceSpans()
	for i := 0; i < rss.Len(); i++ {
		sss := rss.At(i).ScopeSpans()
		for j := 0; j < sss.Len(); j++ {
			spans := sss.At(j).Spans()
			for k := 0; k < spans.Len(); k++ {
				attrs := spans.At(k).Attributes()
				if _, ok := attrs.Get(attrPriority); ok && p.datadog != nil {
					return true
				}
				if _, ok := attrs.Get(attrUnsampled); ok && p.elasticDrop {
					return true
				}
			}
		}
	}
	return false
}

// decideAll decides every trace of the request and counts the decisions.
func (p *samplingProcessor) decideAll(td ptrace.Traces, sc *scratch) {
	if p.stateful {
		p.mu.Lock()
		defer p.mu.Unlock()
	}
	now := p.now()
	for i := range sc.traces {
		t := &sc.traces[i]
		t.keep, t.reason = p.decide(now, td, sc, t)
		sc.counts.add(t.keep, t.reason, t.spans)
		if !t.keep {
			sc.anyDropped = true
		}
	}
}

// decide applies the sections in order: Datakit's close_resource, Datadog's priority, Datakit's
// sampler. The last rule that decided names the reason.
func (p *samplingProcessor) decide(now time.Time, td ptrace.Traces, sc *scratch, t *traceFacts) (bool, reason) {
	if p.datakit != nil && t.closed {
		return false, reasonCloseResource
	}
	root, res := span(td, t.root)
	r := reasonNone
	if p.datadog != nil && t.priority != priorityNone {
		var spans []chunkSpan
		if p.datadog.needsSpans(t) {
			spans = sc.chunkSpans(td, t)
		}
		keep, why := p.datadog.decide(now, t, spans, envOf(res))
		if !keep {
			return false, why
		}
		r = why
	}
	if p.datakit != nil {
		keep, why := p.datakit.decide(now, t, root, res)
		if !keep || why != reasonNone {
			return keep, why
		}
	}
	return true, r
}

// removeDropped removes the spans of dropped traces and Elastic's unsampled transactions.
func (p *samplingProcessor) removeDropped(td ptrace.Traces, sc *scratch) {
	ord := 0
	td.ResourceSpans().RemoveIf(func(rs ptrace.ResourceSpans) bool {
		rs.ScopeSpans().RemoveIf(func(ss ptrace.ScopeSpans) bool {
			ss.Spans().RemoveIf(func(s ptrace.Span) bool {
				t := &sc.traces[sc.traceOf[ord]]
				ord++
				if !t.keep {
					return true
				}
				if p.elasticDrop && isUnsampledTransaction(s) {
					sc.counts.add(false, reasonUnsampledTransaction, 1)
					return true
				}
				return false
			})
			return ss.Spans().Len() == 0
		})
		return rs.ScopeSpans().Len() == 0
	})
}

// collect groups the request's spans by trace id and notes what the decisions read.
func (p *samplingProcessor) collect(td ptrace.Traces, sc *scratch) {
	rss := td.ResourceSpans()
	for i := 0; i < rss.Len(); i++ {
		rs := rss.At(i)
		service := ""
		if p.datakit != nil {
			service = serviceOf(rs.Resource())
		}
		sss := rs.ScopeSpans()
		for j := 0; j < sss.Len(); j++ {
			spans := sss.At(j).Spans()
			for k := 0; k < spans.Len(); k++ {
				p.note(sc, spans.At(k), spanRef{i, j, k}, service)
			}
		}
	}
}

// note adds one span to its trace's facts.
func (p *samplingProcessor) note(sc *scratch, s ptrace.Span, ref spanRef, service string) {
	t := sc.add(s.TraceID(), ref)
	if !t.hasRoot && s.ParentSpanID().IsEmpty() {
		t.root, t.hasRoot = ref, true
	}
	if s.Status().Code() == ptrace.StatusCodeError {
		t.hasError = true
	}
	attrs := s.Attributes()
	if p.datadog != nil {
		if v, ok := attrs.Get(attrPriority); ok {
			t.priority = priorityOf(v, t.priority)
		}
	}
	if p.elasticDrop && !sc.anyUnsampled {
		sc.anyUnsampled = isUnsampledTransaction(s)
	}
	if p.datakit != nil {
		t.closed = t.closed || p.datakit.closes(s, service)
		t.omitted = t.omitted || p.datakit.omits(s)
	}
}

// scratch is one request's working memory, pooled: the processor runs on every request.
type scratch struct {
	index        map[pcommon.TraceID]int32
	traces       []traceFacts
	traceOf      []int32   // per span, in traversal order: its trace
	next         []int32   // per span: the next span of its trace, or -1
	refs         []spanRef // per span: where it is
	chunk        []chunkSpan
	services     map[pcommon.SpanID]string
	counts       counts
	anyDropped   bool
	anyUnsampled bool
}

func newScratch() *scratch {
	return &scratch{index: map[pcommon.TraceID]int32{}, services: map[pcommon.SpanID]string{}}
}

func (sc *scratch) reset() *scratch {
	clear(sc.index)
	clear(sc.services)
	clear(sc.chunk) // drop references to the request's spans
	sc.traces, sc.traceOf, sc.next, sc.refs, sc.chunk = sc.traces[:0], sc.traceOf[:0], sc.next[:0], sc.refs[:0], sc.chunk[:0]
	sc.counts, sc.anyDropped, sc.anyUnsampled = counts{}, false, false
	return sc
}

// add records the span at ref as the next span of trace id, and returns the trace's facts.
func (sc *scratch) add(id pcommon.TraceID, ref spanRef) *traceFacts {
	ord := int32(len(sc.refs))
	sc.refs = append(sc.refs, ref)
	sc.next = append(sc.next, -1)
	ti, ok := sc.index[id]
	if !ok {
		ti = int32(len(sc.traces))
		sc.index[id] = ti
		sc.traces = append(sc.traces, traceFacts{id: id, root: ref, priority: priorityNone, first: ord, last: ord})
	} else {
		sc.next[sc.traces[ti].last] = ord
		sc.traces[ti].last = ord
	}
	sc.traceOf = append(sc.traceOf, ti)
	t := &sc.traces[ti]
	t.spans++
	return t
}

// chunkSpans lists the trace's spans with their services and which are top-level.
func (sc *scratch) chunkSpans(td ptrace.Traces, t *traceFacts) []chunkSpan {
	sc.chunk = sc.chunk[:0]
	clear(sc.services)
	for o := t.first; o >= 0; o = sc.next[o] {
		s, res := span(td, sc.refs[o])
		svc := serviceOf(res)
		sc.services[s.SpanID()] = svc
		sc.chunk = append(sc.chunk, chunkSpan{span: s, service: svc})
	}
	for i := range sc.chunk {
		cs := &sc.chunk[i]
		parent, ok := sc.services[cs.span.ParentSpanID()]
		cs.topLevel = !ok || parent != cs.service
	}
	return sc.chunk
}
