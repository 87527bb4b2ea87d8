package apmmetricsconnector

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/confmap/provider/fileprovider"
	"go.opentelemetry.io/collector/connector"
	"go.opentelemetry.io/collector/connector/forwardconnector"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/exporter"
	"go.opentelemetry.io/collector/exporter/exportertest"
	"go.opentelemetry.io/collector/otelcol"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/processor"
	"go.opentelemetry.io/collector/receiver"
	"go.opentelemetry.io/collector/service/telemetry/otelconftelemetry"

	"github.com/tracegate/tracegate/connector/apmmetricsconnector/internal/metadata"
)

// The pipelines of configs/elasticsearch/apm.yaml, with a test source for the receivers and a
// keeping processor for the buffer, run by the collector's own service: it must start, hand the
// batch the receiver gave to the buffer's place uncopied, and deliver the aggregated metrics to the
// metrics pipeline by the end of the shutdown. With a read-only connector and core's forward
// beside it (the layout of the overlay before this connector forwarded), the batch is copied for
// the buffer: the check tells the two apart. (EDOT's connector changes its input: beside forward
// it is the one given the copy.)
const graphConfig = `
receivers:
  source: {}
processors:
  keep: {}
exporters:
  nop: {}
connectors:
  apmmetrics: {}
  readonly: {}
  forward: {}
service:
  telemetry:
    metrics: {level: none}
    logs: {level: error}
  pipelines:
    traces:      {receivers: [source], exporters: %s}
    traces/out:  {receivers: %s, processors: [keep], exporters: [nop]}
    metrics:     {receivers: [source], exporters: %s}
    metrics/out: {receivers: %s, processors: [keep], exporters: [nop]}
`

func TestPipelineGraphHandsTheBatchOnUncopied(t *testing.T) {
	for _, tt := range []struct {
		name                   string
		tracesTo, tracesFrom   string
		metricsTo, metricsFrom string
		uncopied               bool
	}{
		{"apmmetrics", "[apmmetrics]", "[apmmetrics]", "[apmmetrics]", "[apmmetrics]", true},
		{"a read-only connector and forward", "[readonly, forward]", "[forward]", "[apmmetrics]", "[apmmetrics, readonly]", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			h := runGraph(t, tt.tracesTo, tt.tracesFrom, tt.metricsTo, tt.metricsFrom)
			td := ptrace.NewTraces()
			span(t, td, "checkout", transactionAttrs, nil)
			require.NoError(t, h.src.traces.ConsumeTraces(t.Context(), td))
			kept := h.keep.tracesKept()
			require.Len(t, kept, 1)
			assert.Equal(t, tt.uncopied, kept[0] == td, "the buffer's place got the receiver's batch itself")
			h.stop(t)
			if tt.uncopied {
				assert.Equal(t, int64(1), summaryCount(h.keep.metricsKept(), "checkout", "1m"), "the span, counted")
			}
		})
	}
}

type graphHarness struct {
	src  *source
	keep *keeper
	stop func(*testing.T)
}

// runGraph starts a collector on graphConfig with the given exporters and receivers.
func runGraph(t *testing.T, tracesTo, tracesFrom, metricsTo, metricsFrom string) graphHarness {
	t.Helper()
	path := filepath.Join(t.TempDir(), "config.yaml")
	cfg := []byte(fmt.Sprintf(graphConfig, tracesTo, tracesFrom, metricsTo, metricsFrom))
	require.NoError(t, os.WriteFile(path, cfg, 0o600))
	src, keep := &source{}, &keeper{}
	col, err := otelcol.NewCollector(otelcol.CollectorSettings{
		BuildInfo: component.NewDefaultBuildInfo(),
		Factories: func() (otelcol.Factories, error) {
			return otelcol.Factories{
				Receivers:  map[component.Type]receiver.Factory{sourceType: src.factory()},
				Processors: map[component.Type]processor.Factory{keepType: keep.factory()},
				Exporters:  map[component.Type]exporter.Factory{exportertest.NopType: exportertest.NewNopFactory()},
				Telemetry:  otelconftelemetry.NewFactory(),
				Connectors: map[component.Type]connector.Factory{
					metadata.Type:                        NewFactory(),
					readOnlyType:                         readOnlyFactory(),
					forwardconnector.NewFactory().Type(): forwardconnector.NewFactory(),
				},
			}, nil
		},
		ConfigProviderSettings: otelcol.ConfigProviderSettings{ResolverSettings: confmap.ResolverSettings{
			URIs: []string{path}, ProviderFactories: []confmap.ProviderFactory{fileprovider.NewFactory()},
		}},
	})
	require.NoError(t, err)
	done := make(chan error, 1)
	go func() { done <- col.Run(context.Background()) }()
	for col.GetState() != otelcol.StateRunning {
		select {
		case err := <-done:
			t.Fatalf("the collector stopped: %v", err)
		case <-time.After(10 * time.Millisecond):
		}
	}
	return graphHarness{src: src, keep: keep, stop: func(t *testing.T) {
		col.Shutdown()
		require.NoError(t, <-done)
	}}
}

