package bufferprocessor

import (
	"context"
	"testing"

	"github.com/elastic/opentelemetry-collector-components/processor/elasticapmprocessor"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/connector"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/processor/processortest"

	"github.com/tracegate/tracegate/connector/apmmetricsconnector"
	"github.com/tracegate/tracegate/processor/elasticmappingprocessor"
)

// BenchmarkAPMPathCPU: process CPU per span of configs/default.yaml's trace path (elasticmapping →
// buffer in memory mode → contrib elasticsearch exporter) against the same path with the Kibana
// APM overlay (elasticmapping with apm_inputs → Elastic's elasticapm processor → the apmmetrics
// connector's traces to traces side, which counts and hands the batch on → buffer → exporter). Requests of 10 tracegen spans,
// each decoded from OTLP as the receiver does; the two paths alternate in chunks so that both
// see the same machine; the fake Elasticsearch runs in a child process. The receivers' HTTP and
// gRPC serving, the same in both, are left out, so the ratio is above the one make bench-apm
// measures through the binary.
func BenchmarkAPMPathCPU(b *testing.B) {
	url := startFakeES(b)
	ctx := context.Background()
	plain := defaultTracePath(b, url, true)

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
		defer func() { require.NoError(b, c.Shutdown(ctx)) }()
	}
	pf := elasticapmprocessor.NewFactory()
	enrich, err := pf.CreateTraces(ctx, processortest.NewNopSettings(pf.Type()), pf.CreateDefaultConfig(), counter)
	require.NoError(b, err)
	require.NoError(b, enrich.Start(ctx, componenttest.NewNopHost()))
	defer func() { require.NoError(b, enrich.Shutdown(ctx)) }()
	apmCfg := elasticmappingprocessor.Config{Mode: elasticmappingprocessor.ModeOTel, DocumentIDs: true, APMInputs: true}
	apm := tracePath{in: mappingTo(b, apmCfg, enrich), out: apmOut}

	plain.reqs = otlpRequests(b, tracegenTraces(64))
	apm.reqs = plain.reqs
	p, a := alternateCPUPerSpan(b, plain, apm)
	b.ReportMetric(p, "cpu-ns/span-default")
	b.ReportMetric(a, "cpu-ns/span-apm")
	b.ReportMetric(a/p, "apm/default")
}
