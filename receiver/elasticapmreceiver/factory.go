package elasticapmreceiver

import (
	"context"
	"runtime"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/config/confighttp"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/receiver"

	"github.com/tracegate/tracegate/internal/sharedcomponent"
	"github.com/tracegate/tracegate/receiver/elasticapmreceiver/internal/metadata"
)

const (
	defaultEndpoint     = "localhost:8200"
	defaultMaxBodySize  = 16 << 20
	defaultMaxEventSize = 300 << 10 // APM Server's max_event_size
	defaultReadTimeout  = 30 * time.Second
	defaultIdleTimeout  = 45 * time.Second
)

// NewFactory returns the elasticapm receiver factory.
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
	server.WriteTimeout = defaultReadTimeout
	server.IdleTimeout = defaultIdleTimeout
	return &Config{
		ServerConfig:          server,
		MaxEventSize:          defaultMaxEventSize,
		MaxConcurrentRequests: max(8, 4*runtime.GOMAXPROCS(0)),
		QueueTimeout:          time.Second,
		RefusalWait:           time.Second,
		ServerVersion:         "9.2.0",
	}
}

// receivers holds one receiver (one server) per component id and configuration for all signals.
var receivers sharedcomponent.Map[instanceKey, *intakeReceiver]

type instanceKey struct {
	id  component.ID
	cfg *Config
}

func shared(set receiver.Settings, cfg component.Config) (*sharedcomponent.Component[*intakeReceiver], error) {
	c := cfg.(*Config)
	return receivers.LoadOrStore(instanceKey{id: set.ID, cfg: c}, func() (*intakeReceiver, error) {
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
