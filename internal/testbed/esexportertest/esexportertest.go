// Package esexportertest builds the contrib elasticsearch exporter (v0.148.0) for in-process tests
// against the Elasticsearch stand-in, from the same user-facing settings a config file would hold.
package esexportertest

import (
	"context"
	"maps"
	"testing"

	"github.com/open-telemetry/opentelemetry-collector-contrib/exporter/elasticsearchexporter"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/exporter"
	"go.uber.org/zap"

	"github.com/tracegate/tracegate/internal/testbed/esstandin"
)

// StartStandin runs a stand-in that keeps documents, closed when the test ends.
func StartStandin(tb testing.TB, opts esstandin.Options) *esstandin.Server {
	tb.Helper()
	opts.KeepDocuments = true
	es, err := esstandin.New(opts)
	require.NoError(tb, err)
	require.NoError(tb, es.Start("127.0.0.1:0"))
	tb.Cleanup(func() { require.NoError(tb, es.Close()) })
	return es
}

// NewExporter starts the exporter with endpoints [url] and the given settings (fast transport
// retries unless settings say otherwise); it is shut down when the test ends.
func NewExporter(tb testing.TB, url string, settings map[string]any) exporter.Traces {
	tb.Helper()
	return NewExporterWithLogger(tb, url, settings, zap.NewNop())
}

// NewExporterWithLogger is NewExporter with the exporter logging to logger (a test can count
// what the exporter reports, e.g. the documents it drops).
func NewExporterWithLogger(tb testing.TB, url string, settings map[string]any, logger *zap.Logger) exporter.Traces {
	tb.Helper()
	return startExporter(tb, url, settings, logger, exporter.Factory.CreateTraces)
}

// NewLogsExporter is NewExporterWithLogger for logs.
func NewLogsExporter(tb testing.TB, url string, settings map[string]any, logger *zap.Logger) exporter.Logs {
	tb.Helper()
	return startExporter(tb, url, settings, logger, exporter.Factory.CreateLogs)
}

// NewMetricsExporter is NewExporterWithLogger for metrics.
func NewMetricsExporter(tb testing.TB, url string, settings map[string]any, logger *zap.Logger) exporter.Metrics {
	tb.Helper()
	return startExporter(tb, url, settings, logger, exporter.Factory.CreateMetrics)
}

// startExporter creates the exporter of one signal with create, starts it and shuts it down when
// the test ends.
func startExporter[E component.Component](tb testing.TB, url string, settings map[string]any, logger *zap.Logger,
	create func(exporter.Factory, context.Context, exporter.Settings, component.Config) (E, error),
) E {
	tb.Helper()
	f, set, cfg := exporterConfig(tb, url, settings, logger)
	exp, err := create(f, context.Background(), set, cfg)
	require.NoError(tb, err)
	require.NoError(tb, exp.Start(context.Background(), componenttest.NewNopHost()))
	tb.Cleanup(func() { require.NoError(tb, exp.Shutdown(context.Background())) })
	return exp
}

func exporterConfig(tb testing.TB, url string, settings map[string]any, logger *zap.Logger) (exporter.Factory, exporter.Settings, component.Config) {
	tb.Helper()
	f := elasticsearchexporter.NewFactory()
	cfg := f.CreateDefaultConfig()
	conf := map[string]any{
		"endpoints": []string{url},
		// Fast transport retries keep tests short; they do not change where errors go.
		"retry": map[string]any{"initial_interval": "10ms", "max_interval": "50ms"},
	}
	maps.Copy(conf, settings)
	require.NoError(tb, confmap.NewFromStringMap(conf).Unmarshal(cfg))
	ts := componenttest.NewNopTelemetrySettings()
	ts.Logger = logger
	set := exporter.Settings{
		ID:                component.NewID(f.Type()),
		TelemetrySettings: ts,
		BuildInfo:         component.NewDefaultBuildInfo(),
	}
	return f, set, cfg
}
