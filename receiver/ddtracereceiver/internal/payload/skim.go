package payload

import (
	"fmt"

	"github.com/tinylib/msgp/msgp"
)

// Skipped counts the chunks DecodeTracesMsgpackDropping left out, and their spans (nil entries
// not included: those are in Payload.NilSpans, as for every chunk).
type Skipped struct {
	Chunks, Spans int
}

// DecodeTracesMsgpackDropping is DecodeTracesMsgpack followed by the removal of the chunks whose
// sampling priority (Chunk.SamplingPriority) reject refuses, without decoding those chunks' spans:
// a chunk is first skimmed, reading only what decides its priority and checking the rest as the
// full decoder would. A chunk that is kept, or that the skim cannot vouch for (malformed, or with
// fields it does not check), is decoded in full (and still left out if rejected), so the result
// and every error are DecodeTracesMsgpack's.
func DecodeTracesMsgpackDropping(b []byte, reject func(priority int64) bool) (Payload, Skipped, error) {
	body := b
	r := newLazyReader(b)
	n, b, err := arrayHeader(b)
	if err != nil {
		return Payload{}, Skipped{}, err
	}
	if err := r.charge(n, sizeChunk); err != nil {
		return Payload{}, Skipped{}, err
	}
	var skipped Skipped
	p := Payload{Chunks: make([]Chunk, 0, n), arena: r}
	for i := range n {
		if rest, spans, ok := r.skimRejected(b, reject); ok {
			skipped.Chunks++
			skipped.Spans += spans
			b = rest
			continue
		}
		r.copySource(body)
		c := Chunk{Priority: PriorityNone}
		if c.Spans, b, err = r.readSpans(b); err != nil {
			r.release()
			return Payload{}, Skipped{}, fmt.Errorf("trace %d: %w", i, err)
		}
		if prio, _, ok := c.SamplingPriority(c.Root()); ok && reject(prio) {
			skipped.Chunks++
			skipped.Spans += len(c.Spans)
			continue
		}
		p.Chunks = append(p.Chunks, c)
	}
	p.NilSpans = r.nilSpans
	return p, skipped, nil
}

// newLazyReader is newReader without the copy of the body into src: a request whose chunks are
// all skipped needs none of its strings (copySource makes it).
func newLazyReader(b []byte) *reader {
	r := newReaderOfPrefix(nil, 0)
	r.n = len(b)
	r.budget = maxStructBytesPerBodyByte*len(b) + structBytesSlack
	return r
}

// copySource makes src, the copy of the body the decoded strings are cut from, once.
func (r *reader) copySource(body []byte) {
	if len(r.src) != len(body) {
		r.src = string(body)
	}
}

// skimRejected skims the chunk at b. It returns what follows it, its span count and true when
// the chunk is well-formed, holds nothing the skim does not check, and reject refuses its
// priority; otherwise false, with the reader's budget and nil span count as they were.
func (r *reader) skimRejected(b []byte, reject func(int64) bool) ([]byte, int, bool) {
	budget, nilSpans := r.budget, r.nilSpans
	rest, spans, ok := r.skimChunk(b)
	if ok {
		c := Chunk{Priority: PriorityNone, Spans: spans}
		if prio, _, found := c.SamplingPriority(c.Root()); found && reject(prio) {
			return rest, len(spans), true
		}
	}
	r.budget, r.nilSpans = budget, nilSpans
	return b, 0, false
}

// skimChunk reads a chunk's span array as readSpans does, keeping of each span only its ids and
// its priority metric, in the reader's scratch spans (valid until the next skim).
func (r *reader) skimChunk(b []byte) ([]byte, []Span, bool) {
	n, b, err := arrayHeader(b)
	if err != nil || r.charge(n, sizeSpan) != nil {
		return b, nil, false
	}
	r.scratch = r.scratch[:0]
	for range n {
		if msgp.IsNil(b) {
			b = b[1:]
			r.nilSpans++
			continue
		}
		var s skimmedSpan
		var ok bool
		if b, ok = r.skimSpan(b, &s); !ok {
			return b, nil, false
		}
		r.scratch = append(r.scratch, s)
	}
	return b, r.scratchSpans(), true
}

// skimmedSpan is what the skim keeps of a span.
type skimmedSpan struct {
	spanID, parentID uint64
	priority         float64
	hasPriority      bool
}

