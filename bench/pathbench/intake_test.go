package pathbench

import (
	"context"
	"math/rand/v2"
	"net/http"
	"testing"
	"time"

	"github.com/tracegate/tracegate/internal/testbed/cpubench"
	"github.com/tracegate/tracegate/internal/testbed/tracemodel"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/processor/processortest"

	"github.com/tracegate/tracegate/internal/testbed/loadgen"
	"github.com/tracegate/tracegate/processor/elasticmappingprocessor"
	"github.com/tracegate/tracegate/receiver/elasticapmreceiver"
)

// BenchmarkIntakeShapeCPU: process CPU per span of configs/default.yaml's trace path
// (elasticmapping → buffer in memory mode → contrib exporter) for the same tracegen spans in two
// shapes, each decoded from an OTLP protobuf request: as an OpenTelemetry SDK sends them, and as
// the elasticapm receiver turns their intake v2 form into pdata (EDOT's mapping). The second is
// what the intake's spans would cost if decoding intake JSON were as cheap as decoding OTLP
// protobuf: the bound on how close to OTLP/HTTP's rate any intake decoder can bring it.
func BenchmarkIntakeShapeCPU(b *testing.B) {
	url := cpubench.StartFakeES(b)
	otlp, intake := defaultTracePath(b, url, true), defaultTracePath(b, url, true)
	otlp.reqs, intake.reqs = shapedRequests(b, 64)
	o, i := alternateCPUPerSpan(b, otlp, intake)
	b.ReportMetric(o, "cpu-ns/span-otlp")
	b.ReportMetric(i, "cpu-ns/span-intake-shaped")
	b.ReportMetric(o/i, "rate-intake/otlp")
}

// tracePath is a trace pipeline behind the receiver: its first consumer, its counted last one,
// and the OTLP requests of 10 spans a benchmark sends through it.
type tracePath struct {
	in   consumer.Traces
	out  *cpubench.TracesCounter
	reqs [][]byte
}

// alternateCPUPerSpan sends b.N requests through each of two paths, in alternating chunks after a
// warm-up so that both see the same machine, and returns each one's CPU per span.
func alternateCPUPerSpan(b *testing.B, first, second tracePath) (firstNs, secondNs float64) {
	const chunk = 512
	first.send(b, 256)
	second.send(b, 256)
	var firstCPU, secondCPU time.Duration
	var spans int64
	b.ResetTimer()
	for done := 0; done < b.N; done += chunk {
		n := min(chunk, b.N-done)
		firstCPU += first.send(b, n)
		secondCPU += second.send(b, n)
		spans += int64(n * 10)
	}
	b.StopTimer()
	return float64(firstCPU.Nanoseconds()) / float64(spans), float64(secondCPU.Nanoseconds()) / float64(spans)
}

// send decodes n of the path's requests (OTLP protobuf) and hands them to its first consumer from
// cpubench.Producers goroutines, as the OTLP receiver would; it returns the process CPU they took
// until the last consumer counted every span.
func (p tracePath) send(b *testing.B, n int) time.Duration {
	want := p.out.Count() + int64(n*10)
	c0 := cpubench.ProcessCPU(b)
	produceItems(b, func(ctx context.Context, req []byte) error {
		td, err := (&ptrace.ProtoUnmarshaler{}).UnmarshalTraces(req)
		if err != nil {
			return err
		}
		return p.in.ConsumeTraces(ctx, td)
	}, p.reqs, n)
	p.out.Wait(want)
	return cpubench.ProcessCPU(b) - c0
}

// defaultTracePath is configs/default.yaml's trace path into the fake Elasticsearch at url: the
// mapping with document ids (or, with ids false, without), the buffer in memory mode, the
// exporter (counted). Its requests are the caller's to set.
func defaultTracePath(b *testing.B, url string, ids bool) tracePath {
	buffer, out := bufferedExporter(b, url, ids)
	return tracePath{in: mappingTo(b, elasticmappingprocessor.Config{Mode: elasticmappingprocessor.ModeOTel, DocumentIDs: ids}, buffer), out: out}
}

// mappingTo is an elasticmapping processor with cfg in front of next.
func mappingTo(b *testing.B, cfg elasticmappingprocessor.Config, next consumer.Traces) consumer.Traces {
	f := elasticmappingprocessor.NewFactory()
	p, err := f.CreateTraces(b.Context(), processortest.NewNopSettings(f.Type()), &cfg, next)
	require.NoError(b, err)
	return p
}

// tracegenTraces returns n traces of 10 spans as tracegen makes them for make bench, always the
// same ones.
func tracegenTraces(n int) []tracemodel.Trace {
	rng := rand.New(rand.NewPCG(1, 2))
	traces := make([]tracemodel.Trace, n)
	for i := range traces {
		traces[i] = tracemodel.NewTrace(rng, []string{"checkout", "cart", "inventory"}[i%3], 10, time.Now())
	}
	return traces
}

// otlpRequests returns traces as OTLP protobuf requests, one each.
func otlpRequests(b *testing.B, traces []tracemodel.Trace) [][]byte {
	var reqs [][]byte
	for _, tr := range traces {
		p, err := (&ptrace.ProtoMarshaler{}).MarshalTraces(tracemodel.OTLPTraces(tr))
		require.NoError(b, err)
		reqs = append(reqs, p)
	}
	return reqs
}

// shapedRequests returns n requests of 10 tracegen spans as OTLP protobuf, and the same traces
// sent to an elasticapm receiver as intake v2 and re-encoded as OTLP protobuf.
func shapedRequests(b *testing.B, n int) (otlp, intake [][]byte) {
	traces := tracegenTraces(n)
	return otlpRequests(b, traces), receivedRequests(b, traces, receiverShape{
		factory:  elasticapmreceiver.NewFactory(),
		endpoint: func(cfg component.Config) *string { return &cfg.(*elasticapmreceiver.Config).NetAddr.Endpoint },
		protocol: loadgen.ElasticAPMIntake, path: "/intake/v2/events", contentType: "application/x-ndjson", status: http.StatusAccepted,
	})
}
