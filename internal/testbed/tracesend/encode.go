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
