package pathbench

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/exporter/exportertest"
	"go.opentelemetry.io/collector/processor/processortest"

	"github.com/tracegate/tracegate/exporter/elasticsearchdocumentsexporter"
	"github.com/tracegate/tracegate/internal/testbed/cpubench"
	"github.com/tracegate/tracegate/processor/bufferprocessor"
	"github.com/tracegate/tracegate/processor/elasticmappingprocessor"
)

// BenchmarkSpanDocumentsCPU: process CPU per span of configs/default.yaml's trace path
// (elasticmapping with ids → buffer in memory mode → exporter) with the contrib elasticsearch
// exporter against the elasticsearch_documents exporter writing the same documents, tracegen's
// 10-span requests, alternated.
func BenchmarkSpanDocumentsCPU(b *testing.B) {
	url := cpubench.StartFakeES(b)
	reqs := otlpRequests(b, tracegenTraces(64))
	contrib := defaultTracePath(b, url, true)
	buffer, out := bufferedTo(b, documentsExporter(b, url))
	ours := tracePath{in: mappingTo(b, elasticmappingprocessor.Config{Mode: elasticmappingprocessor.ModeOTel, DocumentIDs: true}, buffer), out: out}
	contrib.reqs, ours.reqs = reqs, reqs
	c, o := alternateCPUPerSpan(b, contrib, ours)
	b.ReportMetric(c, "cpu-ns/span-contrib")
	b.ReportMetric(o, "cpu-ns/span-documents")
	b.ReportMetric(c/o, "rate-documents/contrib")
}

// documentsExporter is the elasticsearch_documents exporter into the fake Elasticsearch at url,
// shut down with the benchmark.
func documentsExporter(b *testing.B, url string) consumer.Traces {
	f := elasticsearchdocumentsexporter.NewFactory()
	cfg := f.CreateDefaultConfig().(*elasticsearchdocumentsexporter.Config)
	cfg.Endpoints = []string{url}
	exp, err := f.CreateTraces(b.Context(), exportertest.NewNopSettings(f.Type()), cfg)
	require.NoError(b, err)
	require.NoError(b, exp.Start(context.Background(), componenttest.NewNopHost()))
	b.Cleanup(func() { require.NoError(b, exp.Shutdown(context.Background())) })
	return exp
}

// bufferedTo is the buffer in memory mode in front of exp (counted), as bufferedExporter.
func bufferedTo(b *testing.B, exp consumer.Traces) (consumer.Traces, *cpubench.TracesCounter) {
	counted := cpubench.NewTracesCounter(exp)
	f := bufferprocessor.NewFactory()
	cfg := f.CreateDefaultConfig().(*bufferprocessor.Config)
	cfg.Threads, cfg.QueueSize, cfg.MaxBatchItems = cpubench.Producers, 10_000, 2048
	p, err := f.CreateTraces(b.Context(), processortest.NewNopSettings(f.Type()), cfg, counted)
	require.NoError(b, err)
	require.NoError(b, p.Start(context.Background(), componenttest.NewNopHost()))
	b.Cleanup(func() { require.NoError(b, p.Shutdown(context.Background())) })
	return p, counted
}
