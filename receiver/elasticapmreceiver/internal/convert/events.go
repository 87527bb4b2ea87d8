// Licensed to Elasticsearch B.V. under one or more contributor
// license agreements. See the NOTICE file distributed with
// this work for additional information regarding copyright
// ownership. Elasticsearch B.V. licenses this file to you under
// the Apache License, Version 2.0 (the "License"); you may
// not use this file except in compliance with the License.
// You may obtain a copy of the License at
//
//     http://www.apache.org/licenses/LICENSE-2.0
//
// Unless required by applicable law or agreed to in writing,
// software distributed under the License is distributed on an
// "AS IS" BASIS, WITHOUT WARRANTIES OR CONDITIONS OF ANY
// KIND, either express or implied.  See the License for the
// specific language governing permissions and limitations
// under the License.

// This file is derived from EDOT's elasticapmintake receiver v0.36.0 (receiver.go, the conversion
// half), so that intake events become the same OpenTelemetry data as there; the HTTP half is ours.

package convert

import (
	"fmt"
	"strings"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.uber.org/zap"

	"github.com/elastic/apm-data/model/modelpb"
	"github.com/tracegate/tracegate/receiver/elasticapmreceiver/internal/elasticattr"

	"github.com/tracegate/tracegate/receiver/elasticapmreceiver/internal/mappers"
)

// setResourceAttributes maps event fields to attributes.
// Expects the attribute map to be at the resource level e.g. pmetric.ResourceMetrics.Resource().Attributes().
func (c *Converter) setResourceAttributes(attrs pcommon.Map, event *modelpb.APMEvent) {
	mappers.TranslateToOtelResourceAttributes(event, attrs)
	mappers.SetDerivedResourceAttributes(event, attrs)
	mappers.SetElasticSpecificResourceAttributes(event, attrs)
}

func (c *Converter) elasticMetricsToOtelMetrics(rm *pmetric.ResourceMetrics, event *modelpb.APMEvent, timestampNanos uint64) error {
	metricset := event.GetMetricset()

	// the apm-data library defaults this value to `app` and sets to `span_breakdown` internal span metrics.
	rm.Resource().Attributes().PutStr(elasticattr.MetricsetName, metricset.Name)

	// span_breakdown metrics don't have Samples - value is stored directly in event.Span.SelfTime.*
	if metricset.Name == "span_breakdown" {
		c.translateBreakdownMetricsToOtel(rm, event, timestampNanos)
		return nil
	}

	sm := rm.ScopeMetrics().AppendEmpty()

	samples := metricset.GetSamples()

	// Ignored metricset fields: interval and doc_count.
	// Fields are not decoded from input data to modelpb.Metricset, so they will not ever be set:
	// - https://github.com/elastic/apm-data/blob/main/input/elasticapm/internal/modeldecoder/v2/model.go
	// - https://github.com/elastic/apm-data/blob/main/input/elasticapm/internal/modeldecoder/v2/decoder.go
	for _, sample := range samples {
		m := sm.Metrics().AppendEmpty()
		m.SetName(sample.GetName())

		// Set provided unit without any validation or enumeration.
		// - The apm-data lib does not validate units: https://github.com/elastic/apm-data/blob/main/input/elasticapm/internal/modeldecoder/v2/decoder.go
		// - The ElasticSearch https://github.com/elastic/package-spec/blob/main/spec/integration/data_stream/fields/fields.spec.yml supported units
		//   also meet the OTEL requirements based on https://ucum.org/ucum.
		m.SetUnit(sample.GetUnit())

		switch sample.GetType() {
		case modelpb.MetricType_METRIC_TYPE_COUNTER:
			dp := m.SetEmptySum().DataPoints().AppendEmpty()
			dp.SetDoubleValue(sample.GetValue())
			c.populateDataPointCommon(&dp, event, timestampNanos)
		// Type does not seem to be enforced in APM server, and many agents send `unspecified` type.
		case modelpb.MetricType_METRIC_TYPE_GAUGE, modelpb.MetricType_METRIC_TYPE_UNSPECIFIED:
			dp := m.SetEmptyGauge().DataPoints().AppendEmpty()
			dp.SetDoubleValue(sample.GetValue())
			c.populateDataPointCommon(&dp, event, timestampNanos)
		case modelpb.MetricType_METRIC_TYPE_HISTOGRAM:
			dp := m.SetEmptyHistogram().DataPoints().AppendEmpty()
			c.populateDataPointCommon(&dp, event, timestampNanos)
			populateOTelHistogramDataPoint(sample, &dp)
		case modelpb.MetricType_METRIC_TYPE_SUMMARY:
			// Note: The apm-data lib will reject a valid summary (contains only a count and sum), so
			// this apm summaries will not be converted to OTEL.
			// - https://github.com/elastic/apm-data/blob/main/input/elasticapm/internal/modeldecoder/v2/model.go
			// Validation error:
			// - `validation error: metricset: samples: requires at least one of the fields 'value;values'`
		default:
			return fmt.Errorf("unhandled metric type %q", sample.GetType())
		}
	}

	return nil
}

