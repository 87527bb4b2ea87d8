package chunkfilter

import (
	"errors"
	"regexp"

	"github.com/tracegate/tracegate/internal/ddsampler"
	"github.com/tracegate/tracegate/receiver/ddtracereceiver/internal/payload"
)

// Reason is why a chunk was dropped.
type Reason uint8

// The reasons, in the order the agent checks them.
const (
	Kept Reason = iota
	IgnoredResource
	RejectedTag
	MissingRequiredTag
	RejectedPriority // DropRejected's: the tracer rejected the chunk
	NumReasons
)

// String is the reason as the receiver's telemetry names it.
func (r Reason) String() string {
	switch r {
	case IgnoredResource:
		return "ignore_resources"
	case RejectedTag:
		return "filter_tags_reject"
	case MissingRequiredTag:
		return "filter_tags_require"
	case RejectedPriority:
		// The tracesampling processor's name for the same decision.
		return "priority_user_reject"
	default:
		return "kept"
	}
}

// Filter decides on chunks. A nil *Filter keeps everything.
type Filter struct {
	resources       []*regexp.Regexp
	require, reject []exactTag
	requireRegex    []regexTag
	rejectRegex     []regexTag
}

// New compiles cfg; it returns nil when no filter is set.
func New(cfg Config) (*Filter, error) {
	if !cfg.Enabled() {
		return nil, nil
	}
	f := &Filter{}
	var errs [5]error
	f.resources, errs[0] = parseResources(cfg.IgnoreResources)
	f.require, errs[1] = parseExact("filter_tags.require", cfg.FilterTags.Require)
	f.reject, errs[2] = parseExact("filter_tags.reject", cfg.FilterTags.Reject)
	f.requireRegex, errs[3] = parseRegex("filter_tags_regex.require", cfg.FilterTagsRegex.Require)
	f.rejectRegex, errs[4] = parseRegex("filter_tags_regex.reject", cfg.FilterTagsRegex.Reject)
	if err := errors.Join(errs[:]...); err != nil {
		return nil, err
	}
	return f, nil
}

// Decide tells whether the chunk whose root is root is kept, or why not. The resource is the
// span name when the tracer sent none, as the agent's normalisation makes it before filtering.
func (f *Filter) Decide(root *payload.Span) Reason {
	if f == nil || root == nil {
		return Kept
	}
	resource := root.Resource
	if resource == "" {
		resource = root.Name
	}
	for _, re := range f.resources {
		if re.MatchString(resource) {
			return IgnoredResource
		}
	}
	if f.rejects(root) {
		return RejectedTag
	}
	if f.lacksRequired(root) {
		return MissingRequiredTag
	}
	return Kept
}

func (f *Filter) rejects(root *payload.Span) bool {
	for _, t := range f.reject {
		if v, ok := root.MetaValue(t.key); ok && (t.value == "" || v == t.value) {
			return true
		}
	}
	for _, t := range f.rejectRegex {
		if v, ok := root.MetaValue(t.key); ok && (t.value == nil || t.value.MatchString(v)) {
			return true
		}
	}
	return false
}

func (f *Filter) lacksRequired(root *payload.Span) bool {
	for _, t := range f.require {
		if v, ok := root.MetaValue(t.key); !ok || (t.value != "" && v != t.value) {
			return true
		}
	}
	for _, t := range f.requireRegex {
		if v, ok := root.MetaValue(t.key); !ok || (t.value != nil && !t.value.MatchString(v)) {
			return true
		}
	}
	return false
}

// Counts are the chunks and spans dropped, per reason.
type Counts struct {
	Chunks, Spans [NumReasons]int
}

// Payloads removes the chunks the filter drops from every payload, in place, and counts them.
func (f *Filter) Payloads(payloads []payload.Payload) Counts {
	if f == nil {
		return Counts{}
	}
	return remove(payloads, func(c *payload.Chunk) Reason { return f.Decide(c.Root()) })
}

// DropRejected removes the chunks the tracer rejected from every payload, in place, and counts
// them under RejectedPriority: those whose sampling priority (payload.Chunk.SamplingPriority) is
// below 0, which the agent drops whatever its samplers say. A chunk without a priority is kept.
func DropRejected(payloads []payload.Payload) Counts {
	return remove(payloads, func(c *payload.Chunk) Reason {
		if p, _, ok := c.SamplingPriority(c.Root()); ok && ddsampler.Rejected(p) {
			return RejectedPriority
		}
		return Kept
	})
}

// remove drops the chunks decide does not keep, in place, and counts them per reason.
func remove(payloads []payload.Payload, decide func(*payload.Chunk) Reason) Counts {
	var c Counts
	for pi := range payloads {
		p := &payloads[pi]
		kept := p.Chunks[:0]
		for ci := range p.Chunks {
			ch := &p.Chunks[ci]
			if r := decide(ch); r != Kept {
				c.Chunks[r]++
				c.Spans[r] += len(ch.Spans)
				continue
			}
			kept = append(kept, *ch)
		}
		clear(p.Chunks[len(kept):])
		p.Chunks = kept
	}
	return c
}
