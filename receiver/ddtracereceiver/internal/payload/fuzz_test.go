package payload

import (
	"testing"

	pb "github.com/DataDog/datadog-agent/pkg/proto/pbgo/trace"
	"github.com/stretchr/testify/require"
)

// The fuzz tests feed arbitrary bytes to every decoder: no panic, and where the Datadog Agent's own
// decoder also accepts the input, both must find the same spans. The agent's decoder runs only on
// inputs ours accepted, because it allocates whatever a header claims (up to 25e6 elements).

func seedsV04(f *testing.F) {
	f.Add(minimalSpan(newEnc().arr(1).arr(1)).bytes())
	f.Add(newEnc().arr(2).arr(0).arr(0).bytes()) // Java's probe: PUT [[],[]]
	f.Add(newEnc().arr(1).arr(2).mapN(1).str("trace_id").i(-1).nil().bytes())
	f.Add(newEnc().arr(1).arr(1).mapN(2).str("meta").mapN(1).bin([]byte{0xff}).bin([]byte{0xfe}).str("metrics").mapN(1).str("m").u(3).bytes())
	f.Add([]byte{0xdd, 0xff, 0xff, 0xff, 0xff})
}

func FuzzDecodeV04(f *testing.F) {
	seedsV04(f)
	f.Fuzz(func(t *testing.T, b []byte) {
		ours, err := DecodeTracesMsgpack(b)
		if err != nil {
			return
		}
		var agent pb.Traces
		if _, aerr := agent.UnmarshalMsg(b); aerr == nil {
			require.Equal(t, normalize(FromTraces(agent)), normalize(ours))
		}
	})
}

func FuzzDecodeV05(f *testing.F) {
	f.Add(newEnc().arr(2).arr(6).str("").str("svc").str("op").str("res").str("env").str("prod").
		arr(1).arr(1).arr(12).u(1).u(2).u(3).u(10).u(11).u(0).i(100).i(50).i(0).mapN(1).u(4).u(5).mapN(0).u(0).bytes())
	f.Add(newEnc().arr(2).arr(0).arr(0).bytes())
	f.Fuzz(func(t *testing.T, b []byte) {
		ours, err := DecodeV05(b)
		if err != nil {
			return
		}
		var agent pb.Traces
		if aerr := agent.UnmarshalMsgDictionary(b); aerr == nil {
			require.Equal(t, normalize(FromTraces(agent)), normalize(ours))
		}
	})
}

func FuzzDecodeV07(f *testing.F) {
	f.Add(minimalSpan(newEnc().mapN(2).kv("container_id", "c").str("chunks").arr(1).mapN(2).str("priority").i(1).str("spans").arr(1)).bytes())
	f.Add(newEnc().mapN(0).bytes())
	f.Fuzz(func(t *testing.T, b []byte) {
		ours, err := DecodeV07(b)
		if err != nil {
			return
		}
		var agent pb.TracerPayload
		if _, aerr := agent.UnmarshalMsg(b); aerr == nil {
			require.Equal(t, normalize(FromTracerPayload(&agent)), normalize(ours))
		}
	})
}

func FuzzDecodeJSON(f *testing.F) {
	f.Add([]byte(`[[{"service":"svc","name":"n","trace_id":1,"span_id":2,"meta":{"a":"b"},"metrics":{"m":1}}]]`))
	f.Add([]byte(`[[{"trace_id":-1,"span_links":[{"trace_id":1,"span_id":2}]}],null,[]]`))
	f.Add([]byte(`[[[[[[[[[[[[[[[[[[[[`))
	f.Fuzz(func(t *testing.T, b []byte) {
		p, err := DecodeTracesJSON(b)
		if err == nil && p.SpanCount() < 0 {
			t.Fatal("negative span count")
		}
	})
}

// FuzzDecodeAgentPayload: /api/v0.2 bodies (protobuf). The pre-scan (checkAgentPayload) must
// never let through what the agent's decoder then fails on differently than by an error, and an
// accepted body must convert to the same spans as the agent's decoding alone.
func FuzzDecodeAgentPayload(f *testing.F) {
	f.Add(emptySpansAgentPayload(3))
	f.Add(agentPayloadWithSpan())
	f.Add([]byte{0x2a, 0xff, 0xff, 0xff, 0xff, 0x07})
	f.Fuzz(func(t *testing.T, b []byte) {
		ours, err := DecodeAgentPayload(b)
		if err != nil {
			return
		}
		var ap pb.AgentPayload
		require.NoError(t, ap.UnmarshalVT(b), "the pre-scan passed what the decoder refuses")
		n := 0
		for _, tp := range ap.TracerPayloads {
			if tp != nil {
				n++
			}
		}
		require.Len(t, ours, n)
	})
}

// agentPayloadWithSpan is an AgentPayload with one span carrying meta, metrics, a link and an event.
func agentPayloadWithSpan() []byte {
	ap := &pb.AgentPayload{HostName: "h", Env: "e", TracerPayloads: []*pb.TracerPayload{{
		LanguageName: "go", Chunks: []*pb.TraceChunk{{Priority: 1, Spans: []*pb.Span{{
			Service: "svc", Name: "op", TraceID: 1, SpanID: 2, Meta: map[string]string{"k": "v"}, Metrics: map[string]float64{"m": 1},
			SpanLinks:  []*pb.SpanLink{{TraceID: 3, SpanID: 4, Attributes: map[string]string{"a": "b"}}},
			SpanEvents: []*pb.SpanEvent{{Name: "ev", Attributes: map[string]*pb.AttributeAnyValue{"x": {Type: pb.AttributeAnyValue_ARRAY_VALUE, ArrayValue: &pb.AttributeArray{Values: []*pb.AttributeArrayValue{{StringValue: "s"}}}}}}},
		}}}},
	}}}
	b, err := ap.MarshalVT()
	if err != nil {
		panic(err)
	}
	return b
}