type otelDataPoint interface {
	SetTimestamp(pcommon.Timestamp)
	Attributes() pcommon.Map
}

func (c *Converter) populateDataPointCommon(dp otelDataPoint, event *modelpb.APMEvent, timestampNanos uint64) {
	dp.SetTimestamp(pcommon.Timestamp(timestampNanos))
	mappers.SetDerivedFieldsForMetrics(dp.Attributes())
}

// populateOTelHistogramDataPoint updates the OpenTelemetry HistogramDataPoint with data from the provided Elastic APM histogram sample.
// Assumptions:
// - the histogram values and counts are all non-negative
//
// Sets fields: sum, count, bucket_counts, explicit_bounds. All other optional fields are not set per OTEL metric model:
//   - https://github.com/open-telemetry/opentelemetry-proto/blob/main/opentelemetry/proto/metrics/v1/metrics.proto
func populateOTelHistogramDataPoint(sample *modelpb.MetricsetSample, dp *pmetric.HistogramDataPoint) {
	histogram := sample.GetHistogram()
	if histogram == nil {
		return
	}

	// histogram values and count should be non-empty and the same size
	apmHistogramCounts := histogram.GetCounts()
	apmHistogramValues := histogram.GetValues()
	if len(apmHistogramValues) == 0 || len(apmHistogramCounts) == 0 {
		return
	}
	if len(apmHistogramValues) != len(apmHistogramCounts) {
		return
	}

	// sum of the values in the population. If count is zero then this field
	// must be zero.
	//
	// Note: Sum should only be filled out when measuring non-negative discrete
	// events, and is assumed to be monotonic over the values of these events.
	// Negative events *can* be recorded, but sum should not be filled out when
	// doing so.  This is specifically to enforce compatibility w/ OpenMetrics,
	// see: https://github.com/prometheus/OpenMetrics/blob/v1.0.0/specification/OpenMetrics.md#histogram
	sum := 0.0
	for i := 0; i < len(apmHistogramValues); i++ {
		sum += apmHistogramValues[i] * float64(apmHistogramCounts[i])
	}
	dp.SetSum(sum)

	// count is the number of values in the population. Must be non-negative. This
	// value must be equal to the sum of the "count" fields in buckets if a
	// histogram is provided.
	count := uint64(0)
	for _, c := range apmHistogramCounts {
		count += c
	}
	dp.SetCount(count)

	// bucket_counts is an optional field contains the count values of histogram
	// for each bucket.
	//
	// The sum of the bucket_counts must equal the value in the count field.
	//
	// The number of elements in bucket_counts array must be by one greater than
	// the number of elements in explicit_bounds array. The exception to this rule
	// is when the length
	bucketCounts := dp.BucketCounts()
	bucketCounts.FromRaw(apmHistogramCounts)

	// explicit_bounds specifies buckets with explicitly defined bounds for values.
	//
	// The boundaries for bucket at index i are:
	//
	// (-infinity, explicit_bounds[i]] for i == 0
	// (explicit_bounds[i-1], explicit_bounds[i]] for 0 < i < size(explicit_bounds)
	// (explicit_bounds[i-1], +infinity) for i == size(explicit_bounds)
	//
	// The values in the explicit_bounds array must be strictly increasing.
	//
	// Histogram buckets are inclusive of their upper boundary, except the last
	// bucket where the boundary is at infinity. This format is intentionally
	// compatible with the OpenMetrics histogram definition.
	//
	// If bucket_counts length is 0 then explicit_bounds length must also be 0,
	// otherwise the data point is invalid.
	explicitBounds := dp.ExplicitBounds()

	// explicit bounds are derived from the sample.Histogram.Values, where each value is the upper bound for a bucket.
	// Except the last bound value which is implied to be +Inf bucket, so it is not set.
	explicitBounds.FromRaw(apmHistogramValues[:len(apmHistogramValues)-1])
}

