package payload

import (
	"fmt"

	"github.com/tinylib/msgp/msgp"
)

// DecodeV07 decodes a msgpack TracerPayload (the /v0.7/traces body).
func DecodeV07(b []byte) (Payload, error) {
	r := newReader(b)
	var p Payload
	n, b, err := mapHeader(b)
	if err != nil {
		return p, err
	}
	for ; n > 0; n-- {
		var key []byte
		if key, b, err = readKey(b); err != nil {
			return p, err
		}
		switch string(key) {
		case "container_id":
			p.ContainerID, b, err = r.readString(b)
		case "language_name":
			p.LanguageName, b, err = r.readString(b)
		case "language_version":
			p.LanguageVersion, b, err = r.readString(b)
		case "tracer_version":
			p.TracerVersion, b, err = r.readString(b)
		case "runtime_id":
			p.RuntimeID, b, err = r.readString(b)
		case "env":
			p.Env, b, err = r.readString(b)
		case "hostname":
			p.Hostname, b, err = r.readString(b)
		case "app_version":
			p.AppVersion, b, err = r.readString(b)
		case "tags":
			p.Tags, b, err = r.readKVs(b)
		case "chunks":
			p.Chunks, b, err = r.readChunks(b)
		default:
			b, err = msgp.Skip(b)
		}
		if err != nil {
			return Payload{}, fmt.Errorf("%s: %w", key, err)
		}
	}
	return p, nil
}

func (r *reader) readChunks(b []byte) ([]Chunk, []byte, error) {
	n, b, err := arrayHeader(b)
	if err != nil || n == 0 {
		return nil, b, err
	}
	chunks := make([]Chunk, 0, n)
	for ; n > 0; n-- {
		if msgp.IsNil(b) {
			b = b[1:]
			continue
		}
		var c Chunk // an absent priority is 0, as in the agent's protobuf TraceChunk
		var fields int
		if fields, b, err = mapHeader(b); err != nil {
			return nil, b, err
		}
		for ; fields > 0; fields-- {
			var key []byte
			if key, b, err = readKey(b); err != nil {
				return nil, b, err
			}
			switch string(key) {
			case "priority":
				c.Priority, b, err = readInt32(b)
			case "origin":
				c.Origin, b, err = r.readString(b)
			case "tags":
				c.Tags, b, err = r.readKVs(b)
			case "dropped_trace":
				c.DroppedTrace, b, err = readBool(b)
			case "spans":
				c.Spans, b, err = r.readSpans(b)
			default:
				b, err = msgp.Skip(b)
			}
			if err != nil {
				return nil, b, fmt.Errorf("chunk %s: %w", key, err)
			}
		}
		chunks = append(chunks, c)
	}
	return chunks, b, nil
}
