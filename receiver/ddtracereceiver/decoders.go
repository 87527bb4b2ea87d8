// Body decoders per route: the agent picks the format by version and, for v0.3/v0.4, by media type.

package ddtracereceiver

import (
	"bytes"
	"mime"

	"github.com/tracegate/tracegate/receiver/ddtracereceiver/internal/payload"
)

// single adapts a decoder of one payload to the endpoint's signature.
func single(f func([]byte) (payload.Payload, error)) func(string, []byte) ([]payload.Payload, error) {
	return func(_ string, b []byte) ([]payload.Payload, error) {
		p, err := f(b)
		if err != nil {
			return nil, err
		}
		return []payload.Payload{p}, nil
	}
}

// decodeAgentPayload decodes /api/v0.2 (a Datadog Agent's protobuf), whatever the media type.
func decodeAgentPayload(_ string, b []byte) ([]payload.Payload, error) {
	return payload.DecodeAgentPayload(b)
}

// decodeByMediaType decodes v0.3/v0.4 bodies as the agent does: msgpack for application/msgpack;
// JSON for JSON types, no type or an unparsable one; for any other type JSON, then msgpack.
func decodeByMediaType(contentType string, b []byte) ([]payload.Payload, error) {
	ps, _, err := decodeByMediaTypeDropping(contentType, b, nil)
	return ps, err
}

// decodeByMediaTypeDropping is decodeByMediaType that leaves out the msgpack chunks whose
// priority reject refuses, without decoding their spans (payload.DecodeTracesMsgpackDropping);
// JSON bodies are decoded whole. A nil reject leaves out nothing.
func decodeByMediaTypeDropping(contentType string, b []byte, reject func(int64) bool) ([]payload.Payload, payload.Skipped, error) {
	mt, _, perr := mime.ParseMediaType(contentType)
	switch {
	case perr == nil && mt == "application/msgpack":
		return decodeMsgpack(b, reject)
	case contentType == "" || perr != nil || mt == "application/json" || mt == "text/json":
		ps, err := single(payload.DecodeTracesJSON)(contentType, b)
		return ps, payload.Skipped{}, err
	}
	if ps, err := single(payload.DecodeTracesJSON)(contentType, b); err == nil {
		return ps, payload.Skipped{}, nil
	}
	return decodeMsgpack(b, reject)
}

// decodeMsgpack decodes a v0.3/v0.4 msgpack body, leaving out the chunks reject refuses.
func decodeMsgpack(b []byte, reject func(int64) bool) ([]payload.Payload, payload.Skipped, error) {
	if reject == nil {
		ps, err := single(payload.DecodeTracesMsgpack)("", b)
		return ps, payload.Skipped{}, err
	}
	p, skipped, err := payload.DecodeTracesMsgpackDropping(b, reject)
	if err != nil {
		return nil, payload.Skipped{}, err
	}
	return []payload.Payload{p}, skipped, nil
}

// decodeSpansJSON decodes the legacy /v0.1/spans body: a flat array of spans, grouped into chunks by
// trace id in order of appearance.
func decodeSpansJSON(_ string, b []byte) ([]payload.Payload, error) {
	wrapped := make([]byte, 0, len(b)+2)
	wrapped = append(append(append(wrapped, '['), bytes.TrimSpace(b)...), ']')
	p, err := payload.DecodeTracesJSON(wrapped)
	if err != nil {
		return nil, err
	}
	out := payload.Payload{NilSpans: p.NilSpans}
	index := map[uint64]int{}
	for _, c := range p.Chunks {
		for _, s := range c.Spans {
			i, ok := index[s.TraceID]
			if !ok {
				i = len(out.Chunks)
				index[s.TraceID] = i
				out.Chunks = append(out.Chunks, payload.Chunk{Priority: payload.PriorityNone})
			}
			out.Chunks[i].Spans = append(out.Chunks[i].Spans, s)
		}
	}
	return []payload.Payload{out}, nil
}
