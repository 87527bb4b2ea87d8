package tracesend

import (
	"context"
	"fmt"

	"github.com/apache/thrift/lib/go/thrift"
	"github.com/jaegertracing/jaeger-idl/thrift-gen/agent"
	"github.com/jaegertracing/jaeger-idl/thrift-gen/jaeger"
)

// The exported encoders below let the load generator (bench/tracegen) pre-encode payloads with the
// same wire code the senders use.

// DDSpan is one Datadog span as a tracer sends it (for EncodeDDTraceV04 and EncodeDDTraceV05).
type DDSpan struct {
	Service, Name, Resource   string
	TraceID, SpanID, ParentID uint64
	Start, Duration           int64 // Unix nanoseconds, nanoseconds
	Error                     int32
	// Type is the span type an integration sets (web, http, sql, …); empty for a custom span.
	Type    string
	Meta    map[string]string
	Metrics map[string]float64
}

func ddChunks(chunks [][]DDSpan) [][]ddSpan {
	out := make([][]ddSpan, len(chunks))
	for i, c := range chunks {
		out[i] = make([]ddSpan, len(c))
		for j, s := range c {
			out[i][j] = ddSpan{
				service: s.Service, name: s.Name, resource: s.Resource, traceID: s.TraceID, spanID: s.SpanID,
				parentID: s.ParentID, start: s.Start, duration: s.Duration, isError: s.Error, spanType: s.Type, meta: s.Meta, metrics: s.Metrics,
			}
			if out[i][j].meta == nil {
				out[i][j].meta = map[string]string{}
			}
			if out[i][j].metrics == nil {
				out[i][j].metrics = map[string]float64{}
			}
		}
	}
	return out
}

// EncodeDDTraceV04 returns the /v0.4/traces msgpack body for the chunks (one chunk per trace).
// Integers are written in their shortest msgpack form, so an id >= 2^32 always takes 9 bytes.
func EncodeDDTraceV04(chunks [][]DDSpan) []byte { return encodeV04(ddChunks(chunks)) }

// EncodeDDTraceV05 returns the /v0.5/traces body (string dictionary + span arrays) for the chunks.
func EncodeDDTraceV05(chunks [][]DDSpan) []byte { return encodeV05(ddChunks(chunks)) }

// EncodeJaegerEmitBatch returns one Jaeger agent emitBatch message in the Thrift compact protocol:
// the payload of one UDP packet to port 6831.
func EncodeJaegerEmitBatch(ctx context.Context, batch *jaeger.Batch) ([]byte, error) {
	buf := thrift.NewTMemoryBufferLen(65000)
	proto := thrift.NewTCompactProtocolConf(buf, &thrift.TConfiguration{})
	client := agent.NewAgentClientProtocol(buf, proto, proto)
	if err := client.EmitBatch(ctx, batch); err != nil {
		return nil, fmt.Errorf("encode emitBatch: %w", err)
	}
	return buf.Bytes(), nil
}

// EncodeJaegerBinary returns the Thrift binary-protocol batch that /api/traces accepts.
func EncodeJaegerBinary(ctx context.Context, batch *jaeger.Batch) ([]byte, error) {
	return thrift.NewTSerializer().Write(ctx, batch)
}