var (
	sourceType   = component.MustNewType("source")
	keepType     = component.MustNewType("keep")
	readOnlyType = component.MustNewType("readonly")
)

// readOnlyFactory makes a traces to metrics connector that reads nothing and says so.
func readOnlyFactory() connector.Factory {
	return connector.NewFactory(readOnlyType, func() component.Config { return &struct{}{} },
		connector.WithTracesToMetrics(func(context.Context, connector.Settings, component.Config, consumer.Metrics) (connector.Traces, error) {
			c, err := consumer.NewTraces(func(context.Context, ptrace.Traces) error { return nil })
			return keptTraces{Traces: c}, err
		}, component.StabilityLevelDevelopment))
}

// source is a receiver whose next consumers the test calls.
type source struct {
	traces  consumer.Traces
	metrics consumer.Metrics
}

func (s *source) factory() receiver.Factory {
	return receiver.NewFactory(sourceType, func() component.Config { return &struct{}{} },
		receiver.WithTraces(func(_ context.Context, _ receiver.Settings, _ component.Config, next consumer.Traces) (receiver.Traces, error) {
			s.traces = next
			return nopComponent{}, nil
		}, component.StabilityLevelDevelopment),
		receiver.WithMetrics(func(_ context.Context, _ receiver.Settings, _ component.Config, next consumer.Metrics) (receiver.Metrics, error) {
			s.metrics = next
			return nopComponent{}, nil
		}, component.StabilityLevelDevelopment))
}

type nopComponent struct {
	component.StartFunc
	component.ShutdownFunc
}

// keeper stands for the buffer: it keeps what it is given (so it mutates, as the buffer says).
type keeper struct {
	mu      sync.Mutex
	traces  []ptrace.Traces
	metrics []pmetric.Metrics
}

func (k *keeper) tracesKept() []ptrace.Traces {
	k.mu.Lock()
	defer k.mu.Unlock()
	return append([]ptrace.Traces(nil), k.traces...)
}

func (k *keeper) metricsKept() []pmetric.Metrics {
	k.mu.Lock()
	defer k.mu.Unlock()
	return append([]pmetric.Metrics(nil), k.metrics...)
}

func (k *keeper) factory() processor.Factory {
	mutates := consumer.WithCapabilities(consumer.Capabilities{MutatesData: true})
	return processor.NewFactory(keepType, func() component.Config { return &struct{}{} },
		processor.WithTraces(func(_ context.Context, _ processor.Settings, _ component.Config, next consumer.Traces) (processor.Traces, error) {
			c, err := consumer.NewTraces(func(ctx context.Context, td ptrace.Traces) error {
				k.mu.Lock()
				k.traces = append(k.traces, td)
				k.mu.Unlock()
				return next.ConsumeTraces(ctx, td)
			}, mutates)
			return keptTraces{Traces: c}, err
		}, component.StabilityLevelDevelopment),
		processor.WithMetrics(func(_ context.Context, _ processor.Settings, _ component.Config, next consumer.Metrics) (processor.Metrics, error) {
			c, err := consumer.NewMetrics(func(ctx context.Context, md pmetric.Metrics) error {
				k.mu.Lock()
				k.metrics = append(k.metrics, md)
				k.mu.Unlock()
				return next.ConsumeMetrics(ctx, md)
			}, mutates)
			return keptMetrics{Metrics: c}, err
		}, component.StabilityLevelDevelopment))
}

type keptTraces struct {
	nopComponent
	consumer.Traces
}

type keptMetrics struct {
	nopComponent
	consumer.Metrics
}
