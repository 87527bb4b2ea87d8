package pathbench

import (
	"bytes"
	"context"
	"net"
	"net/http"
	"testing"

	"github.com/tracegate/tracegate/internal/testbed/cpubench"
	"github.com/tracegate/tracegate/internal/testbed/tracemodel"

	"github.com/elastic/opentelemetry-collector-components/processor/elasticapmprocessor"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/connector"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/processor/processortest"
	"go.opentelemetry.io/collector/receiver"
	"go.opentelemetry.io/collector/receiver/receivertest"

	"github.com/tracegate/tracegate/connector/apmmetricsconnector"
	"github.com/tracegate/tracegate/internal/testbed/loadgen"
	"github.com/tracegate/tracegate/processor/elasticmappingprocessor"
	"github.com/tracegate/tracegate/receiver/ddtracereceiver"
)

// BenchmarkAPMPathCPU: process CPU per span of configs/default.yaml's trace path (elasticmapping →
// buffer in memory mode → contrib elasticsearch exporter) against the same path with the Kibana
// APM overlay (elasticmapping with apm_inputs → Elastic's elasticapm processor → the apmmetrics
// connector's traces to traces side, which counts and hands the batch on → buffer → exporter).
// Requests of 10 tracegen spans in two shapes, each decoded from OTLP protobuf: as the
// OpenTelemetry SDK sends them (otlp) and as the ddtrace receiver turns tracegen's v0.4 payload
// into pdata (ddtrace). The two paths alternate in chunks so that both see the same machine; the
// fake Elasticsearch runs in a child process. The receivers' HTTP serving and decoding, the same
// in both paths, are left out, so the ratio is above the one make bench-apm measures through the
// binary.
func BenchmarkAPMPathCPU(b *testing.B) {
	shapes := []struct {
		name string
		reqs func(*testing.B, []tracemodel.Trace) [][]byte
	}{
		{"otlp", otlpRequests},
		{"ddtrace", ddtraceRequests},
	}
	for _, shape := range shapes {
		b.Run(shape.name, func(b *testing.B) {
			url := cpubench.StartFakeES(b)
			plain, apm := defaultTracePath(b, url, true), apmTracePath(b, url)
			plain.reqs = shape.reqs(b, tracegenTraces(64))
			apm.reqs = plain.reqs
			p, a := alternateCPUPerSpan(b, plain, apm)
			b.ReportMetric(p, "cpu-ns/span-default")
			b.ReportMetric(a, "cpu-ns/span-apm")
			b.ReportMetric(a/p, "apm/default")
		})
	}
}

// apmTracePath is configs/elasticsearch/apm.yaml's trace path into the fake Elasticsearch at url:
// the mapping with APM inputs and document ids, Elastic's enrichment, the apmmetrics connector's
// traces side (its metrics to a no-op), the buffer in memory mode, the exporter (counted).
func apmTracePath(b *testing.B, url string) tracePath {
	ctx := context.Background()
	apmBuffer, apmOut := bufferedExporter(b, url, true)
	cf := apmmetricsconnector.NewFactory()
	set := connector.Settings{ID: component.NewID(cf.Type()), TelemetrySettings: componenttest.NewNopTelemetrySettings(), BuildInfo: component.NewDefaultBuildInfo()}
	cfg := cf.CreateDefaultConfig() // one config: the sides of one instance
	counter, err := cf.CreateTracesToTraces(ctx, set, cfg, apmBuffer)
	require.NoError(b, err)
	aggregates, err := cf.CreateMetricsToMetrics(ctx, set, cfg, consumertest.NewNop())
	require.NoError(b, err)
	for _, c := range []component.Component{counter, aggregates} {
		require.NoError(b, c.Start(ctx, componenttest.NewNopHost()))
		b.Cleanup(func() { require.NoError(b, c.Shutdown(ctx)) })
	}
	apmCfg := elasticmappingprocessor.Config{Mode: elasticmappingprocessor.ModeOTel, DocumentIDs: true, APMInputs: true}
	return tracePath{in: mappingTo(b, apmCfg, enrichmentTo(b, counter)), out: apmOut}
}

// ddtraceRequests returns traces as tracegen sends them to the ddtrace receiver (v0.4), turned
// into pdata by it and encoded as OTLP protobuf, one request each.
func ddtraceRequests(b *testing.B, traces []tracemodel.Trace) [][]byte {
	return receivedRequests(b, traces, receiverShape{
		factory:  ddtracereceiver.NewFactory(),
		endpoint: func(cfg component.Config) *string { return &cfg.(*ddtracereceiver.Config).NetAddr.Endpoint },
		protocol: loadgen.DDTraceV04, path: "/v0.4/traces", contentType: "application/msgpack", status: http.StatusOK,
	})
}

// receiverShape is one of our receivers and how tracegen's spans reach it over HTTP.
type receiverShape struct {
	factory           receiver.Factory
	endpoint          func(component.Config) *string // the config's listen address
	protocol          string                         // loadgen's encoding
	path, contentType string
	status            int // the answer to a request it accepted
}

