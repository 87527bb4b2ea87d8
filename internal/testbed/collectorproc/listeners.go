package collectorproc

import (
	"encoding/json"
	"errors"
	"fmt"
)

// Listeners are the loopback addresses (host:port) a collector's listeners were moved to by the
// overlay of PickListeners. Optional listeners the collector does not have are empty.
type Listeners struct {
	OTLPGRPC, OTLPHTTP, Zipkin                             string
	JaegerGRPC, JaegerThriftHTTP, JaegerCompact, JaegerBin string
	DDTrace                                                string
	ElasticAPM                                             string // Elastic APM agents' intake
	Datakit                                                string // Datakit's trace inputs (port 9529)
	Health, Pprof, ZPages                                  string
	// MetricsPort is the port of the collector's own Prometheus metrics.
	MetricsPort int
}

// ListenerOptions say which optional listeners the collector's configuration has: an overlay may
// only configure components the build has, and one it does not know fails the start.
type ListenerOptions struct {
	DDTrace      bool // the ddtrace receiver (tracegate; the stock build lacks it)
	ElasticAPM   bool // the elasticapm receiver (tracegate; the stock build lacks it)
	Datakit      bool // the datakit receiver (tracegate; the stock build lacks it)
	JaegerBinary bool // the Jaeger thrift_binary (UDP) listener, as configs/default.yaml has
	ZPages       bool // the zpages extension
}

// PickListeners picks a free loopback port for every listener of the configurations in configs/
// (the receivers, health_check, pprof, optional ones per o, the collector's own metrics) and
// returns the overlay configuration that moves them there, to be given after the collector's
// own --config. Ports are only free when picked: start with StartOnFreePorts, which picks again
// when one was taken meanwhile.
func PickListeners(o ListenerOptions) (Listeners, []byte, error) {
	var errs []error
	// A free port is one the kernel handed out and took back, so two asks can get the same one:
	// ask again until every listener has a port of its own.
	used := map[int]bool{}
	distinct := func(free func() (int, error)) int {
		for range 100 {
			p, err := free()
			if err != nil {
				errs = append(errs, err)
				return p
			}
			if !used[p] {
				used[p] = true
				return p
			}
		}
		errs = append(errs, errors.New("no distinct free port after 100 tries"))
		return 0
	}
	tcp := func() string { return fmt.Sprintf("127.0.0.1:%d", distinct(FreePort)) }
	udp := func() string { return fmt.Sprintf("127.0.0.1:%d", distinct(FreeUDPPort)) }
	l := Listeners{
		OTLPGRPC: tcp(), OTLPHTTP: tcp(), Zipkin: tcp(),
		JaegerGRPC: tcp(), JaegerThriftHTTP: tcp(), JaegerCompact: udp(),
		Health: tcp(), Pprof: tcp(),
	}
	l.MetricsPort = distinct(FreePort)

	jaeger := map[string]any{
		"grpc":           map[string]any{"endpoint": l.JaegerGRPC},
		"thrift_http":    map[string]any{"endpoint": l.JaegerThriftHTTP},
		"thrift_compact": map[string]any{"endpoint": l.JaegerCompact},
	}
	receivers := map[string]any{
		"otlp":   map[string]any{"protocols": map[string]any{"grpc": map[string]any{"endpoint": l.OTLPGRPC}, "http": map[string]any{"endpoint": l.OTLPHTTP}}},
		"zipkin": map[string]any{"endpoint": l.Zipkin},
		"jaeger": map[string]any{"protocols": jaeger},
	}
	extensions := map[string]any{
		"health_check": map[string]any{"endpoint": l.Health},
		"pprof":        map[string]any{"endpoint": l.Pprof},
	}
	if o.DDTrace {
		l.DDTrace = tcp()
		receivers["ddtrace"] = map[string]any{"endpoint": l.DDTrace}
	}
	if o.Datakit {
		l.Datakit = tcp()
		receivers["datakit"] = map[string]any{"endpoint": l.Datakit}
	}
	if o.ElasticAPM {
		l.ElasticAPM = tcp()
		receivers["elasticapm"] = map[string]any{"endpoint": l.ElasticAPM}
	}
	if o.JaegerBinary {
		l.JaegerBin = udp()
		jaeger["thrift_binary"] = map[string]any{"endpoint": l.JaegerBin}
	}
	if o.ZPages {
		l.ZPages = tcp()
		extensions["zpages"] = map[string]any{"endpoint": l.ZPages}
	}
	overlay := map[string]any{
		"receivers":  receivers,
		"extensions": extensions,
		"service": map[string]any{"telemetry": map[string]any{"metrics": map[string]any{"readers": []any{
			map[string]any{"pull": map[string]any{"exporter": map[string]any{"prometheus": map[string]any{"host": "127.0.0.1", "port": l.MetricsPort}}}},
		}}}},
	}
	if err := errors.Join(errs...); err != nil {
		return Listeners{}, nil, err
	}
	// JSON is YAML, so the overlay needs no YAML library.
	b, err := json.Marshal(overlay)
	return l, b, err
}
