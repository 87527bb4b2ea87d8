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
