package apmmetricsconnector

import (
	"encoding/binary"
	"math"
	"sort"

	"github.com/lightstep/go-expohisto/structure"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"
)

// scopeName is the scope of the metrics handed to the store: signaltometrics' (which EDOT's
// connector runs), so that the documents are the same whichever connector made them.
const scopeName = "github.com/open-telemetry/opentelemetry-collector-contrib/connector/signaltometricsconnector"

// series is one data point being summed.
type series struct {
	attrs  pcommon.Map
	intSum int64
	dblSum float64
	// An explicit histogram: its bounds, bucket counts, sum and count.
	bounds []float64
	counts []uint64
	sum    float64
	count  uint64
	expo   *structure.Histogram[float64]
}

func (s *series) addHistogram(value float64, count int64) {
	s.sum += value * float64(count)
	s.count += uint64(count)
	s.counts[sort.SearchFloat64s(s.bounds, value)] += uint64(count)
}

// resourceSums are the series of one resource (its attributes as the metrics keep them), each
// metric's also in the order they first arrived: the store keeps the first series up to its
// limits, so handing them over in that order (not a map's) makes the histogram and the summary
// of a transaction group overflow alike.
type resourceSums struct {
	attrs  pcommon.Map
	series [numMetrics]map[string]*series
	order  [numMetrics][]*series
}

// sums are the series summed since the last flush.
type sums struct {
	resources map[string]*resourceSums // by resourceKey
	order     []*resourceSums          // as they first arrived (the store's resource limit keeps the first)
	n         int
}

func newSums() *sums { return &sums{resources: map[string]*resourceSums{}} }

// resource returns the sums of the resource whose kept attributes key encodes (resourceKey), or
// nil when it has none yet.
func (s *sums) resource(key []byte) *resourceSums { return s.resources[string(key)] }

// addResource adds the sums of the resource with the kept attributes attrs, encoded as key.
func (s *sums) addResource(key []byte, attrs pcommon.Map) *resourceSums {
	r := &resourceSums{attrs: attrs}
	s.resources[string(key)] = r
	s.order = append(s.order, r)
	return r
}

// resourceKey appends the kept attributes specs select from src to key, each key with its value
// in spec order: two attribute sets that keep the same attributes get the same key (and share
// their sums, as signaltometrics' resource hash has them), others differ.
func resourceKey(key []byte, specs []attrSpec, src valueSource) []byte {
	for _, spec := range specs {
		v, found := src.value(spec)
		if !found {
			if !spec.hasDef {
				continue
			}
			v = spec.def
		}
		key = binary.AppendUvarint(key, uint64(len(spec.key)))
		key = append(key, spec.key...)
		key = appendValue(key, v)
	}
	return key
}

// seriesFor returns the series of metric m with the attributes encoded in key, made with
// newAttrs when it is new.
func (s *sums) seriesFor(r *resourceSums, m metricID, key []byte, newAttrs func() pcommon.Map) *series {
	byKey := r.series[m]
	if byKey == nil {
		byKey = map[string]*series{}
		r.series[m] = byKey
	}
	if se, ok := byKey[string(key)]; ok {
		return se
	}
	se := &series{attrs: newAttrs()}
	switch metricDefs[m].kind {
	case kindExponentialHistogram:
		// Max size 0: the library's default, 160 buckets, as signaltometrics has it.
		se.expo = structure.NewFloat64(structure.NewConfig(structure.WithMaxSize(0)))
	case kindHistogram:
		se.bounds = metricDefs[m].bounds
		se.counts = make([]uint64, len(se.bounds)+1)
	}
	byKey[string(key)] = se
	r.order[m] = append(r.order[m], se)
	s.n++
	return se
}

// metrics writes the sums as delta metrics at ts, as signaltometrics writes them: one resource
// and scope per kept resource, one metric per definition.
func (s *sums) metrics(ts pcommon.Timestamp) pmetric.Metrics {
	md := pmetric.NewMetrics()
	md.ResourceMetrics().EnsureCapacity(len(s.resources))
	for _, r := range s.order {
		rm := md.ResourceMetrics().AppendEmpty()
		r.attrs.MoveTo(rm.Resource().Attributes())
		sm := rm.ScopeMetrics().AppendEmpty()
		sm.Scope().SetName(scopeName)
		for m := range numMetrics {
			if len(r.order[m]) > 0 {
				writeMetric(sm.Metrics().AppendEmpty(), m, r.order[m], ts)
			}
		}
	}
	return md
}

