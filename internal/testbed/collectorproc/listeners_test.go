package collectorproc

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// TestPickListeners: every listener moves to its own loopback port, the overlay names exactly the
// addresses returned, and optional listeners appear only when asked for.
func TestPickListeners(t *testing.T) {
	tests := []struct {
		name string
		o    ListenerOptions
	}{
		{"stock build", ListenerOptions{}},
		{"bench configs", ListenerOptions{DDTrace: true, ElasticAPM: true}},
		{"configs/default.yaml", ListenerOptions{DDTrace: true, ElasticAPM: true, Datakit: true, JaegerBinary: true, ZPages: true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l, b, err := PickListeners(tt.o)
			if err != nil {
				t.Fatal(err)
			}
			var m struct {
				Receivers struct {
					OTLP struct {
						Protocols map[string]struct{ Endpoint string } `json:"protocols"`
					} `json:"otlp"`
					Zipkin struct{ Endpoint string } `json:"zipkin"`
					Jaeger struct {
						Protocols map[string]struct{ Endpoint string } `json:"protocols"`
					} `json:"jaeger"`
					DDTrace    *struct{ Endpoint string } `json:"ddtrace"`
					ElasticAPM *struct{ Endpoint string } `json:"elasticapm"`
					Datakit    *struct{ Endpoint string } `json:"datakit"`
				} `json:"receivers"`
				Extensions map[string]struct{ Endpoint string } `json:"extensions"`
				Service    struct {
					Telemetry struct {
						Metrics struct {
							Readers []struct {
								Pull struct {
									Exporter struct {
										Prometheus struct {
											Host string
											Port int
										} `json:"prometheus"`
									} `json:"exporter"`
								} `json:"pull"`
							} `json:"readers"`
						} `json:"metrics"`
					} `json:"telemetry"`
				} `json:"service"`
			}
			if err := json.Unmarshal(b, &m); err != nil {
				t.Fatal(err)
			}
			r := m.Receivers
			got := map[string]string{
				"otlp grpc": r.OTLP.Protocols["grpc"].Endpoint, "otlp http": r.OTLP.Protocols["http"].Endpoint, "zipkin": r.Zipkin.Endpoint,
				"jaeger grpc": r.Jaeger.Protocols["grpc"].Endpoint, "jaeger thrift_http": r.Jaeger.Protocols["thrift_http"].Endpoint,
				"jaeger thrift_compact": r.Jaeger.Protocols["thrift_compact"].Endpoint, "jaeger thrift_binary": r.Jaeger.Protocols["thrift_binary"].Endpoint,
				"health_check": m.Extensions["health_check"].Endpoint, "pprof": m.Extensions["pprof"].Endpoint, "zpages": m.Extensions["zpages"].Endpoint,
			}
			if r.DDTrace != nil {
				got["ddtrace"] = r.DDTrace.Endpoint
			}
			if r.ElasticAPM != nil {
				got["elasticapm"] = r.ElasticAPM.Endpoint
			}
			if r.Datakit != nil {
				got["datakit"] = r.Datakit.Endpoint
			}
			want := map[string]string{
				"otlp grpc": l.OTLPGRPC, "otlp http": l.OTLPHTTP, "zipkin": l.Zipkin, "jaeger grpc": l.JaegerGRPC,
				"jaeger thrift_http": l.JaegerThriftHTTP, "jaeger thrift_compact": l.JaegerCompact, "jaeger thrift_binary": l.JaegerBin,
				"health_check": l.Health, "pprof": l.Pprof, "zpages": l.ZPages,
			}
			if tt.o.DDTrace {
				want["ddtrace"] = l.DDTrace
			}
			if tt.o.ElasticAPM {
				want["elasticapm"] = l.ElasticAPM
			}
			if tt.o.Datakit {
				want["datakit"] = l.Datakit
			}
			seen := map[string]string{}
			for k, addr := range want {
				if got[k] != addr {
					t.Errorf("%s: overlay has %q, Listeners %q", k, got[k], addr)
				}
				optional := map[string]bool{"jaeger thrift_binary": !tt.o.JaegerBinary, "zpages": !tt.o.ZPages}
				if optional[k] {
					if addr != "" {
						t.Errorf("%s was not asked for but listens on %s", k, addr)
					}
					continue
				}
				if !strings.HasPrefix(addr, "127.0.0.1:") {
					t.Errorf("%s: %q is not a loopback address", k, addr)
				}
				if strings.HasPrefix(k, "jaeger thrift_") && k != "jaeger thrift_http" {
					continue // UDP: its number may equal a TCP port's
				}
				if other, dup := seen[addr]; dup {
					t.Errorf("%s and %s share %s", k, other, addr)
				}
				seen[addr] = k
			}
			if !tt.o.DDTrace && (r.DDTrace != nil || l.DDTrace != "") {
				t.Errorf("ddtrace configured for a build without it: %s", b)
			}
			if !tt.o.Datakit && (r.Datakit != nil || l.Datakit != "") {
				t.Errorf("datakit configured for a build without it: %s", b)
			}
			if !tt.o.ElasticAPM && (r.ElasticAPM != nil || l.ElasticAPM != "") {
				t.Errorf("elasticapm configured for a build without it: %s", b)
			}
			readers := m.Service.Telemetry.Metrics.Readers
			if len(readers) != 1 || fmt.Sprintf("%s:%d", readers[0].Pull.Exporter.Prometheus.Host, readers[0].Pull.Exporter.Prometheus.Port) != fmt.Sprintf("127.0.0.1:%d", l.MetricsPort) || l.MetricsPort == 0 {
				t.Errorf("metrics reader %+v, MetricsPort %d", readers, l.MetricsPort)
			}
		})
	}
}
