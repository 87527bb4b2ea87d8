package e2e

import (
	"regexp"
	"strings"
	"testing"
	"time"
)

// anyPort adds a ddtrace receiver on port 0 in a pipeline of its own: the ready line must name the
// port it bound, which only the receiver knows.
const anyPort = `
receivers:
  ddtrace/anyport:
    endpoint: 127.0.0.1:0
exporters:
  debug/anyport: {}
service:
  pipelines:
    traces/anyport:
      receivers: [ddtrace/anyport]
      exporters: [debug/anyport]
`

var anyPortEntry = regexp.MustCompile(`"ddtrace/anyport=127\.0\.0\.1:(\d+)"`)

// TestReadyLine: once every receiver listens, tracegate logs one line at the configs' level
// (warn) naming every listening address (the address tracegate's receivers bound, the configured
// one of each stock receiver's listener) and how the buffer keeps what it holds.
func TestReadyLine(t *testing.T) {
	for _, tc := range []struct{ config, buffer string }{
		{"default.yaml", `"buffer=overflow `},
		{"durable.yaml", `"buffer=write_ahead `},
	} {
		t.Run(tc.config, func(t *testing.T) {
			g := startGatewayWith(t, gatewayOptions{config: tc.config, extraConfig: anyPort})
			line := readyLine(t, g)
			if !strings.Contains(line, "\twarn\t") {
				t.Errorf("ready line not at warn: %s", line)
			}
			l := g.listeners
			for name, addr := range map[string]string{
				"otlp/protocols/grpc": l.OTLPGRPC, "otlp/protocols/http": l.OTLPHTTP, "zipkin": l.Zipkin,
				"jaeger/protocols/grpc": l.JaegerGRPC, "jaeger/protocols/thrift_http": l.JaegerThriftHTTP,
				"jaeger/protocols/thrift_compact": l.JaegerCompact, "ddtrace": l.DDTrace, "elasticapm": l.ElasticAPM,
			} {
				if !strings.Contains(line, `"`+name+"="+addr+`"`) {
					t.Errorf("ready line lacks %s=%s: %s", name, addr, line)
				}
			}
			if m := anyPortEntry.FindStringSubmatch(line); len(m) < 2 || m[1] == "0" {
				t.Errorf("ready line lacks the port ddtrace/anyport bound: %s", line)
			}
			if !strings.Contains(line, tc.buffer+g.bufferDir+`"`) {
				t.Errorf("ready line lacks %s%s: %s", tc.buffer, g.bufferDir, line)
			}
			if n := strings.Count(g.proc.Log(), "tracegate is ready"); n != 1 {
				t.Errorf("%d ready lines, want 1", n)
			}
			// Neither GOGC nor GOMEMLIMIT in the test's environment: the binary's GC defaults.
			if !strings.Contains(line, `"gc": "GOGC=400`) {
				t.Errorf("ready line lacks the GC defaults: %s", line)
			}
		})
	}
}

// TestReadyLineGCFromEnvironment: a GOGC the user set turns the binary's GC defaults off, and the
// ready line says so.
func TestReadyLineGCFromEnvironment(t *testing.T) {
	g := startGatewayWith(t, gatewayOptions{config: "default.yaml", env: []string{"GOGC=150"}})
	if line := readyLine(t, g); !strings.Contains(line, `"gc": "GOGC/GOMEMLIMIT from the environment"`) {
		t.Errorf("ready line with GOGC set: %q", line)
	}
}

// readyLine waits for the gateway's ready line and returns it.
func readyLine(t *testing.T, g *gateway) string {
	t.Helper()
	// Polling the process's log: the line comes once its pipelines are ready.
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		for l := range strings.SplitSeq(g.proc.Log(), "\n") {
			if strings.Contains(l, "tracegate is ready") {
				return l
			}
		}
	}
	t.Fatalf("no ready line in the log:\n%s", g.proc.Log())
	return ""
}