// scratchSpans turns the skimmed spans into Spans carrying only what Chunk.Root and
// Chunk.SamplingPriority read, so that the skim decides with the very same code.
func (r *reader) scratchSpans() []Span {
	n := len(r.scratch)
	if cap(r.scratchOut) < n {
		r.scratchOut = make([]Span, n)
		r.scratchKF = make([]KF, n)
	}
	spans, kfs := r.scratchOut[:n], r.scratchKF[:n]
	for i, s := range r.scratch {
		spans[i] = Span{SpanID: s.spanID, ParentID: s.parentID}
		if s.hasPriority {
			kfs[i] = KF{Key: PriorityMetric, Value: s.priority}
			spans[i].Metrics = kfs[i : i+1 : i+1]
		}
	}
	return spans
}

// skimSpan checks one span map as readSpan reads it, keeping its ids and priority in s. It
// returns false for anything readSpan would refuse and for the fields it does not check.
func (r *reader) skimSpan(b []byte, s *skimmedSpan) ([]byte, bool) {
	n, b, err := mapHeader(b)
	if err != nil {
		return b, false
	}
	for ; n > 0 && err == nil; n-- {
		var key []byte
		if key, b, err = readKey(b); err != nil {
			return b, false
		}
		switch string(key) {
		case "service", "name", "resource", "type":
			b, err = skipString(b)
		case "trace_id":
			_, b, err = readUint64(b)
		case "span_id":
			s.spanID, b, err = readUint64(b)
		case "parent_id":
			s.parentID, b, err = readUint64(b)
		case "start", "duration":
			_, b, err = readInt64(b)
		case "error":
			_, b, err = readInt32(b)
		case "meta":
			b, err = r.skimKVs(b)
		case "metrics":
			s.priority, s.hasPriority, b, err = r.skimMetrics(b)
		case "meta_struct", "span_links", "span_events":
			return b, false
		default:
			b, err = msgp.Skip(b)
		}
	}
	return b, err == nil
}

// skipString passes over what readString accepts (str, bin or nil) without reading it: no
// string is made, and a repair of invalid UTF-8 never fails.
func skipString(b []byte) ([]byte, error) {
	if n, hdr := shortStrHeader(b); hdr > 0 && len(b) >= hdr+n { // fast path, as readString's
		return b[hdr+n:], nil
	}
	if msgp.IsNil(b) {
		return b[1:], nil
	}
	var err error
	switch t := msgp.NextType(b); t {
	case msgp.StrType:
		_, b, err = msgp.ReadStringZC(b)
	case msgp.BinType:
		_, b, err = msgp.ReadBytesZC(b)
	default:
		err = msgp.TypeError{Encoded: t, Method: msgp.StrType}
	}
	return b, err
}

// skimKVs passes over a map of strings as readKVs reads it, charging the same budget.
func (r *reader) skimKVs(b []byte) ([]byte, error) {
	n, b, err := mapHeader(b)
	if err != nil || n == 0 {
		return b, err
	}
	if err := r.charge(n, sizeKV); err != nil {
		return b, err
	}
	for ; n > 0 && err == nil; n-- {
		if b, err = skipString(b); err == nil {
			b, err = skipString(b)
		}
	}
	return b, err
}

// skimMetrics passes over a metrics map as readMetrics reads it, charging the same budget, and
// returns the last value of PriorityMetric (Span.Metric's).
func (r *reader) skimMetrics(b []byte) (float64, bool, []byte, error) {
	n, b, err := mapHeader(b)
	if err != nil || n == 0 {
		return 0, false, b, err
	}
	if err := r.charge(n, sizeKF); err != nil {
		return 0, false, b, err
	}
	var prio, v float64
	found := false
	for ; n > 0; n-- {
		var key []byte
		if key, b, err = readStringBytes(b); err != nil {
			return 0, false, b, err
		}
		if v, b, err = readFloat64(b); err != nil {
			return 0, false, b, err
		}
		if string(key) == PriorityMetric {
			prio, found = v, true
		}
	}
	return prio, found, b, nil
}

// readStringBytes reads what readString accepts, as the raw bytes: a key that is not valid UTF-8
// never equals an ASCII name, before or after readString's repair.
func readStringBytes(b []byte) ([]byte, []byte, error) {
	if msgp.IsNil(b) {
		return nil, b[1:], nil
	}
	switch t := msgp.NextType(b); t {
	case msgp.StrType:
		return msgp.ReadStringZC(b)
	case msgp.BinType:
		return msgp.ReadBytesZC(b)
	default:
		return nil, b, msgp.TypeError{Encoded: t, Method: msgp.StrType}
	}
}
