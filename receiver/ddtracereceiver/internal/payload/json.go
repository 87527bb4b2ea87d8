package payload

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"unsafe"
)

// jsonInt accepts any JSON integer, including negative ones for unsigned ids (as msgpack does) and
// null.
type jsonInt struct {
	v   int64
	u   uint64
	neg bool
}

func (j *jsonInt) UnmarshalJSON(b []byte) error {
	s := string(bytes.TrimSpace(b))
	if s == "null" {
		*j = jsonInt{}
		return nil
	}
	if strings.HasPrefix(s, "-") {
		v, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return fmt.Errorf("invalid integer %s", s)
		}
		*j = jsonInt{v: v, u: uint64(v), neg: true}
		return nil
	}
	u, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		// JSON encoders may write integral floats such as 1.7e18
		f, ferr := strconv.ParseFloat(s, 64)
		if ferr != nil || f != float64(uint64(f)) {
			return fmt.Errorf("invalid integer %s", s)
		}
		u = uint64(f)
	}
	*j = jsonInt{v: int64(u), u: u}
	return nil
}

type jsonSpan struct {
	Service    string             `json:"service"`
	Name       string             `json:"name"`
	Resource   string             `json:"resource"`
	Type       string             `json:"type"`
	TraceID    jsonInt            `json:"trace_id"`
	SpanID     jsonInt            `json:"span_id"`
	ParentID   jsonInt            `json:"parent_id"`
	Start      jsonInt            `json:"start"`
	Duration   jsonInt            `json:"duration"`
	Error      jsonInt            `json:"error"`
	Meta       map[string]string  `json:"meta"`
	Metrics    map[string]float64 `json:"metrics"`
	MetaStruct map[string][]byte  `json:"meta_struct"`
	SpanLinks  []*jsonLink        `json:"span_links"`
}

type jsonLink struct {
	TraceID     jsonInt           `json:"trace_id"`
	TraceIDHigh jsonInt           `json:"trace_id_high"`
	SpanID      jsonInt           `json:"span_id"`
	Attributes  map[string]string `json:"attributes"`
	Tracestate  string            `json:"tracestate"`
	Flags       jsonInt           `json:"flags"`
}

// DecodeTracesJSON decodes a v0.3/v0.4 JSON body, [[span, ...], ...]. Map entries are sorted by
// key, because JSON objects have no order the decoder keeps.
func DecodeTracesJSON(b []byte) (Payload, error) {
	// encoding/json allocates as it decodes, so bound its structures before it starts: each '{'
	// at most a span in both forms, each '[' at most a chunk and its slice.
	if !JSONWithinBudget(b, unsafe.Sizeof(jsonSpan{})+sizeSpan, sizeChunk+unsafe.Sizeof([]*jsonSpan{})) {
		return Payload{}, fmt.Errorf("%w: %d objects and %d arrays in %d bytes", ErrTooManyElements, bytes.Count(b, []byte{'{'}), bytes.Count(b, []byte{'['}), len(b))
	}
	var traces [][]*jsonSpan
	dec := json.NewDecoder(bytes.NewReader(b))
	if err := dec.Decode(&traces); err != nil {
		return Payload{}, err
	}
	if dec.More() {
		return Payload{}, errors.New("unexpected data after the traces array")
	}
	p := Payload{Chunks: make([]Chunk, len(traces))}
	for i, t := range traces {
		p.Chunks[i].Priority = PriorityNone
		p.Chunks[i].Spans = make([]Span, 0, nonNil(t)) // nulls take 5 bytes, not a Span
		for _, js := range t {
			if js == nil {
				p.NilSpans++
				continue
			}
			if js.Error.v > 1<<31-1 || js.Error.v < -1<<31 {
				return Payload{}, fmt.Errorf("error %d overflows int32", js.Error.v)
			}
			s := Span{
				Service: js.Service, Name: js.Name, Resource: js.Resource, Type: js.Type,
				TraceID: js.TraceID.u, SpanID: js.SpanID.u, ParentID: js.ParentID.u,
				Start: js.Start.v, Duration: js.Duration.v, Error: int32(js.Error.v),
				Meta: sortedKVs(js.Meta), Metrics: sortedKFs(js.Metrics), MetaStruct: sortedKBs(js.MetaStruct),
			}
			for _, l := range js.SpanLinks {
				if l == nil {
					continue
				}
				s.Links = append(s.Links, Link{
					TraceID: l.TraceID.u, TraceIDHigh: l.TraceIDHigh.u, SpanID: l.SpanID.u,
					Attributes: sortedKVs(l.Attributes), Tracestate: l.Tracestate, Flags: uint32(l.Flags.u),
				})
			}
			p.Chunks[i].Spans = append(p.Chunks[i].Spans, s)
		}
	}
	return p, nil
}

// sortedKVs, sortedKFs and sortedKBs turn decoded maps into key-sorted slices: map order is
// random, and the translation must be deterministic.
func sortedKVs(m map[string]string) []KV {
	return sortedPairs(m, func(k, v string) KV { return KV{Key: k, Value: v} })
}

func sortedKFs(m map[string]float64) []KF {
	return sortedPairs(m, func(k string, v float64) KF { return KF{Key: k, Value: v} })
}

func sortedKBs(m map[string][]byte) []KB {
	return sortedPairs(m, func(k string, v []byte) KB { return KB{Key: k, Value: v} })
}

func sortedPairs[V, P any](m map[string]V, pair func(string, V) P) []P {
	if len(m) == 0 {
		return nil
	}
	out := make([]P, 0, len(m))
	for _, k := range slices.Sorted(maps.Keys(m)) {
		out = append(out, pair(k, m[k]))
	}
	return out
}

func nonNil[T any](s []*T) int {
	n := 0
	for _, p := range s {
		if p != nil {
			n++
		}
	}
	return n
}

// JSONWithinBudget reports whether decoding the JSON text b with encoding/json stays within
// maxStructBytesPerBodyByte times its size, when each object ('{') costs at most objectBytes and
// each array ('[') arrayBytes: encoding/json allocates as it goes, so the bound is checked first.
// Braces inside strings are counted too, which only errs on the safe side.
func JSONWithinBudget[T string | []byte](b T, objectBytes, arrayBytes uintptr) bool {
	objects, arrays := 0, 0
	for i := 0; i < len(b); i++ {
		switch b[i] {
		case '{':
			objects++
		case '[':
			arrays++
		}
	}
	return objects*int(objectBytes)+arrays*int(arrayBytes) <= maxStructBytesPerBodyByte*len(b)+structBytesSlack
}
