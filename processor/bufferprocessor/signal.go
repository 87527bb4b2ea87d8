package bufferprocessor

import (
	"errors"

	"go.opentelemetry.io/collector/consumer/consumererror"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/xpdata/pref"
)

// signal is what the buffer needs to know of one signal's pdata type T (ptrace.Traces, plog.Logs,
// pmetric.Metrics): everything else — queue, disk log, retries, telemetry — is the same code for
// the three. An item is what the signal's telemetry counts: a span, a log record, a data point.
type signal[T any] interface {
	// unit names the items in log lines ("spans"); field in log keys and metric names ("spans",
	// "log_records", "metric_points": processor_buffer_delivered_metric_points).
	unit() string
	field() string
	// name is the signal's name, as the collector's pipeline ids say it: "traces", "logs", "metrics".
	name() string
	// subdir is where the signal's disk log lives under storage.directory: spans in the directory
	// itself, where releases that buffered spans only kept them (a log they left replays after an
	// upgrade), logs and metrics in subdirectories of their own.
	subdir() string
	items(T) int64
	size(T) int
	marshal(T) ([]byte, error)
	unmarshal([]byte) (T, error)
	// ref, unref and markOwned are pdata's reference counting: only refs calls them (batch.go).
	ref(T)
	unref(T)
	markOwned(T)
	// newOwned returns an empty batch owned by the buffer (refs.newOwned).
	newOwned() T
	// moveAll moves every resource of from to the end of to; copyAll copies them (from is read-only).
	moveAll(from, to T)
	copyAll(from, to T)
	readOnly(T) bool
	// moveLeading moves about the first n items of d into a new owned batch, in order (see
	// nesting; refs.split).
	moveLeading(d T, n int) T
	// probeWhole reports that the circuit breaker's probe must be the whole batch: a metric batch
	// cut in two would be grouped into different documents than the first attempt's.
	probeWhole() bool
	// handedBack is the part of a batch a retryable error carries back (consumererror.Traces,
	// Logs), when the next consumer accepted the rest: only that part needs sending again.
	handedBack(err error) (T, bool)
}

type tracesSignal struct{}

func (tracesSignal) unit() string                   { return "spans" }
func (tracesSignal) field() string                  { return "spans" }
func (tracesSignal) name() string                   { return "traces" }
func (tracesSignal) subdir() string                 { return "" }
func (tracesSignal) items(td ptrace.Traces) int64   { return int64(td.SpanCount()) }
func (tracesSignal) size(td ptrace.Traces) int      { return (&ptrace.ProtoMarshaler{}).TracesSize(td) }
func (tracesSignal) ref(td ptrace.Traces)           { pref.RefTraces(td) }
func (tracesSignal) unref(td ptrace.Traces)         { pref.UnrefTraces(td) }
func (tracesSignal) markOwned(td ptrace.Traces)     { pref.MarkPipelineOwnedTraces(td) }
func (tracesSignal) readOnly(td ptrace.Traces) bool { return td.IsReadOnly() }
func (tracesSignal) probeWhole() bool               { return false }

func (tracesSignal) handedBack(err error) (ptrace.Traces, bool) {
	var back consumererror.Traces
	if errors.As(err, &back) {
		return back.Data(), true
	}
	return ptrace.Traces{}, false
}

func (tracesSignal) marshal(td ptrace.Traces) ([]byte, error) {
	return (&ptrace.ProtoMarshaler{}).MarshalTraces(td)
}

func (tracesSignal) unmarshal(b []byte) (ptrace.Traces, error) {
	return (&ptrace.ProtoUnmarshaler{}).UnmarshalTraces(b)
}

func (tracesSignal) newOwned() ptrace.Traces {
	td := ptrace.NewTraces()
	pref.MarkPipelineOwnedTraces(td)
	return td
}

func (tracesSignal) moveAll(from, to ptrace.Traces) {
	from.ResourceSpans().MoveAndAppendTo(to.ResourceSpans())
}

func (tracesSignal) copyAll(from, to ptrace.Traces) {
	rss := from.ResourceSpans()
	for i := range rss.Len() {
		rss.At(i).CopyTo(to.ResourceSpans().AppendEmpty())
	}
}

func (s tracesSignal) moveLeading(td ptrace.Traces, n int) ptrace.Traces {
	out := s.newOwned()
	moveLeading(td, out, n, tracesNesting)
	return out
}

var tracesNesting = nesting[ptrace.Traces, ptrace.ResourceSpans, ptrace.ScopeSpans, ptrace.Span]{
	resources: func(td ptrace.Traces) pslice[ptrace.ResourceSpans] { return td.ResourceSpans() },
	scopes:    func(rs ptrace.ResourceSpans) pslice[ptrace.ScopeSpans] { return rs.ScopeSpans() },
	items:     func(ss ptrace.ScopeSpans) pslice[ptrace.Span] { return ss.Spans() },
	copyResource: func(from, to ptrace.ResourceSpans) {
		from.Resource().CopyTo(to.Resource())
		to.SetSchemaUrl(from.SchemaUrl())
	},
	copyScope: func(from, to ptrace.ScopeSpans) {
		from.Scope().CopyTo(to.Scope())
		to.SetSchemaUrl(from.SchemaUrl())
	},
	weight: func(ptrace.Span) int { return 1 },
	move:   func(from, to ptrace.Span) { from.MoveTo(to) },
}