func (c *Converter) translateBreakdownMetricsToOtel(rm *pmetric.ResourceMetrics, event *modelpb.APMEvent, timestampNanos uint64) {
	sm := rm.ScopeMetrics().AppendEmpty()
	sum_metric := sm.Metrics().AppendEmpty()
	sum_metric.SetName("span.self_time.sum.us")

	// TODO: without Unit, the es exporter throws this:
	// error	elasticsearchexporter@v0.124.1/bulkindexer.go:367	failed to index document	{"index": "metrics-generic.otel-default", "error.type": "illegal_argument_exception", "error.reason": ""}
	// github.com/open-telemetry/opentelemetry-collector-contrib/exporter/elasticsearchexporter.flushBulkIndexer
	// github.com/open-telemetry/opentelemetry-collector-contrib/exporter/elasticsearchexporter@v0.124.1/bulkindexer.go:367
	sum_metric.SetUnit("us")
	sum_dp := createBreakdownMetricsCommon(sum_metric, event, timestampNanos)
	// SelfTime.Sum is in nanoseconds. Convert to microseconds to match the metric name (.us)
	// and apm data logic:
	// https://github.com/elastic/apm-data/blob/v1.19.5/model/modeljson/internal/metricset.go#L115
	sum_dp.SetIntValue(int64(event.GetSpan().GetSelfTime().Sum) / 1000)

	count_metric := sm.Metrics().AppendEmpty()
	count_metric.SetName("span.self_time.count")
	count_metric.SetUnit("{span}")
	count_metric_dp := createBreakdownMetricsCommon(count_metric, event, timestampNanos)
	count_metric_dp.SetDoubleValue(float64(event.GetSpan().GetSelfTime().Count))
}

func createBreakdownMetricsCommon(metric pmetric.Metric, event *modelpb.APMEvent, timestampNanos uint64) pmetric.NumberDataPoint {
	g := metric.SetEmptyGauge()
	dp := g.DataPoints().AppendEmpty()
	dp.SetTimestamp(pcommon.Timestamp(timestampNanos))

	attr := dp.Attributes()
	if event.Transaction != nil {
		attr.PutStr(elasticattr.TransactionName, event.Transaction.Name)
		attr.PutStr(elasticattr.TransactionType, event.Transaction.Type)
	}
	if event.Span != nil {
		attr.PutStr(elasticattr.SpanType, event.Span.Type)
		attr.PutStr(elasticattr.SpanSubtype, event.Span.Subtype)
	}

	attr.PutStr(elasticattr.ProcessorEvent, "metric")

	mappers.SetDerivedFieldsForMetrics(dp.Attributes())

	return dp
}

func (c *Converter) elasticErrorToOtelLogRecord(rl *plog.ResourceLogs, event *modelpb.APMEvent, timestampNanos uint64) {
	sl := rl.ScopeLogs().AppendEmpty()
	l := sl.LogRecords().AppendEmpty()

	mappers.SetTopLevelFieldsLogRecord(event, timestampNanos, l, c.logger)
	mappers.SetDerivedFieldsForError(event, l.Attributes())
	mappers.TranslateIntakeV2LogToOTelAttributes(event, l.Attributes())

	// apm log events can contain error information. In this case the log is considered an apm error.
	// All fields associated with the log should also be set.
	mappers.SetElasticSpecificFieldsForLog(event, l.Attributes())

	// the modelprocessor.SetErrorMessage sets the correct event.Message based on the available error details
	l.Body().SetStr(event.Message)

	c.setLogSeverity(event, l)
}

