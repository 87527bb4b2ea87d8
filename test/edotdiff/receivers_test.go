package edotdiff

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"net/http"
	"testing"
	"time"

	edotintake "github.com/elastic/opentelemetry-collector-components/receiver/elasticapmintakereceiver"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/config/confighttp"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/receiver"
	"go.opentelemetry.io/collector/receiver/receivertest"

	"github.com/tracegate/tracegate/receiver/elasticapmreceiver"
)

// intake is one intake receiver under test, listening on loopback, with a sink per signal.
type intake struct {
	url     string
	traces  *consumertest.TracesSink
	logs    *consumertest.LogsSink
	metrics *consumertest.MetricsSink
}

// output is what a receiver made of one request.
type output struct {
	traces  ptrace.Traces
	logs    plog.Logs
	metrics pmetric.Metrics
}

// startIntake starts the three signals' receivers of factory on a free loopback port; server
// returns the factory's embedded HTTP server settings, whose endpoint it sets.
func startIntake(t *testing.T, factory receiver.Factory, server func(component.Config) *confighttp.ServerConfig) *intake {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := l.Addr().String()
	require.NoError(t, l.Close())
	cfg := factory.CreateDefaultConfig()
	server(cfg).NetAddr.Endpoint = addr
	in := &intake{
		url:    "http://" + addr + "/intake/v2/events",
		traces: new(consumertest.TracesSink), logs: new(consumertest.LogsSink), metrics: new(consumertest.MetricsSink),
	}
	set := receivertest.NewNopSettings(factory.Type())
	ctx := context.Background()
	tr, err := factory.CreateTraces(ctx, set, cfg, in.traces)
	require.NoError(t, err)
	lr, err := factory.CreateLogs(ctx, set, cfg, in.logs)
	require.NoError(t, err)
	mr, err := factory.CreateMetrics(ctx, set, cfg, in.metrics)
	require.NoError(t, err)
	for _, r := range []component.Component{tr, lr, mr} {
		require.NoError(t, r.Start(ctx, componenttest.NewNopHost()))
		t.Cleanup(func() { require.NoError(t, r.Shutdown(context.Background())) })
	}
	return in
}

func startEDOT(t *testing.T) *intake {
	return startIntake(t, edotintake.NewFactory(), func(c component.Config) *confighttp.ServerConfig {
		return &c.(*edotintake.Config).ServerConfig
	})
}

func startOurs(t *testing.T) *intake {
	return startIntake(t, elasticapmreceiver.NewFactory(), func(c component.Config) *confighttp.ServerConfig {
		return &c.(*elasticapmreceiver.Config).ServerConfig
	})
}

// send posts body and returns what the receiver handed its sinks for it.
func (in *intake) send(t *testing.T, body []byte) output {
	t.Helper()
	in.traces.Reset()
	in.logs.Reset()
	in.metrics.Reset()
	var resp *http.Response
	require.Eventually(t, func() bool { // the server starts listening in the background
		r, err := http.Post(in.url, "application/x-ndjson", bytes.NewReader(body))
		if err != nil {
			return false
		}
		resp = r
		return true
	}, 10*time.Second, 20*time.Millisecond)
	require.NoError(t, resp.Body.Close())
	require.Less(t, resp.StatusCode, 500, "status %d from %s", resp.StatusCode, in.url)
	return output{traces: mergeTraces(in.traces.AllTraces()), logs: mergeLogs(in.logs.AllLogs()), metrics: mergeMetrics(in.metrics.AllMetrics())}
}

func mergeTraces(all []ptrace.Traces) ptrace.Traces {
	out := ptrace.NewTraces()
	for _, td := range all {
		td.ResourceSpans().MoveAndAppendTo(out.ResourceSpans())
	}
	return out
}

func mergeLogs(all []plog.Logs) plog.Logs {
	out := plog.NewLogs()
	for _, ld := range all {
		ld.ResourceLogs().MoveAndAppendTo(out.ResourceLogs())
	}
	return out
}

func mergeMetrics(all []pmetric.Metrics) pmetric.Metrics {
	out := pmetric.NewMetrics()
	for _, md := range all {
		md.ResourceMetrics().MoveAndAppendTo(out.ResourceMetrics())
	}
	return out
}

func (o output) String() string {
	return fmt.Sprintf("%d spans, %d log records, %d data points", o.traces.SpanCount(), o.logs.LogRecordCount(), o.metrics.DataPointCount())
}
