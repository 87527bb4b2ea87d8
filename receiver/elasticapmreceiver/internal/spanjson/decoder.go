// Package spanjson decodes the intake's most frequent events, spans and transactions, from their
// NDJSON lines straight into apm-data's event model, for a fraction of what apm-data's generic
// decoding costs (docs/benchmarks.md). It takes an event only when it reads it exactly as
// apm-data's v2 decoder would: the fields agents commonly send, with values apm-data accepts. Any
// other line, or a field it does not know, it declines, and the caller hands that line to
// apm-data. The fuzz test holds the two decoders equal on every line spanjson takes.
package spanjson

import (
	"bytes"
	"maps"
	"time"
	"unicode/utf8"

	"github.com/elastic/apm-data/model/modelpb"
)

// maxKeyword is apm-data's limit, in characters, on the keyword fields it validates.
const maxKeyword = 1024

// maxTimestampMicros keeps a timestamp's nanoseconds within an int64, as apm-data computes them.
const maxTimestampMicros = 9_000_000_000_000_000

// Decoder decodes the span and transaction lines of one request. The strings of the events it
// returns are views of its own copies of the lines: a string costs no allocation of its own, and
// a copy lives as long as any of its strings does. The copies are made in chunks that double
// from firstChunk to lastChunk, so that a request's chunks are never much larger than its lines;
// a line larger than a chunk gets memory of its own, so that no chunk made for it holds other
// lines' strings.
type Decoder struct {
	arena []byte
	chunk int
	tags  []Tag // room for a line's tags, reused from line to line
	// kept holds the tags of the events taken, in chunks that double from firstTags to
	// lastTags: one allocation for many events.
	kept      []Tag
	keptChunk int
}

// Event is a span or transaction event Decode took. Its own labels are in Tags, not yet in the
// event's label maps: converting them to attributes needs no map, and Labeled builds the maps
// for whoever needs apm-data's form.
type Event struct {
	*modelpb.APMEvent
	Tags []Tag
}

const (
	firstTags = 32
	lastTags  = 512
)

const (
	firstChunk = 2 << 10
	lastChunk  = 64 << 10
)

// Decode reads line, an NDJSON line of the intake, as a span or transaction event. ok is false
// when the line is not one Decode takes; the line then goes to apm-data. The event has the
// event's own fields only: Attach gives it the request's metadata.
func (d *Decoder) Decode(line []byte) (event Event, ok bool) {
	if !namesSpanOrTransaction(line) {
		return Event{}, false // errors, metricsets, logs: not copied
	}
	if len(line) > lastChunk {
		return d.decode(bytes.Clone(line))
	}
	if cap(d.arena)-len(d.arena) < len(line) {
		d.chunk = min(max(2*d.chunk, firstChunk), lastChunk)
		d.arena = make([]byte, 0, max(d.chunk, len(line)))
	}
	start := len(d.arena)
	d.arena = append(d.arena, line...)
	if event, ok = d.decode(d.arena[start:]); !ok {
		d.arena = d.arena[:start] // nothing refers to a declined line's copy
	}
	return event, ok
}

// namesSpanOrTransaction reports whether line's first key is one Decode reads.
func namesSpanOrTransaction(line []byte) bool {
	s := scanner{b: line}
	if !s.eat('{') {
		return false
	}
	key, ok := s.key()
	return ok && (string(key) == "span" || string(key) == "transaction")
}

// decode reads a line that is one object whose only key names the event.
func (d *Decoder) decode(line []byte) (event Event, ok bool) {
	s := scanner{b: line}
	seen := false
	ok = s.object(func(key []byte) bool {
		if seen {
			return false
		}
		seen = true
		switch string(key) {
		case "span":
			sp := span{tags: d.tags[:0]}
			taken := sp.read(&s) && sp.valid()
			if taken {
				event = Event{sp.event(), d.keep(sp.tags)}
			}
			d.tags = sp.tags[:0]
			return taken
		case "transaction":
			tx := transaction{tags: d.tags[:0]}
			taken := tx.read(&s) && tx.valid()
			if taken {
				event = Event{tx.event(), d.keep(tx.tags)}
			}
			d.tags = tx.tags[:0]
			return taken
		}
		return false
	})
	if !ok || !seen || !s.atEnd() {
		return Event{}, false
	}
	return event, true
}