// receivedRequests returns traces as the receiver turns them into pdata, encoded as OTLP protobuf,
// one request each: the receiver's shape of them, for paths that decode OTLP.
func receivedRequests(b *testing.B, traces []tracemodel.Trace, rs receiverShape) [][]byte {
	sink := &consumertest.TracesSink{}
	cfg := rs.factory.CreateDefaultConfig()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(b, err)
	addr := l.Addr().String()
	*rs.endpoint(cfg) = addr
	require.NoError(b, l.Close())
	r, err := rs.factory.CreateTraces(context.Background(), receivertest.NewNopSettings(rs.factory.Type()), cfg, sink)
	require.NoError(b, err)
	require.NoError(b, r.Start(context.Background(), componenttest.NewNopHost()))
	defer func() { require.NoError(b, r.Shutdown(context.Background())) }()

	reqs := make([][]byte, 0, len(traces))
	for _, tr := range traces {
		parts, err := loadgen.Encode(context.Background(), rs.protocol, tr)
		require.NoError(b, err)
		for _, body := range parts {
			resp, err := http.Post("http://"+addr+rs.path, rs.contentType, bytes.NewReader(body))
			require.NoError(b, err)
			require.Equal(b, rs.status, resp.StatusCode)
			require.NoError(b, resp.Body.Close())
		}
		all := sink.AllTraces()
		require.Len(b, all, 1)
		require.Equal(b, 10, all[0].SpanCount())
		p, err := (&ptrace.ProtoMarshaler{}).MarshalTraces(all[0])
		require.NoError(b, err)
		reqs = append(reqs, p)
		sink.Reset()
	}
	return reqs
}

// BenchmarkAPMDocumentsCPU: the part of the APM overlay's cost the documents themselves set:
// process CPU per span of the buffer (memory mode) and the contrib exporter alone, for the same
// tracegen spans as default.yaml's mapping leaves them and as the APM path (mapping with APM
// inputs, Elastic's enrichment) leaves them, each mapped once outside the timer and decoded from
// OTLP protobuf. What Kibana's APM UI reads (transaction.*, span.*, processor.event, ...) is in the
// second; the difference is what exporting it costs, whatever computes it.
func BenchmarkAPMDocumentsCPU(b *testing.B) {
	url := cpubench.StartFakeES(b)
	reqs := otlpRequests(b, tracegenTraces(64))
	plainCfg := elasticmappingprocessor.Config{Mode: elasticmappingprocessor.ModeOTel, DocumentIDs: true}
	apmCfg := elasticmappingprocessor.Config{Mode: elasticmappingprocessor.ModeOTel, DocumentIDs: true, APMInputs: true}
	plainIn, plainOut := bufferedExporter(b, url, true)
	apmIn, apmOut := bufferedExporter(b, url, true)
	plain := tracePath{in: plainIn, out: plainOut, reqs: mappedRequests(b, reqs, func(next consumer.Traces) consumer.Traces {
		return mappingTo(b, plainCfg, next)
	})}
	apm := tracePath{in: apmIn, out: apmOut, reqs: mappedRequests(b, reqs, func(next consumer.Traces) consumer.Traces {
		return mappingTo(b, apmCfg, enrichmentTo(b, next))
	})}
	p, a := alternateCPUPerSpan(b, plain, apm)
	b.ReportMetric(p, "cpu-ns/span-default-docs")
	b.ReportMetric(a, "cpu-ns/span-apm-docs")
	b.ReportMetric(a-p, "cpu-ns/span-added")
}

// enrichmentTo is Elastic's elasticapm processor (default config) in front of next, started and
// shut down with the benchmark.
func enrichmentTo(b *testing.B, next consumer.Traces) consumer.Traces {
	pf := elasticapmprocessor.NewFactory()
	enrich, err := pf.CreateTraces(context.Background(), processortest.NewNopSettings(pf.Type()), pf.CreateDefaultConfig(), next)
	require.NoError(b, err)
	require.NoError(b, enrich.Start(context.Background(), componenttest.NewNopHost()))
	b.Cleanup(func() { require.NoError(b, enrich.Shutdown(context.Background())) })
	return enrich
}

// mappedRequests sends each request through the consumer chain made in front of a sink and
// returns what came out, encoded as OTLP protobuf again.
func mappedRequests(b *testing.B, reqs [][]byte, chain func(next consumer.Traces) consumer.Traces) [][]byte {
	if chain == nil {
		return reqs
	}
	sink := &consumertest.TracesSink{}
	first := chain(sink)
	out := make([][]byte, 0, len(reqs))
	for _, req := range reqs {
		td, err := (&ptrace.ProtoUnmarshaler{}).UnmarshalTraces(req)
		require.NoError(b, err)
		require.NoError(b, first.ConsumeTraces(b.Context(), td))
		all := sink.AllTraces()
		require.Len(b, all, 1)
		p, err := (&ptrace.ProtoMarshaler{}).MarshalTraces(all[0])
		require.NoError(b, err)
		out = append(out, p)
		sink.Reset()
	}
	return out
}
