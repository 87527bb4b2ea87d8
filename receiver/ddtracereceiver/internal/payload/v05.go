package payload

import (
	"errors"
	"fmt"

	"github.com/tinylib/msgp/msgp"
)

// v05SpanFields is the length of a v0.5 span array.
const v05SpanFields = 12

// DecodeV05 decodes the v0.5 dictionary format: [dictionary []string, traces [][]span], where a
// span is a 12-element array whose strings are indexes into the dictionary.
func DecodeV05(b []byte) (Payload, error) {
	r := newReaderOfPrefix(b, dictionaryEnd(b))
	n, b, err := arrayHeader(b)
	if err != nil {
		return Payload{}, err
	}
	if n != 2 {
		return Payload{}, fmt.Errorf("v0.5 payload must be an array of 2 (dictionary, traces), got %d", n)
	}
	var dict []string
	if n, b, err = arrayHeader(b); err != nil {
		return Payload{}, fmt.Errorf("dictionary: %w", err)
	}
	if err := r.charge(n, sizeStr); err != nil {
		return Payload{}, fmt.Errorf("dictionary: %w", err)
	}
	dict = make([]string, n)
	for i := range dict {
		if dict[i], b, err = r.readString(b); err != nil {
			return Payload{}, fmt.Errorf("dictionary entry %d: %w", i, err)
		}
	}
	if n, b, err = arrayHeader(b); err != nil {
		return Payload{}, fmt.Errorf("traces: %w", err)
	}
	if err := r.charge(n, sizeChunk); err != nil {
		return Payload{}, err
	}
	p := Payload{Chunks: make([]Chunk, n), arena: r}
	for i := range p.Chunks {
		p.Chunks[i].Priority = PriorityNone
		var spans int
		if spans, b, err = arrayHeader(b); err != nil {
			return Payload{}, fmt.Errorf("trace %d: %w", i, err)
		}
		if err := r.charge(spans, sizeSpan); err != nil {
			return Payload{}, fmt.Errorf("trace %d: %w", i, err)
		}
		p.Chunks[i].Spans = r.spanSlice(spans)
		for j := range p.Chunks[i].Spans {
			if b, err = r.readV05Span(b, dict, &p.Chunks[i].Spans[j]); err != nil {
				return Payload{}, fmt.Errorf("trace %d span %d: %w", i, j, err)
			}
		}
	}
	return p, nil
}

// dictionaryEnd is where the dictionary of a v0.5 body ends: every string of the payload lies
// before it, so that is all the reader copies (the spans after it are integers). A malformed body
// gives the whole body's length, and decoding then reports what is wrong with it.
func dictionaryEnd(b []byte) int {
	n, rest, err := arrayHeader(b)
	if err != nil || n != 2 {
		return len(b)
	}
	n, rest, err = arrayHeader(rest)
	for ; err == nil && n > 0; n-- {
		rest, err = msgp.Skip(rest)
	}
	if err != nil {
		return len(b)
	}
	return len(b) - len(rest)
}

func dictString(b []byte, dict []string) (string, []byte, error) {
	i, rest, err := readUint32(b)
	if err != nil {
		return "", b, err
	}
	if int(i) >= len(dict) {
		return "", b, fmt.Errorf("dictionary index %d out of range (%d entries)", i, len(dict))
	}
	return dict[i], rest, nil
}

// readV05Span reads one span: [service, name, resource, trace_id, span_id, parent_id, start,
// duration, error, meta, metrics, type].
func (r *reader) readV05Span(b []byte, dict []string, s *Span) ([]byte, error) {
	n, b, err := arrayHeader(b)
	if err != nil {
		return b, err
	}
	if n != v05SpanFields {
		return b, errors.New("encoded span needs exactly 12 elements in array")
	}
	if b, err = readV05Names(b, dict, s); err != nil {
		return b, err
	}
	if b, err = readV05Numbers(b, s); err != nil {
		return b, err
	}
	if b, err = r.readV05Meta(b, dict, s); err != nil {
		return b, err
	}
	if b, err = r.readV05Metrics(b, dict, s); err != nil {
		return b, err
	}
	if s.Type, b, err = dictString(b, dict); err != nil {
		return b, fmt.Errorf("type: %w", err)
	}
	return b, nil
}

// readV05Names reads the span's service, name and resource.
func readV05Names(b []byte, dict []string, s *Span) ([]byte, error) {
	var err error
	if s.Service, b, err = dictString(b, dict); err != nil {
		return b, fmt.Errorf("service: %w", err)
	}
	if s.Name, b, err = dictString(b, dict); err != nil {
		return b, fmt.Errorf("name: %w", err)
	}
	if s.Resource, b, err = dictString(b, dict); err != nil {
		return b, fmt.Errorf("resource: %w", err)
	}
	return b, nil
}

// readV05Numbers reads the span's ids, times and error flag.
func readV05Numbers(b []byte, s *Span) ([]byte, error) {
	var err error
	if s.TraceID, b, err = readUint64(b); err != nil {
		return b, fmt.Errorf("trace_id: %w", err)
	}
	if s.SpanID, b, err = readUint64(b); err != nil {
		return b, fmt.Errorf("span_id: %w", err)
	}
	if s.ParentID, b, err = readUint64(b); err != nil {
		return b, fmt.Errorf("parent_id: %w", err)
	}
	if s.Start, b, err = readInt64(b); err != nil {
		return b, fmt.Errorf("start: %w", err)
	}
	if s.Duration, b, err = readInt64(b); err != nil {
		return b, fmt.Errorf("duration: %w", err)
	}
	if s.Error, b, err = readInt32(b); err != nil {
		return b, fmt.Errorf("error: %w", err)
	}
	return b, nil
}

// readV05Meta reads the span's meta map, keys and values both dictionary indexes.
func (r *reader) readV05Meta(b []byte, dict []string, s *Span) ([]byte, error) {
	m, b, err := mapHeader(b)
	if err != nil {
		return b, fmt.Errorf("meta: %w", err)
	}
	if m == 0 {
		return b, nil
	}
	if err := r.charge(m, sizeKV); err != nil {
		return b, fmt.Errorf("meta: %w", err)
	}
	s.Meta = r.kvSlice(m)
	for i := range s.Meta {
		if s.Meta[i].Key, b, err = dictString(b, dict); err != nil {
			return b, fmt.Errorf("meta key: %w", err)
		}
		if s.Meta[i].Value, b, err = dictString(b, dict); err != nil {
			return b, fmt.Errorf("meta value: %w", err)
		}
	}
	return b, nil
}

// readV05Metrics reads the span's metrics map: dictionary indexes to floats.
func (r *reader) readV05Metrics(b []byte, dict []string, s *Span) ([]byte, error) {
	m, b, err := mapHeader(b)
	if err != nil {
		return b, fmt.Errorf("metrics: %w", err)
	}
	if m == 0 {
		return b, nil
	}
	if err := r.charge(m, sizeKF); err != nil {
		return b, fmt.Errorf("metrics: %w", err)
	}
	s.Metrics = r.kfSlice(m)
	for i := range s.Metrics {
		if s.Metrics[i].Key, b, err = dictString(b, dict); err != nil {
			return b, fmt.Errorf("metrics key: %w", err)
		}
		if s.Metrics[i].Value, b, err = readFloat64(b); err != nil {
			return b, fmt.Errorf("metrics value: %w", err)
		}
	}
	return b, nil
}
