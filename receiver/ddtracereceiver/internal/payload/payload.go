// Package payload decodes the trace payloads Datadog tracers send to the trace agent (v0.3/v0.4
// msgpack and JSON, the v0.5 dictionary format, the v0.7 TracerPayload, the protobuf AgentPayload
// of /api/v0.2) into one in-memory form. It accepts at least what the agent's own decoder
// (datadog-agent pkg/proto) accepts — nil for any value, strings as str or bin, ids as int or uint,
// numbers of any kind for metrics, invalid UTF-8 repaired — and bounds every allocation by the
// input's size, so a header claiming 2^32 elements allocates nothing.
package payload

import "slices"

// PriorityNone is the chunk priority of payloads that carry none (v0.3 to v0.5): the sampling
// priority then sits in a span's PriorityMetric, the root's as tracers write it.
const PriorityNone = -128

// PriorityMetric is the span metric that carries the sampling priority in v0.3 to v0.5 payloads.
const PriorityMetric = "_sampling_priority_v1"

// Payload is one request's traces with what the tracer said about itself.
type Payload struct {
	ContainerID     string
	LanguageName    string
	LanguageVersion string
	TracerVersion   string
	RuntimeID       string
	Env             string
	Hostname        string
	AppVersion      string
	Tags            []KV
	Chunks          []Chunk
	// NilSpans counts nil entries of span arrays: they carry nothing and are skipped, and the
	// receiver counts them as dropped, so the tracer's span count adds up.
	NilSpans int

	arena *reader // what the spans, meta and metrics were cut from, if a reader decoded them
}

// Release hands the memory the payload's spans, meta and metrics were cut from to later decodes,
// and empties the payload. Call it once, when nothing uses the payload any more; copies of the
// payload share that memory, so they must not be used either. The strings stay valid: they are
// not part of that memory.
func (p *Payload) Release() {
	if p.arena != nil {
		p.arena.release()
	}
	*p = Payload{}
}

// Chunk is the part of one trace a tracer flushed at once.
type Chunk struct {
	Priority     int32
	Origin       string
	Tags         []KV
	DroppedTrace bool
	Spans        []Span
}

// Span is a Datadog span. Meta, metrics and meta_struct keep the wire order; a repeated key is
// applied in that order, so the last one wins, as in the agent's maps.
type Span struct {
	Service    string
	Name       string
	Resource   string
	Type       string
	TraceID    uint64
	SpanID     uint64
	ParentID   uint64
	Start      int64 // Unix ns
	Duration   int64 // ns
	Error      int32
	Meta       []KV
	Metrics    []KF
	MetaStruct []KB
	Links      []Link
	Events     []Event
}

// KV is a string pair.
type KV struct{ Key, Value string }

// KF is a metric.
type KF struct {
	Key   string
	Value float64
}

// KB is a meta_struct entry: a msgpack blob.
type KB struct {
	Key   string
	Value []byte
}

// Link is a native span link.
type Link struct {
	TraceID     uint64
	TraceIDHigh uint64
	SpanID      uint64
	Attributes  []KV
	Tracestate  string
	Flags       uint32
}

// Event is a native span event.
type Event struct {
	Name         string
	TimeUnixNano uint64
	Attributes   []EventAttribute
}

// AttributeType is the type code of an event attribute value.
type AttributeType int32

// The event attribute value types of the wire format.
const (
	AttributeString AttributeType = 0
	AttributeBool   AttributeType = 1
	AttributeInt    AttributeType = 2
	AttributeDouble AttributeType = 3
	AttributeArray  AttributeType = 4
)

// EventAttribute is a typed event attribute (Key is empty for array elements).
type EventAttribute struct {
	Key    string
	Type   AttributeType
	Str    string
	Bool   bool
	Int    int64
	Double float64
	Array  []EventAttribute
}

// MetaValue returns the last value of key in the span's meta.
func (s *Span) MetaValue(key string) (string, bool) {
	for _, v := range slices.Backward(s.Meta) {
		if v.Key == key {
			return v.Value, true
		}
	}
	return "", false
}

// Metric returns the last value of key in the span's metrics.
func (s *Span) Metric(key string) (float64, bool) {
	for _, v := range slices.Backward(s.Metrics) {
		if v.Key == key {
			return v.Value, true
		}
	}
	return 0, false
}

// Root returns the span the Datadog Agent takes as the chunk's root: the last span without a parent, else
// (a partial flush) the last span whose parent is not in the chunk, else the last span; nil for a chunk without spans.
func (c *Chunk) Root() *Span {
	spans := c.Spans
	if len(spans) == 0 {
		return nil
	}
	for i := len(spans) - 1; i >= 0; i-- {
		if spans[i].ParentID == 0 {
			return &spans[i]
		}
	}
	if len(spans) > 64 {
		return orphanByMap(spans)
	}
	for i := len(spans) - 1; i >= 0; i-- {
		if !hasSpan(spans, spans[i].ParentID) {
			return &spans[i]
		}
	}
	return &spans[len(spans)-1]
}

func hasSpan(spans []Span, id uint64) bool {
	for i := range spans {
		if spans[i].SpanID == id {
			return true
		}
	}
	return false
}

// orphanByMap is Root's fallback for long chunks, where a quadratic search would cost more than
// a map.
func orphanByMap(spans []Span) *Span {
	ids := make(map[uint64]struct{}, len(spans))
	for i := range spans {
		ids[spans[i].SpanID] = struct{}{}
	}
	for i := len(spans) - 1; i >= 0; i-- {
		if _, ok := ids[spans[i].ParentID]; !ok {
			return &spans[i]
		}
	}
	return &spans[len(spans)-1]
}

// SamplingPriority is the chunk's sampling priority where the Datadog Agent looks for it: the
// chunk's own (v0.7), else the root's PriorityMetric, else the first span's that carries one (a
// fraction is cut towards zero, as the agent's conversion does). root is c.Root(); carrier is the
// span the priority was read from, root for the chunk's own. A chunk without spans has none.
func (c *Chunk) SamplingPriority(root *Span) (priority int64, carrier *Span, ok bool) {
	if root == nil {
		return 0, nil, false
	}
	if c.Priority != PriorityNone {
		return int64(c.Priority), root, true
	}
	if v, found := root.Metric(PriorityMetric); found {
		return int64(v), root, true
	}
	for i := range c.Spans {
		if v, found := c.Spans[i].Metric(PriorityMetric); found {
			return int64(v), &c.Spans[i], true
		}
	}
	return 0, nil, false
}

// SpanCount is the number of spans in the payload.
func (p *Payload) SpanCount() int {
	n := 0
	for i := range p.Chunks {
		n += len(p.Chunks[i].Spans)
	}
	return n
}