// keep copies an event's tags into the chunk of kept tags.
func (d *Decoder) keep(tags []Tag) []Tag {
	if len(tags) == 0 {
		return nil
	}
	if cap(d.kept)-len(d.kept) < len(tags) {
		d.keptChunk = min(max(2*d.keptChunk, firstTags), lastTags)
		d.kept = make([]Tag, 0, max(d.keptChunk, len(tags)))
	}
	start := len(d.kept)
	d.kept = append(d.kept, tags...)
	return d.kept[start:len(d.kept):len(d.kept)]
}

// optStr is a string field: set says whether the line had it (null counts as absent).
type optStr struct {
	v   string
	set bool
}

// tooLong reports whether any of the keyword fields is over apm-data's limit.
func tooLong(fields ...optStr) bool {
	for _, f := range fields {
		if len(f.v) > maxKeyword && utf8.RuneCountInString(f.v) > maxKeyword {
			return true
		}
	}
	return false
}

// validOutcome is apm-data's rule for an outcome: absent, or one of three words ("" is stored as
// it is, and declined here).
func validOutcome(o optStr) bool {
	switch o.v {
	case "success", "failure", "unknown":
		return true
	}
	return !o.set
}

// outcomeOf is the outcome the agent sent, else the one apm-data derives from the HTTP status:
// a failure from failedFrom on (spans: 400, transactions: 500).
func outcomeOf(sent optStr, status *uint32, failedFrom uint32) string {
	switch {
	case sent.set:
		return sent.v
	case status != nil && *status >= failedFrom:
		return "failure"
	case status != nil:
		return "success"
	}
	return "unknown"
}

// representativeCount is how many events one sampled at rate stands for, as apm-data counts it.
func representativeCount(rate float64) float64 {
	if rate > 0 {
		return 1 / rate
	}
	return 0
}

// Tag is one of an event's labels: a string, a bool (stored as its text) or a number.
type Tag struct {
	Key     string
	Str     string
	Num     float64
	Numeric bool
}

// maxNames bounds the labels and headers of a line spanjson takes: the check for a name given
// twice is a scan, and apm-data takes lines with more.
const maxNames = 64

// readTags reads an event's labels (context.tags). A key given twice, or tags given twice, are
// declined.
func readTags(s *scanner, dst *[]Tag) bool {
	if len(*dst) > 0 {
		return false
	}
	if s.null() {
		return true
	}
	return s.object(func(key []byte) bool {
		if len(*dst) == maxNames {
			return false
		}
		for _, t := range *dst {
			if t.Key == view(key) {
				return false
			}
		}
		if s.null() {
			return true // apm-data takes a null label and drops it
		}
		t := Tag{Key: view(key)}
		switch s.peek() {
		case '"':
			v, ok := s.str()
			if !ok || utf8.RuneCountInString(v) > maxKeyword {
				return false
			}
			t.Str = v
		case 't', 'f':
			v, ok := s.boolean()
			if !ok {
				return false
			}
			t.Str = boolText(v)
		default:
			text, ok := s.number()
			if !ok {
				return false
			}
			if t.Num, ok = parseFloat(text); !ok {
				return false
			}
			t.Numeric = true
		}
		*dst = append(*dst, t)
		return true
	})
}

// labelsOf is an event's tags as apm-data's label maps, their values allocated at once.
func labelsOf(tags []Tag) (modelpb.Labels, modelpb.NumericLabels) {
	numbers := 0
	for _, t := range tags {
		if t.Numeric {
			numbers++
		}
	}
	var labels modelpb.Labels
	var numeric modelpb.NumericLabels
	strValues := make([]modelpb.LabelValue, len(tags)-numbers)
	numValues := make([]modelpb.NumericLabelValue, numbers)
	if len(strValues) > 0 {
		labels = make(modelpb.Labels, len(strValues))
	}
	if numbers > 0 {
		numeric = make(modelpb.NumericLabels, numbers)
	}
	ns, ss := 0, 0
	for _, t := range tags {
		if t.Numeric {
			numValues[ns].Value = t.Num
			numeric[t.Key] = &numValues[ns]
			ns++
		} else {
			strValues[ss].Value = t.Str
			labels[t.Key] = &strValues[ss]
			ss++
		}
	}
	return labels, numeric
}