type logsSignal struct{}

func (logsSignal) unit() string               { return "log records" }
func (logsSignal) field() string              { return "log_records" }
func (logsSignal) name() string               { return "logs" }
func (logsSignal) subdir() string             { return "logs" }
func (logsSignal) items(ld plog.Logs) int64   { return int64(ld.LogRecordCount()) }
func (logsSignal) size(ld plog.Logs) int      { return (&plog.ProtoMarshaler{}).LogsSize(ld) }
func (logsSignal) ref(ld plog.Logs)           { pref.RefLogs(ld) }
func (logsSignal) unref(ld plog.Logs)         { pref.UnrefLogs(ld) }
func (logsSignal) markOwned(ld plog.Logs)     { pref.MarkPipelineOwnedLogs(ld) }
func (logsSignal) readOnly(ld plog.Logs) bool { return ld.IsReadOnly() }
func (logsSignal) probeWhole() bool           { return false }

func (logsSignal) handedBack(err error) (plog.Logs, bool) {
	var back consumererror.Logs
	if errors.As(err, &back) {
		return back.Data(), true
	}
	return plog.Logs{}, false
}

func (logsSignal) marshal(ld plog.Logs) ([]byte, error) {
	return (&plog.ProtoMarshaler{}).MarshalLogs(ld)
}

func (logsSignal) unmarshal(b []byte) (plog.Logs, error) {
	return (&plog.ProtoUnmarshaler{}).UnmarshalLogs(b)
}

func (logsSignal) newOwned() plog.Logs {
	ld := plog.NewLogs()
	pref.MarkPipelineOwnedLogs(ld)
	return ld
}

func (logsSignal) moveAll(from, to plog.Logs) {
	from.ResourceLogs().MoveAndAppendTo(to.ResourceLogs())
}

func (logsSignal) copyAll(from, to plog.Logs) {
	rls := from.ResourceLogs()
	for i := range rls.Len() {
		rls.At(i).CopyTo(to.ResourceLogs().AppendEmpty())
	}
}

func (s logsSignal) moveLeading(ld plog.Logs, n int) plog.Logs {
	out := s.newOwned()
	moveLeading(ld, out, n, logsNesting)
	return out
}

var logsNesting = nesting[plog.Logs, plog.ResourceLogs, plog.ScopeLogs, plog.LogRecord]{
	resources: func(ld plog.Logs) pslice[plog.ResourceLogs] { return ld.ResourceLogs() },
	scopes:    func(rl plog.ResourceLogs) pslice[plog.ScopeLogs] { return rl.ScopeLogs() },
	items:     func(sl plog.ScopeLogs) pslice[plog.LogRecord] { return sl.LogRecords() },
	copyResource: func(from, to plog.ResourceLogs) {
		from.Resource().CopyTo(to.Resource())
		to.SetSchemaUrl(from.SchemaUrl())
	},
	copyScope: func(from, to plog.ScopeLogs) {
		from.Scope().CopyTo(to.Scope())
		to.SetSchemaUrl(from.SchemaUrl())
	},
	weight: func(plog.LogRecord) int { return 1 },
	move:   func(from, to plog.LogRecord) { from.MoveTo(to) },
}

type metricsSignal struct{}

func (metricsSignal) unit() string                     { return "metric data points" }
func (metricsSignal) field() string                    { return "metric_points" }
func (metricsSignal) name() string                     { return "metrics" }
func (metricsSignal) subdir() string                   { return "metrics" }
func (metricsSignal) items(md pmetric.Metrics) int64   { return int64(md.DataPointCount()) }
func (metricsSignal) size(md pmetric.Metrics) int      { return (&pmetric.ProtoMarshaler{}).MetricsSize(md) }
func (metricsSignal) ref(md pmetric.Metrics)           { pref.RefMetrics(md) }
func (metricsSignal) unref(md pmetric.Metrics)         { pref.UnrefMetrics(md) }
func (metricsSignal) markOwned(md pmetric.Metrics)     { pref.MarkPipelineOwnedMetrics(md) }
func (metricsSignal) readOnly(md pmetric.Metrics) bool { return md.IsReadOnly() }
func (metricsSignal) probeWhole() bool                 { return true }

// handedBack: never for metrics, sent again whole for the reason of probeWhole.
func (metricsSignal) handedBack(error) (pmetric.Metrics, bool) { return pmetric.Metrics{}, false }

func (metricsSignal) marshal(md pmetric.Metrics) ([]byte, error) {
	return (&pmetric.ProtoMarshaler{}).MarshalMetrics(md)
}

