package payload

import (
	"cmp"
	"encoding/json"
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
	f.Add([]byte(`[[{"trace_id":1,"span_id":2,"meta":{"a":"\ud800"},"error":1}],[null]]`))
	f.Fuzz(func(t *testing.T, b []byte) {
		ours, err := DecodeTracesJSON(b)
		if err != nil {
			return
		}
		// The agent decodes v0.3 JSON with encoding/json into its own types.
		var agent pb.Traces
		if aerr := json.Unmarshal(b, &agent); aerr == nil {
			require.Equal(t, normalize(FromTraces(agent)), normalize(ours))
		}
	})
}

// FuzzDecodeAgentPayload: /api/v0.2 bodies (protobuf). The pre-scan (checkAgentPayload) must
// never let through what the agent's decoder then refuses, and an accepted body must keep every
// tracer payload, chunk and span the agent's decoder found (nil spans counted), with the
// payload-level env and hostname filling in for tracer payloads that have none.
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
		// Every tracer payload, chunk and span the agent decoded is there, nil ones counted, and
		// the payload-level env and hostname fill in for tracer payloads without their own.
		var want []Payload
		for _, tp := range ap.TracerPayloads {
			if tp == nil {
				continue
			}
			p := Payload{Env: cmp.Or(tp.Env, ap.Env), Hostname: cmp.Or(tp.Hostname, ap.HostName)}
			for _, c := range tp.Chunks {
				if c == nil {
					continue
				}
				var spans []Span
				for _, s := range c.Spans {
					if s == nil {
						p.NilSpans++
						continue
					}
					spans = append(spans, Span{TraceID: s.TraceID, SpanID: s.SpanID})
				}
				p.Chunks = append(p.Chunks, Chunk{Spans: spans})
			}
			want = append(want, p)
		}
		require.Len(t, ours, len(want))
		for i := range want {
			got := Payload{Env: ours[i].Env, Hostname: ours[i].Hostname, NilSpans: ours[i].NilSpans}
			for _, c := range ours[i].Chunks {
				var spans []Span
				for _, s := range c.Spans {
					spans = append(spans, Span{TraceID: s.TraceID, SpanID: s.SpanID})
				}
				got.Chunks = append(got.Chunks, Chunk{Spans: spans})
			}
			require.Equal(t, want[i], got, "tracer payload %d", i)
		}
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