// The read functions below take a value or null. null leaves the field as it was: apm-data's
// nullable fields ignore it, so a key given twice with null last keeps the first value.

func boolText(v bool) string {
	if v {
		return "true"
	}
	return "false"
}

func readStr(s *scanner, dst *optStr) bool {
	if s.null() {
		return true
	}
	v, ok := s.str()
	*dst = optStr{v: v, set: ok}
	return ok
}

func readDecimal(s *scanner, dst *float64, set *bool) bool {
	if s.null() {
		return true
	}
	*dst, *set = s.decimal()
	return *set
}

func readBool(s *scanner, dst **bool) bool {
	if s.null() {
		return true
	}
	v, ok := s.boolean()
	*dst = &v
	return ok
}

// readUint32 reads a count or code; values above 2^31 are declined (apm-data would wrap them).
func readUint32(s *scanner, dst **uint32) bool {
	if s.null() {
		return true
	}
	v, ok := s.uint(1 << 31)
	u := uint32(v)
	*dst = &u
	return ok
}

func readUint64(s *scanner, dst **uint64) bool {
	if s.null() {
		return true
	}
	v, ok := s.uint(1 << 62)
	*dst = &v
	return ok
}

// durationNanos is apm-data's conversion of a duration in milliseconds.
func durationNanos(ms float64) uint64 { return uint64(ms * float64(time.Millisecond)) }

// Attach gives an event what apm-data copies into every event from the request's metadata: the
// resource's messages and the global labels (shared with base, which is not changed). It reports
// whether the event's resource is still base's: a global label the event's own label overrides
// is not on its resource. The event's own labels stay in its Tags until Labeled merges them.
func Attach(e Event, base *modelpb.APMEvent) (sameResource bool) {
	sameResource = !overrides(e.Tags, base)
	if e.Service != nil { // a span's service target
		svc := base.GetService().CloneVT()
		if svc == nil {
			svc = &modelpb.Service{}
		}
		svc.Target = e.Service.Target
		e.Service = svc
	} else {
		e.Service = base.Service
	}
	e.Agent, e.Cloud, e.Container, e.Host = base.Agent, base.Cloud, base.Container, base.Host
	e.Kubernetes, e.Network, e.Process, e.User = base.Kubernetes, base.Network, base.Process, base.User
	e.Faas, e.Device, e.Observer, e.DataStream, e.System = base.Faas, base.Device, base.Observer, base.DataStream, base.System
	e.Labels, e.NumericLabels = base.Labels, base.NumericLabels
	return sameResource
}

// Labeled is the attached event as apm-data gives it: its label maps hold the global labels of
// base, overridden by the event's own.
func (e Event) Labeled(base *modelpb.APMEvent) *modelpb.APMEvent {
	labels, numeric := labelsOf(e.Tags)
	e.Labels = mergeLabels(base.Labels, labels)
	e.NumericLabels = mergeLabels(base.NumericLabels, numeric)
	return e.APMEvent
}

// overrides reports whether one of tags has the name of a global label of base.
func overrides(tags []Tag, base *modelpb.APMEvent) bool {
	if len(base.Labels) == 0 && len(base.NumericLabels) == 0 {
		return false
	}
	for _, t := range tags {
		_, s := base.Labels[t.Key]
		_, n := base.NumericLabels[t.Key]
		if s || n {
			return true
		}
	}
	return false
}

// mergeLabels is base's labels overridden by own's; base's map is not changed.
func mergeLabels[V any](base, own map[string]V) map[string]V {
	if len(base) == 0 {
		return own
	}
	if len(own) == 0 {
		return base
	}
	merged := make(map[string]V, len(base)+len(own))
	maps.Copy(merged, base)
	maps.Copy(merged, own)
	return merged
}

// MetadataCarrier is a transaction line of nothing but apm-data's required fields. Put after a
// request's metadata line, in a stream apm-data decodes, it comes back as an event holding that
// metadata: the base Attach needs. It is not an event of the request.
var MetadataCarrier = []byte(`{"transaction":{"id":"00","trace_id":"00","type":"carrier","duration":0,"span_count":{"started":0}}}` + "\n")
