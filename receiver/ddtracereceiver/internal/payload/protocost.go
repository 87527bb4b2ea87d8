package payload

import (
	"errors"
	"fmt"
	"unsafe"

	pb "github.com/DataDog/datadog-agent/pkg/proto/pbgo/trace"
	"google.golang.org/protobuf/encoding/protowire"
)

// pbMessage describes, for the pre-scan of an AgentPayload, what decoding one message of a type
// allocates (cost, bytes) and which of its fields hold messages.
type pbMessage struct {
	cost     int
	children map[protowire.Number]*pbMessage
}

// mapEntryCost is one entry of a protobuf map<string, …> as the agent's decoder builds it (a Go
// map slot with its key and value) plus the KV it becomes here.
const mapEntryCost = 96

// agentPayloadSchema is the part of datadog/trace/agent_payload.proto (pkg/proto v0.75.0) that
// holds messages. The schema is not recursive, so the walk's depth is bounded.
var agentPayloadSchema = func() *pbMessage {
	mapEntry := &pbMessage{cost: mapEntryCost}
	arrayValue := &pbMessage{cost: int(unsafe.Sizeof(pb.AttributeArrayValue{}) + sizeAttr)}
	array := &pbMessage{cost: int(unsafe.Sizeof(pb.AttributeArray{})), children: map[protowire.Number]*pbMessage{1: arrayValue}}
	anyValue := &pbMessage{cost: int(unsafe.Sizeof(pb.AttributeAnyValue{})), children: map[protowire.Number]*pbMessage{6: array}}
	eventAttr := &pbMessage{cost: mapEntryCost + int(sizeAttr), children: map[protowire.Number]*pbMessage{2: anyValue}}
	event := &pbMessage{cost: int(unsafe.Sizeof(pb.SpanEvent{}) + sizeEvent), children: map[protowire.Number]*pbMessage{3: eventAttr}}
	link := &pbMessage{cost: int(unsafe.Sizeof(pb.SpanLink{}) + sizeLink), children: map[protowire.Number]*pbMessage{4: mapEntry}}
	span := &pbMessage{cost: int(unsafe.Sizeof(pb.Span{}) + sizeSpan), children: map[protowire.Number]*pbMessage{
		10: mapEntry, 11: mapEntry, 13: mapEntry, 14: link, 15: event,
	}}
	chunk := &pbMessage{cost: int(unsafe.Sizeof(pb.TraceChunk{}) + sizeChunk), children: map[protowire.Number]*pbMessage{3: span, 4: mapEntry}}
	tracer := &pbMessage{cost: int(unsafe.Sizeof(pb.TracerPayload{}) + unsafe.Sizeof(Payload{})), children: map[protowire.Number]*pbMessage{6: chunk, 7: mapEntry}}
	return &pbMessage{children: map[protowire.Number]*pbMessage{5: tracer, 6: mapEntry}}
}()

// errUnsupportedFormat reports a payload in a format tracegate does not translate.
var errUnsupportedFormat = errors.New("unsupported payload format")

// idxTracerPayloads is AgentPayload's field of tracer payloads in the agent's newer indexed
// format, which tracegate does not translate.
const idxTracerPayloads = 11

// checkAgentPayload walks the protobuf wire format of an AgentPayload before the agent's decoder
// runs and refuses what it would decode to more than maxStructBytesPerBodyByte times the body in
// structures: that decoder allocates every message it meets, and an empty message is two bytes
// on the wire. It also refuses indexed-format tracer payloads, which would otherwise be decoded
// and then lost without a word.
func checkAgentPayload(b []byte) error {
	budget := maxStructBytesPerBodyByte*len(b) + structBytesSlack
	return walkCost(b, agentPayloadSchema, &budget, true)
}

func walkCost(b []byte, m *pbMessage, budget *int, top bool) error {
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return protowire.ParseError(n)
		}
		b = b[n:]
		if top && num == idxTracerPayloads {
			return fmt.Errorf("%w: idxTracerPayloads (the indexed v1 format) are not supported; send tracerPayloads", errUnsupportedFormat)
		}
		child := m.children[num]
		if typ != protowire.BytesType || child == nil {
			if n = protowire.ConsumeFieldValue(num, typ, b); n < 0 {
				return protowire.ParseError(n)
			}
			b = b[n:]
			continue
		}
		v, n := protowire.ConsumeBytes(b)
		if n < 0 {
			return protowire.ParseError(n)
		}
		b = b[n:]
		if *budget -= child.cost; *budget < 0 {
			return fmt.Errorf("%w: the payload decodes to more than %d times its size in structures", ErrTooManyElements, maxStructBytesPerBodyByte)
		}
		if err := walkCost(v, child, budget, false); err != nil {
			return err
		}
	}
	return nil
}
