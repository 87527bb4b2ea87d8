package e2e

// Applications traced for Datakit, pointed at tracegate's Datakit port (the datakit receiver of
// configs/default.yaml) with nothing changed: the real OpenTelemetry JS SDK at /otel/v1/traces,
// zipkin-js at /api/v2/spans, jaeger-client at /apis/traces (test/ddclients/dknode), and
// dd-trace-js with DD_TRACE_AGENT_URL at the port itself (v0.4 and v0.5).

import (
	"context"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/tracegate/tracegate/internal/testbed/tracesend"
)

var dkNodeDir = filepath.Join(ddclientsDir, "dknode")

// dkSentSpan is one line of dknode/send.js.
type dkSentSpan struct {
	TraceID    string            `json:"trace_id"`
	SpanID     string            `json:"span_id"`
	ParentID   string            `json:"parent_id"`
	Name       string            `json:"name"`
	Kind       string            `json:"kind"`
	Error      bool              `json:"error"`
	Service    string            `json:"service"`
	Attributes map[string]string `json:"attributes"`
}

func (s dkSentSpan) span() tracesend.Span {
	attrs := map[string]any{}
	for k, v := range s.Attributes {
		attrs[k] = v
	}
	status := ""
	if s.Error {
		status = "Error"
	}
	return tracesend.Span{
		TraceID: s.TraceID, SpanID: s.SpanID, ParentSpanID: s.ParentID, Name: s.Name, Kind: s.Kind,
		StatusCode: status, Service: s.Service, Attributes: attrs,
	}
}

func TestDatakitPortRealClients(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
	defer cancel()
	node := npmCIIn(ctx, t, dkNodeDir)
	const traces = 10
	for _, client := range []string{"otel", "zipkin", "jaeger"} {
		t.Run(client, func(t *testing.T) {
			g := startGateway(t, "default.yaml") //nolint:contextcheck // the gateway belongs to the subtest
			service := "e2e-datakit-" + client
			cmd := exec.CommandContext(ctx, node, "send.js", "--client", client, "--url", "http://"+g.listeners.Datakit,
				"--service", service, "--traces", strconv.Itoa(traces))
			cmd.Dir = dkNodeDir
			var sent []tracesend.Span
			for _, s := range parseJSONLines[dkSentSpan](t, runDDProgram(t, cmd)) {
				sent = append(sent, s.span())
			}
			if len(sent) != 2*traces {
				t.Fatalf("%s sent %d spans, want %d", client, len(sent), 2*traces)
			}
			waitCtx, waitCancel := context.WithTimeout(ctx, 30*time.Second)
			defer waitCancel()
			if err := g.es.WaitForSpans(waitCtx, len(sent)); err != nil {
				t.Fatalf("%v; stand-in: %+v", err, g.es.Stats())
			}
			g.stopAndFlush(t)
			checkArrivedOnce(t, g.es.Documents(), sent)
			if st := g.es.Stats(); st.SpansByService[service] != len(sent) || st.DuplicateSpans != 0 {
				t.Errorf("%d span documents of %s and %d duplicates; want %d and none", st.SpansByService[service], service, st.DuplicateSpans, len(sent))
			}
		})
	}
	ddNode := npmCI(ctx, t)
	for _, version := range []string{"0.4", "0.5"} {
		t.Run("dd-trace-js v"+version, func(t *testing.T) {
			g := startGateway(t, "default.yaml") //nolint:contextcheck // the gateway belongs to the subtest
			service := "e2e-datakit-dd-v" + version
			cmd := exec.CommandContext(ctx, ddNode, "send.js", "--service", service, "--traces", strconv.Itoa(ddTraces))
			cmd.Dir = ddNodeDir
			cmd.Env = ddClientEnv("DD_TRACE_AGENT_URL=http://"+g.listeners.Datakit, "DD_TRACE_AGENT_PROTOCOL_VERSION="+version)
			want, failed := expectedDDSpans(t, runDDClient(t, cmd), service)
			waitForDDSpans(ctx, t, g, want, failed)
		})
	}
}