func (metricsSignal) unmarshal(b []byte) (pmetric.Metrics, error) {
	return (&pmetric.ProtoUnmarshaler{}).UnmarshalMetrics(b)
}

func (metricsSignal) newOwned() pmetric.Metrics {
	md := pmetric.NewMetrics()
	pref.MarkPipelineOwnedMetrics(md)
	return md
}

func (metricsSignal) moveAll(from, to pmetric.Metrics) {
	from.ResourceMetrics().MoveAndAppendTo(to.ResourceMetrics())
}

func (metricsSignal) copyAll(from, to pmetric.Metrics) {
	rms := from.ResourceMetrics()
	for i := range rms.Len() {
		rms.At(i).CopyTo(to.ResourceMetrics().AppendEmpty())
	}
}

// moveLeading moves whole metrics (all of a metric's data points stay together, so a metric is
// never split across two requests) until about n data points have moved.
func (s metricsSignal) moveLeading(md pmetric.Metrics, n int) pmetric.Metrics {
	out := s.newOwned()
	moveLeading(md, out, n, metricsNesting)
	return out
}

var metricsNesting = nesting[pmetric.Metrics, pmetric.ResourceMetrics, pmetric.ScopeMetrics, pmetric.Metric]{
	resources: func(md pmetric.Metrics) pslice[pmetric.ResourceMetrics] { return md.ResourceMetrics() },
	scopes:    func(rm pmetric.ResourceMetrics) pslice[pmetric.ScopeMetrics] { return rm.ScopeMetrics() },
	items:     func(sm pmetric.ScopeMetrics) pslice[pmetric.Metric] { return sm.Metrics() },
	copyResource: func(from, to pmetric.ResourceMetrics) {
		from.Resource().CopyTo(to.Resource())
		to.SetSchemaUrl(from.SchemaUrl())
	},
	copyScope: func(from, to pmetric.ScopeMetrics) {
		from.Scope().CopyTo(to.Scope())
		to.SetSchemaUrl(from.SchemaUrl())
	},
	weight: dataPoints,
	move:   func(from, to pmetric.Metric) { from.MoveTo(to) },
}

// dataPoints is a metric's data point count, as pmetric.Metrics.DataPointCount counts them.
func dataPoints(m pmetric.Metric) int {
	switch m.Type() {
	case pmetric.MetricTypeGauge:
		return m.Gauge().DataPoints().Len()
	case pmetric.MetricTypeSum:
		return m.Sum().DataPoints().Len()
	case pmetric.MetricTypeHistogram:
		return m.Histogram().DataPoints().Len()
	case pmetric.MetricTypeExponentialHistogram:
		return m.ExponentialHistogram().DataPoints().Len()
	case pmetric.MetricTypeSummary:
		return m.Summary().DataPoints().Len()
	}
	return 0
}

// pslice is what moveLeading uses of a pdata slice.
type pslice[E any] interface {
	Len() int
	At(i int) E
	AppendEmpty() E
	EnsureCapacity(n int)
	RemoveIf(f func(E) bool)
}

// nesting describes a signal's resource → scope → item structure for moveLeading. An item is
// what moves whole: a span, a log record, a metric (weight: its data points).
type nesting[D, R, S, I any] struct {
	resources    func(D) pslice[R]
	scopes       func(R) pslice[S]
	items        func(S) pslice[I]
	copyResource func(from, to R)
	copyScope    func(from, to S)
	weight       func(I) int
	move         func(from, to I)
}

// moveLeading moves the leading items of d, until their weights reach n, into out (copying their
// resources and scopes), and removes them from d, with the resources and scopes they leave empty.
func moveLeading[D, R, S, I any](d, out D, n int, h nesting[D, R, S, I]) {
	rs := h.resources(d)
	for i := 0; i < rs.Len() && n > 0; i++ {
		r := rs.At(i)
		var outR R
		created := false // out's resource is created with its first item: no empty resources
		ss := h.scopes(r)
		for j := 0; j < ss.Len() && n > 0; j++ {
			s := ss.At(j)
			items := h.items(s)
			if items.Len() == 0 {
				continue
			}
			if !created {
				outR, created = h.resources(out).AppendEmpty(), true
				h.copyResource(r, outR)
			}
			outS := h.scopes(outR).AppendEmpty()
			h.copyScope(s, outS)
			take := 0
			for take < items.Len() && n > 0 {
				n -= h.weight(items.At(take))
				take++
			}
			outItems := h.items(outS)
			outItems.EnsureCapacity(take)
			for k := range take {
				h.move(items.At(k), outItems.AppendEmpty())
			}
			moved := 0
			items.RemoveIf(func(I) bool { moved++; return moved <= take })
		}
		ss.RemoveIf(func(s S) bool { return h.items(s).Len() == 0 })
	}
	rs.RemoveIf(func(r R) bool { return h.scopes(r).Len() == 0 })
}