func (c *Converter) setLogSeverity(event *modelpb.APMEvent, l plog.LogRecord) {
	if event.Log != nil {
		l.SetSeverityText(event.Log.Level)
	}
	if event.Event != nil {
		l.SetSeverityNumber(plog.SeverityNumber(event.Event.Severity))
	}
}

func (c *Converter) elasticLogToOtelLogRecord(rl *plog.ResourceLogs, event *modelpb.APMEvent, timestampNanos uint64) {
	sl := rl.ScopeLogs().AppendEmpty()
	l := sl.LogRecords().AppendEmpty()

	mappers.SetTopLevelFieldsLogRecord(event, timestampNanos, l, c.logger)
	mappers.SetDerivedFieldsForLog(event, l.Attributes())
	mappers.TranslateIntakeV2LogToOTelAttributes(event, l.Attributes())
	mappers.SetElasticSpecificFieldsForLog(event, l.Attributes())

	l.Body().SetStr(event.Message)

	c.setLogSeverity(event, l)
}

func (c *Converter) elasticEventToOtelSpan(rs *ptrace.ResourceSpans, event *modelpb.APMEvent, timestampNanos uint64) ptrace.Span {
	ss := rs.ScopeSpans().AppendEmpty()
	s := ss.Spans().AppendEmpty()

	mappers.SetTopLevelFieldsSpan(event, timestampNanos, s, c.logger)
	c.elasticSpanLinksToOTelSpanLinks(event, s)
	s.SetKind(mapSpanKind(event.GetSpan().GetKind()))
	return s
}

func (c *Converter) elasticSpanLinksToOTelSpanLinks(event *modelpb.APMEvent, s ptrace.Span) {
	if event.Span != nil && event.Span.Links != nil {
		for _, link := range event.Span.Links {
			ptraceSpanLink := s.Links().AppendEmpty()
			traceId, err := mappers.TraceIDFromHex(link.TraceId)
			if err == nil {
				ptraceSpanLink.SetTraceID(traceId)
			} else {
				c.logger.Error("failed to parse trace ID from span link", zap.String("trace_id", link.TraceId))
			}

			spanId, err := mappers.SpanIdFromHex(link.SpanId)
			if err == nil {
				ptraceSpanLink.SetSpanID(spanId)
			} else {
				c.logger.Error("failed to parse span ID from span link", zap.String("span_id", link.SpanId))
			}
		}
	}
}

func (c *Converter) elasticTransactionToOtelSpan(s *ptrace.Span, event *modelpb.APMEvent) {
	transaction := event.GetTransaction()
	s.SetName(transaction.GetName())

	mappers.SetDerivedFieldsForTransaction(event, s.Attributes())
	mappers.TranslateIntakeV2TransactionToOTelAttributes(event, s.Attributes())
	mappers.SetElasticSpecificFieldsForTransaction(event, s.Attributes())
}

func (c *Converter) elasticSpanToOTelSpan(s *ptrace.Span, event *modelpb.APMEvent) {
	span := event.GetSpan()
	s.SetName(span.GetName())

	mappers.SetDerivedFieldsForSpan(event, s.Attributes())
	mappers.TranslateIntakeV2SpanToOTelAttributes(event, s.Attributes())
	mappers.SetElasticSpecificFieldsForSpan(event, s.Attributes())
}

func mapSpanKind(kind string) ptrace.SpanKind {
	switch strings.ToUpper(kind) {
	case "INTERNAL":
		return ptrace.SpanKindInternal
	case "CLIENT":
		return ptrace.SpanKindClient
	case "PRODUCER":
		return ptrace.SpanKindProducer
	case "CONSUMER":
		return ptrace.SpanKindConsumer
	case "SERVER":
		return ptrace.SpanKindServer
	default:
		return ptrace.SpanKindUnspecified
	}
}
