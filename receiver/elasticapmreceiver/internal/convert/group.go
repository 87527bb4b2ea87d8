// One resource per distinct resource of a request: the events of a request share their metadata,
// so their spans share one ResourceSpans, and every later stage (the buffer's encoding, the
// exporter) handles the resource once per request rather than once per span.

package convert

import (
	"slices"

	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/elastic/apm-data/model/modelpb"
)

// resources finds the ResourceSpans of a request by what the agent said of its process. An event
// is matched by reading its fields, so the resource's attributes are built once per resource,
// not once per event.
type resources struct {
	spans []ptrace.ResourceSpans
	keys  []processKey
	last  int // the index of the last match: consecutive events mostly share one
}

// spanUnder appends an empty span under the ResourceSpans whose resource is e's, made when the
// request has none yet.
func (r *resources) spanUnder(traces ptrace.Traces, e *modelpb.APMEvent) ptrace.Span {
	return r.spansOf(traces, e).AppendEmpty()
}

// spansOf is the span list of the ResourceSpans whose resource is e's, made when the request has
// none yet.
func (r *resources) spansOf(traces ptrace.Traces, e *modelpb.APMEvent) ptrace.SpanSlice {
	if r.last < len(r.keys) && r.keys[r.last].matches(e) {
		return r.spans[r.last].ScopeSpans().At(0).Spans()
	}
	for i := range r.keys {
		if r.keys[i].matches(e) {
			r.last = i
			return r.spans[i].ScopeSpans().At(0).Spans()
		}
	}
	rs := traces.ResourceSpans().AppendEmpty()
	putResource(rs.Resource().Attributes(), e)
	r.spans = append(r.spans, rs)
	r.keys = append(r.keys, processKeyOf(e))
	r.last = len(r.spans) - 1
	return rs.ScopeSpans().AppendEmpty().Spans()
}

// processKey is what putResource reads of an event, copied: apm-data may reuse an event once its
// batch is converted.
type processKey struct {
	text      []string // resourceText's values, in its order
	pid, ppid uint32
	argv      []string
	imageTag  string
	coldStart *bool
	labels    map[string]*modelpb.LabelValue
	numeric   map[string]*modelpb.NumericLabelValue
}

func processKeyOf(e *modelpb.APMEvent) processKey {
	k := processKey{
		text:     make([]string, len(resourceText)),
		pid:      e.GetProcess().GetPid(),
		ppid:     e.GetProcess().GetPpid(),
		argv:     append([]string(nil), e.GetProcess().GetArgv()...),
		imageTag: e.GetContainer().GetImageTag(),
		labels:   map[string]*modelpb.LabelValue{},
		numeric:  map[string]*modelpb.NumericLabelValue{},
	}
	for i, f := range resourceText {
		k.text[i] = f.of(e)
	}
	if f := e.GetFaas(); f != nil && f.ColdStart != nil {
		v := *f.ColdStart
		k.coldStart = &v
	}
	for name, v := range e.Labels {
		if v != nil && v.Global {
			k.labels[name] = &modelpb.LabelValue{Value: v.Value, Values: append([]string(nil), v.Values...)}
		}
	}
	for name, v := range e.NumericLabels {
		if v != nil && v.Global {
			k.numeric[name] = &modelpb.NumericLabelValue{Value: v.Value, Values: append([]float64(nil), v.Values...)}
		}
	}
	return k
}

// matches reports whether e's resource attributes would be the key's.
func (k *processKey) matches(e *modelpb.APMEvent) bool {
	p := e.GetProcess()
	if p.GetPid() != k.pid || p.GetPpid() != k.ppid || !slices.Equal(p.GetArgv(), k.argv) ||
		e.GetContainer().GetImageTag() != k.imageTag {
		return false
	}
	var cold *bool
	if f := e.GetFaas(); f != nil {
		cold = f.ColdStart
	}
	if (cold == nil) != (k.coldStart == nil) || cold != nil && *cold != *k.coldStart {
		return false
	}
	for i, f := range resourceText {
		if f.of(e) != k.text[i] {
			return false
		}
	}
	return k.sameGlobalLabels(e)
}

func (k *processKey) sameGlobalLabels(e *modelpb.APMEvent) bool {
	n := 0
	for name, v := range e.Labels {
		if v == nil || !v.Global {
			continue
		}
		n++
		if w, ok := k.labels[name]; !ok || w.Value != v.Value || !slices.Equal(w.Values, v.Values) {
			return false
		}
	}
	if n != len(k.labels) {
		return false
	}
	n = 0
	for name, v := range e.NumericLabels {
		if v == nil || !v.Global {
			continue
		}
		n++
		if w, ok := k.numeric[name]; !ok || w.Value != v.Value || !slices.Equal(w.Values, v.Values) {
			return false
		}
	}
	return n == len(k.numeric)
}
