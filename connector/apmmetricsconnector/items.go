package apmmetricsconnector

import (
	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/sampling"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// instanceKey carries the collector's own service.instance.id on every aggregated resource, as
// signaltometrics does (two collectors' metrics of one service stay apart in a time-series data
// stream instead of refusing each other as duplicates).
const instanceKey = "signal_to_metrics.service.instance.id"

// counter sums items into the pending sums; the caller holds the connector's lock.
type counter struct {
	specs     attrSpecs
	resources [2][]attrSpec
	outcome   attrSpec // event.outcome, with its slot
	instance  string   // the collector's service.instance.id; empty: none
	key       []byte   // scratch
	facts     spanFacts
}

func newCounter(customSpan, customResource []string, instance string) counter {
	c := counter{specs: newAttrSpecs(customSpan), resources: resourceSpecs(customResource), instance: instance}
	slots := c.specs.assignSlots()
	c.outcome = attrSpec{key: "event.outcome", slot: slots["event.outcome"]}
	c.facts.vals = make([]pcommon.Value, len(slots))
	c.facts.known = make([]lookup, len(slots))
	return c
}

// resourcesOf returns the sums of the resource's two kept attribute sets. Their attribute maps
// are built only for a resource new to the sums: most requests come from known ones.
func (c *counter) resourcesOf(s *sums, res pcommon.Map) [2]*resourceSums {
	var out [2]*resourceSums
	src := &mapSource{res}
	for set, specs := range c.resources {
		c.key = resourceKey(c.key[:0], specs, src)
		if out[set] = s.resource(c.key); out[set] != nil {
			continue
		}
		attrs := buildAttrs(specs, src, 1)
		if c.instance != "" {
			attrs.PutStr(instanceKey, c.instance)
		}
		out[set] = s.addResource(c.key, attrs)
	}
	return out
}

// lookup is what a span attribute's memo holds.
type lookup uint8

const (
	notLooked lookup = iota
	found
	absent
)

// spanFacts are what a span's metrics are made of; the span attributes read are memoized by
// slot (nine metrics read the same few keys: one lookup each instead of one per metric).
type spanFacts struct {
	attrs    pcommon.Map
	isRoot   pcommon.Value
	span     ptrace.Span
	name     pcommon.Value // the span's name, made when a metric first reads it (nameMade)
	nameMade bool
	vals     []pcommon.Value
	known    []lookup
	count    int64   // the adjusted count: how many spans this sampled one stands for
	duration float64 // microseconds, truncated
}

func (f *spanFacts) value(spec attrSpec) (pcommon.Value, bool) {
	switch spec.source {
	case transactionRoot:
		return f.isRoot, true
	case spanName:
		if !f.nameMade {
			f.name, f.nameMade = pcommon.NewValueStr(f.span.Name()), true
		}
		return f.name, true
	}
	switch f.known[spec.slot] {
	case found:
		return f.vals[spec.slot], true
	case absent:
		return pcommon.Value{}, false
	}
	v, ok := f.attrs.Get(spec.key)
	f.vals[spec.slot], f.known[spec.slot] = v, absent
	if ok {
		f.known[spec.slot] = found
	}
	return v, ok
}

// rootValues are transaction.root's two values, made once (read only).
var rootValues = [2]pcommon.Value{pcommon.NewValueBool(false), pcommon.NewValueBool(true)}

func boolIndex(b bool) int {
	if b {
		return 1
	}
	return 0
}

// adjustedCount is signaltometrics' AdjustedCount(): the inverse of the sampling probability the
// tracestate's OpenTelemetry threshold gives, 1 without one.
func adjustedCount(ts pcommon.TraceState) (float64, error) {
	raw := ts.AsRaw()
	if raw == "" {
		return 1, nil
	}
	w3c, err := sampling.NewW3CTraceState(raw)
	if err != nil {
		return 0, err
	}
	ot := w3c.OTelValue()
	if ot == nil || ot.TValue() == "" {
		return 1, nil
	}
	return ot.AdjustedCount(), nil
}

// representativeCount is how many events an Elastic APM agent's transaction or span stands for
// (transaction. or span.representative_count, 1/sample_rate; 0 for an unsampled transaction of an agent that
// reports its sample rate, as APM Server counts it), 1 for spans of other clients.
func representativeCount(attrs pcommon.Map) float64 {
	for _, k := range [...]string{"transaction.representative_count", "span.representative_count"} {
		if v, ok := attrs.Get(k); ok && v.Type() == pcommon.ValueTypeDouble && v.Double() >= 0 {
			return v.Double()
		}
	}
	return 1
}

// addSpan counts one span into the metrics it belongs to. It reports false when the span's
// tracestate could not be parsed (the span is then counted once).
func (c *counter) addSpan(s *sums, res [2]*resourceSums, span ptrace.Span) bool {
	adjusted, err := adjustedCount(span.TraceState())
	valid := err == nil
	if !valid {
		adjusted = 1
	}
	f := &c.facts
	f.attrs = span.Attributes()
	if adjusted == 1 {
		adjusted = representativeCount(f.attrs)
	}
	if adjusted < 1 {
		return valid // stands for no event
	}
	f.isRoot = rootValues[boolIndex(span.ParentSpanID().IsEmpty())]
	f.span, f.nameMade = span, false
	f.count = int64(adjusted)
	f.duration = float64(span.EndTimestamp().AsTime().Sub(span.StartTimestamp().AsTime()).Microseconds())
	clear(f.known)
	for m := range numMetrics {
		se := c.seriesOf(s, res, m, f)
		if se == nil {
			continue
		}
		switch m {
		case serviceSummary, destinationResponseTimeCount:
			se.intSum += f.count
		case destinationResponseTimeSum:
			se.dblSum += f.duration
		case serviceTransactionHistogram, transactionHistogram:
			if f.count != 0 {
				se.expo.UpdateByIncr(f.duration, uint64(f.count))
			}
		case serviceTransactionSummary, transactionSummary:
			if f.count != 0 {
				se.addHistogram(f.duration, f.count)
			}
		case successCount:
			c.addOutcome(se, f)
		}
	}
	return valid
}

// addOutcome counts a transaction into event.success_count: 1 for a success, 0 for any other
// outcome, each weighed by the adjusted count, so that sum / value_count is the success rate.
// (EDOT's connector weighs a success's value by the adjusted count a second time.)
func (c *counter) addOutcome(se *series, f *spanFacts) {
	if f.count == 0 {
		return
	}
	if outcome, _ := f.value(c.outcome); outcome.Type() == pcommon.ValueTypeStr && outcome.Str() == "success" {
		se.addHistogram(1, f.count)
	} else {
		se.addHistogram(0, f.count)
	}
}

// seriesOf returns the series of metric m the item belongs to, nil when it lacks a required
// attribute (or, for event.success_count, an outcome).
func (c *counter) seriesOf(s *sums, res [2]*resourceSums, m metricID, src valueSource) *series {
	specs := c.specs[m]
	var ok bool
	if c.key, ok = appendKey(c.key[:0], specs, src); !ok {
		return nil
	}
	if m == successCount {
		if _, has := src.value(c.outcome); !has {
			return nil
		}
	}
	r := res[metricDefs[m].resource]
	return s.seriesFor(r, m, c.key, func() pcommon.Map { return buildAttrs(specs, src, 0) })
}

// addRecord counts one log record (attributes attrs) into the service summary.
func (c *counter) addRecord(s *sums, res [2]*resourceSums, attrs pcommon.Map) {
	if se := c.seriesOf(s, res, serviceSummary, &mapSource{attrs}); se != nil {
		se.intSum++
	}
}
