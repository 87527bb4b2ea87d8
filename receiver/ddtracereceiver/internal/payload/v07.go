package payload

import (
	"fmt"

	"github.com/tinylib/msgp/msgp"
)

// DecodeV07 decodes a msgpack TracerPayload (the /v0.7/traces body).
func DecodeV07(b []byte) (Payload, error) {
	r := newReader(b)
	p := Payload{arena: r}
	_, err := readMap(b, func(key string, b []byte) (rest []byte, err error) {
		switch key {
		case "container_id":
			p.ContainerID, rest, err = r.readString(b)
		case "language_name":
			p.LanguageName, rest, err = r.readString(b)
		case "language_version":
			p.LanguageVersion, rest, err = r.readString(b)
		case "tracer_version":
			p.TracerVersion, rest, err = r.readString(b)
		case "runtime_id":
			p.RuntimeID, rest, err = r.readString(b)
		case "env":
			p.Env, rest, err = r.readString(b)
		case "hostname":
			p.Hostname, rest, err = r.readString(b)
		case "app_version":
			p.AppVersion, rest, err = r.readString(b)
		case "tags":
			p.Tags, rest, err = r.readKVs(b)
		case "chunks":
			p.Chunks, rest, err = r.readChunks(b)
		default:
			rest, err = msgp.Skip(b)
		}
		return rest, err
	})
	if err != nil {
		return Payload{}, err
	}
	p.NilSpans = r.nilSpans
	return p, nil
}

func (r *reader) readChunks(b []byte) ([]Chunk, []byte, error) {
	n, err := r.chargeArray(b, sizeChunk)
	if err != nil {
		return nil, b, fmt.Errorf("chunks: %w", err)
	}
	chunks := make([]Chunk, 0, n)
	b, err = readArray(b, func(b []byte) ([]byte, error) {
		var c Chunk // an absent priority is 0, as in the agent's protobuf TraceChunk
		b, err := readMap(b, func(key string, b []byte) (rest []byte, err error) {
			switch key {
			case "priority":
				c.Priority, rest, err = readInt32(b)
			case "origin":
				c.Origin, rest, err = r.readString(b)
			case "tags":
				c.Tags, rest, err = r.readKVs(b)
			case "dropped_trace":
				c.DroppedTrace, rest, err = readBool(b)
			case "spans":
				c.Spans, rest, err = r.readSpans(b)
			default:
				rest, err = msgp.Skip(b)
			}
			return rest, err
		})
		chunks = append(chunks, c)
		return b, err
	})
	if err != nil {
		return nil, b, fmt.Errorf("chunks: %w", err)
	}
	return chunks, b, nil
}
