package edotdiff

import (
	"fmt"
	"sort"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// A record is one span, log record or data point as a document holds it: its resource's
// attributes under "r.", its own under "a.", and its top-level fields by name.
type record map[string]any

// records keys every item of an output by what identifies it whichever receiver made it
// (ids, name, time), since the two group items under resources differently.
type records map[string]record

func putAttrs(r record, prefix string, m pcommon.Map) {
	for k, v := range m.All() {
		r[prefix+k] = v.AsRaw()
	}
}

func spanRecords(td ptrace.Traces) records {
	out := records{}
	for _, rs := range td.ResourceSpans().All() {
		for _, ss := range rs.ScopeSpans().All() {
			for _, s := range ss.Spans().All() {
				r := record{
					"trace_id": s.TraceID().String(), "span_id": s.SpanID().String(),
					"parent_id": s.ParentSpanID().String(), "name": s.Name(), "kind": s.Kind().String(),
					"start": int64(s.StartTimestamp()), "end": int64(s.EndTimestamp()),
					"status": s.Status().Code().String(), "flags": int64(s.Flags()),
					"links": linksOf(s.Links()),
				}
				putAttrs(r, "r.", rs.Resource().Attributes())
				putAttrs(r, "a.", s.Attributes())
				out[fmt.Sprintf("span %s %s %s %d", s.TraceID(), s.SpanID(), s.Name(), s.StartTimestamp())] = r
			}
		}
	}
	return out
}

func linksOf(links ptrace.SpanLinkSlice) []string {
	var out []string
	for _, l := range links.All() {
		out = append(out, l.TraceID().String()+"/"+l.SpanID().String())
	}
	return out
}

func logRecords(ld plog.Logs) records {
	out := records{}
	for _, rl := range ld.ResourceLogs().All() {
		for _, sl := range rl.ScopeLogs().All() {
			for _, l := range sl.LogRecords().All() {
				r := record{
					"trace_id": l.TraceID().String(), "span_id": l.SpanID().String(),
					"time": int64(l.Timestamp()), "body": l.Body().AsRaw(),
					"severity_text": l.SeverityText(), "severity_number": int64(l.SeverityNumber()),
				}
				putAttrs(r, "r.", rl.Resource().Attributes())
				putAttrs(r, "a.", l.Attributes())
				out[fmt.Sprintf("log %s %d %v %v", l.TraceID(), l.Timestamp(), r["a.error.id"], l.Body().AsRaw())] = r
			}
		}
	}
	return out
}

func pointRecords(md pmetric.Metrics) records {
	out := records{}
	for _, rm := range md.ResourceMetrics().All() {
		for _, sm := range rm.ScopeMetrics().All() {
			for _, m := range sm.Metrics().All() {
				eachPoint(m, func(ts pcommon.Timestamp, attrs pcommon.Map, value any) {
					r := record{"name": m.Name(), "unit": m.Unit(), "type": m.Type().String(), "time": int64(ts), "value": value}
					putAttrs(r, "r.", rm.Resource().Attributes())
					putAttrs(r, "a.", attrs)
					set, _ := rm.Resource().Attributes().Get("metricset.name")
					out[fmt.Sprintf("metric %s %s %d %v", set.AsString(), m.Name(), ts, sortedKeys(r))] = r
				})
			}
		}
	}
	return out
}

func eachPoint(m pmetric.Metric, f func(pcommon.Timestamp, pcommon.Map, any)) {
	switch m.Type() {
	case pmetric.MetricTypeGauge:
		for _, dp := range m.Gauge().DataPoints().All() {
			f(dp.Timestamp(), dp.Attributes(), numberOf(dp))
		}
	case pmetric.MetricTypeSum:
		for _, dp := range m.Sum().DataPoints().All() {
			f(dp.Timestamp(), dp.Attributes(), numberOf(dp))
		}
	case pmetric.MetricTypeHistogram:
		for _, dp := range m.Histogram().DataPoints().All() {
			f(dp.Timestamp(), dp.Attributes(), []any{dp.Count(), dp.Sum(), dp.BucketCounts().AsRaw(), dp.ExplicitBounds().AsRaw()})
		}
	}
}

func numberOf(dp pmetric.NumberDataPoint) any {
	if dp.ValueType() == pmetric.NumberDataPointValueTypeInt {
		return dp.IntValue()
	}
	return dp.DoubleValue()
}

func sortedKeys(r record) []string {
	keys := make([]string, 0, len(r))
	for k := range r {
		if len(k) > 2 && k[:2] == "a." {
			keys = append(keys, fmt.Sprintf("%s=%v", k, r[k]))
		}
	}
	sort.Strings(keys)
	return keys
}
