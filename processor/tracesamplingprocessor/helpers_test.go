package tracesamplingprocessor

import (
	"go.opentelemetry.io/collector/processor/processorhelper"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
)

var errSkip = processorhelper.ErrSkipProcessingData

// dataPoints are a counter's points.
func dataPoints(m metricdata.Metrics) []metricdata.DataPoint[int64] {
	if sum, ok := m.Data.(metricdata.Sum[int64]); ok {
		return sum.DataPoints
	}
	return nil
}