func writeMetric(dest pmetric.Metric, m metricID, all []*series, ts pcommon.Timestamp) {
	def := metricDefs[m]
	dest.SetName(def.name)
	dest.SetDescription(def.description)
	dest.SetUnit(def.unit)
	switch def.kind {
	case kindIntSum, kindDoubleSum:
		sum := dest.SetEmptySum()
		sum.SetAggregationTemporality(pmetric.AggregationTemporalityDelta)
		dps := sum.DataPoints()
		dps.EnsureCapacity(len(all))
		for _, se := range all {
			dp := dps.AppendEmpty()
			se.attrs.MoveTo(dp.Attributes())
			if def.kind == kindIntSum {
				dp.SetIntValue(se.intSum)
			} else {
				dp.SetDoubleValue(se.dblSum)
			}
			dp.SetTimestamp(ts)
		}
	case kindHistogram:
		h := dest.SetEmptyHistogram()
		h.SetAggregationTemporality(pmetric.AggregationTemporalityDelta)
		dps := h.DataPoints()
		dps.EnsureCapacity(len(all))
		for _, se := range all {
			dp := dps.AppendEmpty()
			se.attrs.MoveTo(dp.Attributes())
			dp.ExplicitBounds().FromRaw(se.bounds)
			dp.BucketCounts().FromRaw(se.counts)
			dp.SetCount(se.count)
			dp.SetSum(se.sum)
			dp.SetTimestamp(ts)
		}
	case kindExponentialHistogram:
		h := dest.SetEmptyExponentialHistogram()
		h.SetAggregationTemporality(pmetric.AggregationTemporalityDelta)
		dps := h.DataPoints()
		dps.EnsureCapacity(len(all))
		for _, se := range all {
			writeExponential(dps.AppendEmpty(), se, ts)
		}
	}
}

func writeExponential(dp pmetric.ExponentialHistogramDataPoint, se *series, ts pcommon.Timestamp) {
	se.attrs.MoveTo(dp.Attributes())
	h := se.expo
	dp.SetZeroCount(h.ZeroCount())
	dp.SetScale(h.Scale())
	dp.SetCount(h.Count())
	dp.SetSum(h.Sum())
	if h.Count() > 0 {
		dp.SetMin(h.Min())
		dp.SetMax(h.Max())
	}
	dp.SetTimestamp(ts)
	copyBuckets(h.Positive(), dp.Positive())
	copyBuckets(h.Negative(), dp.Negative())
}

func copyBuckets(src *structure.Buckets, dest pmetric.ExponentialHistogramDataPointBuckets) {
	dest.SetOffset(src.Offset())
	dest.BucketCounts().EnsureCapacity(int(src.Len()))
	for i := range src.Len() {
		dest.BucketCounts().Append(src.At(i))
	}
}

// valueSource gives an item's value of spec's attribute; false when the item has none.
type valueSource interface {
	value(spec attrSpec) (pcommon.Value, bool)
}

// mapSource reads the attributes of a map (a resource, a log record, a data point).
type mapSource struct{ m pcommon.Map }

func (s *mapSource) value(spec attrSpec) (pcommon.Value, bool) { return s.m.Get(spec.key) }

// appendKey appends the identity of the attributes specs select (each value with its type) to
// key; ok is false when a required one is missing, and the item is then not counted in the metric.
func appendKey(key []byte, specs []attrSpec, src valueSource) ([]byte, bool) {
	// The required attributes first: an item that lacks one is not read further (most spans are
	// no exit spans, and the span name the destination metrics start with costs a new value).
	for _, spec := range specs {
		if spec.required && spec.source == fromSpan {
			if _, found := src.value(spec); !found {
				return key, false
			}
		}
	}
	for _, spec := range specs {
		v, found := src.value(spec)
		switch {
		case found:
			key = appendValue(key, v)
		case spec.hasDef:
			key = append(key, 0xfe) // the default, the same for every item
		case spec.required:
			return key, false
		default:
			key = append(key, 0)
		}
	}
	return key, true
}

func appendValue(key []byte, v pcommon.Value) []byte {
	key = append(key, byte(v.Type()))
	switch v.Type() {
	case pcommon.ValueTypeStr:
		s := v.Str()
		key = binary.AppendUvarint(key, uint64(len(s)))
		return append(key, s...)
	case pcommon.ValueTypeBool:
		if v.Bool() {
			return append(key, 1)
		}
		return append(key, 0)
	case pcommon.ValueTypeInt:
		return binary.LittleEndian.AppendUint64(key, uint64(v.Int()))
	case pcommon.ValueTypeDouble:
		return binary.LittleEndian.AppendUint64(key, math.Float64bits(v.Double()))
	default:
		s := v.AsString() // bytes, maps and slices: rare as metric dimensions
		key = binary.AppendUvarint(key, uint64(len(s)))
		return append(key, s...)
	}
}

// buildAttrs makes the attribute map specs select, as signaltometrics makes it: in spec order,
// the item's value or the default, missing optional ones left out.
func buildAttrs(specs []attrSpec, src valueSource, extra int) pcommon.Map {
	m := pcommon.NewMap()
	m.EnsureCapacity(len(specs) + extra)
	for _, spec := range specs {
		if v, found := src.value(spec); found {
			v.CopyTo(m.PutEmpty(spec.key))
		} else if spec.hasDef {
			spec.def.CopyTo(m.PutEmpty(spec.key))
		}
	}
	return m
}
