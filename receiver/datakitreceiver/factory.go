package datakitreceiver

import (
	"context"
	"net/http"
	"runtime"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/config/confighttp"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/receiver"

	"github.com/tracegate/tracegate/internal/sharedcomponent"
	"github.com/tracegate/tracegate/receiver/datakitreceiver/internal/metadata"
	"github.com/tracegate/tracegate/receiver/ddtracereceiver"
)

const (
	defaultEndpoint    = "localhost:9529" // Datakit's http_api.listen
	defaultMaxBodySize = 32 << 20
	defaultReadTimeout = 30 * time.Second // Datakit's HTTP timeout
)

// NewFactory returns the datakit receiver factory.
func NewFactory() receiver.Factory {
	return receiver.NewFactory(metadata.Type, createDefaultConfig,
		receiver.WithTraces(createTraces, metadata.TracesStability),
		receiver.WithMetrics(createMetrics, metadata.MetricsStability),
		receiver.WithLogs(createLogs, metadata.LogsStability))
}

func createDefaultConfig() component.Config {
	server := confighttp.NewDefaultServerConfig()
	server.NetAddr.Endpoint = defaultEndpoint
	server.MaxRequestBodySize = defaultMaxBodySize
	server.ReadTimeout = defaultReadTimeout
	server.ReadHeaderTimeout = defaultReadTimeout
	dd := ddtracereceiver.NewDefaultConfig()
	dd.RefusalStatus = http.StatusTooManyRequests
	return &Config{
		ServerConfig:          server,
		MaxConcurrentRequests: max(8, 4*runtime.GOMAXPROCS(0)),
		QueueTimeout:          time.Second,
		RefusalWait:           time.Second,
		Paths:                 Paths{Jaeger: "/apis/traces", ZipkinV1: "/api/v1/spans", ZipkinV2: "/api/v2/spans", OTLPPrefix: "/otel"},
		DDTrace:               dd,
	}
}

// receivers holds one receiver (one server) per component id and configuration for all signals.
var receivers sharedcomponent.Map[instanceKey, *datakitReceiver]

type instanceKey struct {
	id  component.ID
	cfg *Config
}

func shared(set receiver.Settings, cfg component.Config) (*sharedcomponent.Component[*datakitReceiver], error) {
	c := cfg.(*Config)
	return receivers.LoadOrStore(instanceKey{id: set.ID, cfg: c}, func() (*datakitReceiver, error) {
		return newReceiver(c, set)
	})
}

func createTraces(_ context.Context, set receiver.Settings, cfg component.Config, next consumer.Traces) (receiver.Traces, error) {
	r, err := shared(set, cfg)
	if err != nil {
		return nil, err
	}
	r.Unwrap.nextTraces = next
	return r, nil
}

func createMetrics(_ context.Context, set receiver.Settings, cfg component.Config, next consumer.Metrics) (receiver.Metrics, error) {
	r, err := shared(set, cfg)
	if err != nil {
		return nil, err
	}
	r.Unwrap.nextMetrics = next
	return r, nil
}

func createLogs(_ context.Context, set receiver.Settings, cfg component.Config, next consumer.Logs) (receiver.Logs, error) {
	r, err := shared(set, cfg)
	if err != nil {
		return nil, err
	}
	r.Unwrap.nextLogs = next
	return r, nil
}
