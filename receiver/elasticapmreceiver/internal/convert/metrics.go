package convert

import (
	"fmt"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"

	"github.com/elastic/apm-data/model/modelpb"
)

// Metricsets become metrics: counters sums, gauges (and samples of no type) gauges, histograms
// histograms. apm-data's decoder refuses summaries, so none arrive. A span_breakdown set (the
// time a transaction spent in each span type) carries its values on the span, not as samples.

// fillMetricset writes one metricset under rm.
func fillMetricset(rm pmetric.ResourceMetrics, e *modelpb.APMEvent, ts uint64) error {
	set := e.GetMetricset()
	rm.Resource().Attributes().PutStr("metricset.name", set.GetName())
	metrics := rm.ScopeMetrics().AppendEmpty().Metrics()
	if set.GetName() == "span_breakdown" {
		fillBreakdown(metrics, e, ts)
		return nil
	}
	for _, sample := range set.GetSamples() {
		m := metrics.AppendEmpty()
		m.SetName(sample.GetName())
		m.SetUnit(sample.GetUnit())
		switch sample.GetType() {
		case modelpb.MetricType_METRIC_TYPE_COUNTER:
			dp := m.SetEmptySum().DataPoints().AppendEmpty()
			dp.SetDoubleValue(sample.GetValue())
			stampPoint(dp.Attributes(), dp.SetTimestamp, ts)
		case modelpb.MetricType_METRIC_TYPE_GAUGE, modelpb.MetricType_METRIC_TYPE_UNSPECIFIED:
			dp := m.SetEmptyGauge().DataPoints().AppendEmpty()
			dp.SetDoubleValue(sample.GetValue())
			stampPoint(dp.Attributes(), dp.SetTimestamp, ts)
		case modelpb.MetricType_METRIC_TYPE_HISTOGRAM:
			dp := m.SetEmptyHistogram().DataPoints().AppendEmpty()
			stampPoint(dp.Attributes(), dp.SetTimestamp, ts)
			fillHistogram(dp, sample.GetHistogram())
		case modelpb.MetricType_METRIC_TYPE_SUMMARY:
			// Left without data, as the decoder never produces one.
		default:
			return fmt.Errorf("metric %q has an unknown type %v", sample.GetName(), sample.GetType())
		}
	}
	return nil
}

func stampPoint(attrs pcommon.Map, setTime func(pcommon.Timestamp), ts uint64) {
	setTime(pcommon.Timestamp(ts))
	attrs.PutStr("processor.event", "metric")
}

// fillHistogram turns the intake's histogram (each value with its count) into explicit
// buckets: the values but the last are the bounds. Malformed histograms stay empty.
func fillHistogram(dp pmetric.HistogramDataPoint, h *modelpb.Histogram) {
	values, counts := h.GetValues(), h.GetCounts()
	if len(values) == 0 || len(values) != len(counts) {
		return
	}
	var sum float64
	var total uint64
	for i, v := range values {
		sum += v * float64(counts[i])
		total += counts[i]
	}
	dp.SetSum(sum)
	dp.SetCount(total)
	dp.BucketCounts().FromRaw(counts)
	dp.ExplicitBounds().FromRaw(values[:len(values)-1])
}

// fillBreakdown writes a span_breakdown set as the sum of self time in µs and the number of
// spans, by transaction and span type.
func fillBreakdown(metrics pmetric.MetricSlice, e *modelpb.APMEvent, ts uint64) {
	self := e.GetSpan().GetSelfTime()
	sum := breakdownPoint(metrics.AppendEmpty(), "span.self_time.sum.us", "us", e, ts)
	sum.SetIntValue(int64(self.GetSum()) / 1000)
	count := breakdownPoint(metrics.AppendEmpty(), "span.self_time.count", "{span}", e, ts)
	count.SetDoubleValue(float64(self.GetCount()))
}

func breakdownPoint(m pmetric.Metric, name, unit string, e *modelpb.APMEvent, ts uint64) pmetric.NumberDataPoint {
	m.SetName(name)
	m.SetUnit(unit)
	dp := m.SetEmptyGauge().DataPoints().AppendEmpty()
	attrs := dp.Attributes()
	if t := e.GetTransaction(); t != nil {
		attrs.PutStr("transaction.name", t.Name)
		attrs.PutStr("transaction.type", t.Type)
	}
	if s := e.GetSpan(); s != nil {
		attrs.PutStr("span.type", s.Type)
		attrs.PutStr("span.subtype", s.Subtype)
	}
	stampPoint(attrs, dp.SetTimestamp, ts)
	return dp
}
