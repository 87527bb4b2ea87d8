package tracesamplingprocessor

import (
	"math"
	"regexp"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// rareResourceWindow is how long Datakit's keep_rare_resource remembers an entry span, and
// rareResourceCapacity how many it remembers at most (then they fold: seenSet).
const (
	rareResourceWindow   = time.Hour
	rareResourceCapacity = 100_000
)

// datakitSampler applies Datakit's filters and sampler, in Datakit's order: close_resource,
// errors kept, omit_err_status, keep_rare_resource, user keep, sampling_rate.
type datakitSampler struct {
	closeAll   []*regexp.Regexp            // close_resource "*"
	closeBySvc map[string][]*regexp.Regexp // close_resource per service
	omit       map[string]struct{}
	threshold  uint64   // floor(sampling_rate × 10000)
	rare       *seenSet // nil: keep_rare_resource off
}

// newDatakitSampler returns nil when no Datakit rule is set, so the processor skips the section.
func newDatakitSampler(cfg DatakitConfig) *datakitSampler {
	if cfg.SamplingRate >= 1 && len(cfg.CloseResource) == 0 && len(cfg.OmitErrStatus) == 0 && !cfg.KeepRareResource {
		return nil
	}
	d := &datakitSampler{
		closeBySvc: map[string][]*regexp.Regexp{},
		omit:       map[string]struct{}{},
		threshold:  uint64(math.Floor(cfg.SamplingRate * datakitRateScale)),
	}
	for svc, patterns := range cfg.CloseResource {
		for _, p := range patterns {
			re := regexp.MustCompile(p) // Validate compiled it
			if svc == "*" {
				d.closeAll = append(d.closeAll, re)
			} else {
				d.closeBySvc[svc] = append(d.closeBySvc[svc], re)
			}
		}
	}
	for _, s := range cfg.OmitErrStatus {
		d.omit[s] = struct{}{}
	}
	if cfg.KeepRareResource {
		d.rare = newSeenSet(rareResourceCapacity)
	}
	return d
}

// closes reports whether close_resource matches the span.
func (d *datakitSampler) closes(s ptrace.Span, service string) bool {
	if len(d.closeAll) == 0 && len(d.closeBySvc) == 0 {
		return false
	}
	res := resourceOf(s)
	for _, re := range d.closeAll {
		if re.MatchString(res) {
			return true
		}
	}
	for _, re := range d.closeBySvc[service] {
		if re.MatchString(res) {
			return true
		}
	}
	return false
}

// omits reports whether the span is a web span that answered a status in omit_err_status.
func (d *datakitSampler) omits(s ptrace.Span) bool {
	if len(d.omit) == 0 || !isWebSpan(s) {
		return false
	}
	_, ok := d.omit[httpStatusOf(s)]
	return ok
}

// decide is Datakit's verdict on a trace close_resource did not drop.
func (d *datakitSampler) decide(now time.Time, t *traceFacts, root ptrace.Span, res pcommon.Resource) (bool, reason) {
	switch {
	case t.hasError:
		return true, reasonError
	case t.omitted:
		return false, reasonOmitErrStatus
	case d.rare != nil && t.hasRoot && d.rareEntry(now, root, res):
		return true, reasonRareResource
	case t.priority >= priorityUserKeep:
		return true, reasonUserKeep
	case d.threshold >= datakitRateScale:
		return true, reasonNone
	case t.low64()%datakitRateScale <= d.threshold:
		return true, reasonSamplingRate
	}
	return false, reasonSamplingRate
}

// rareEntry reports whether the entry span's service, resource and type are new within the hour,
// and remembers them.
func (d *datakitSampler) rareEntry(now time.Time, root ptrace.Span, res pcommon.Resource) bool {
	typ := strAttr(root.Attributes(), attrSpanType)
	if typ == "" {
		typ = root.Kind().String()
	}
	sig := signature(serviceOf(res), resourceOf(root), typ)
	if d.rare.seen(sig, now) {
		return false
	}
	d.rare.remember(sig, now, rareResourceWindow)
	return true
}
