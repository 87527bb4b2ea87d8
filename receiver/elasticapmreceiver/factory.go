package elasticapmreceiver

import (
	"runtime"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/config/confighttp"
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
		receiver.WithTraces(receivers.CreateTraces, metadata.TracesStability),
		receiver.WithMetrics(receivers.CreateMetrics, metadata.MetricsStability),
		receiver.WithLogs(receivers.CreateLogs, metadata.LogsStability))
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
		Output:                OutputOTel,
	}
}

// receivers holds one receiver (one server) per component id and configuration for all signals.
var receivers = sharedcomponent.Receivers[Config, *intakeReceiver]{New: newReceiver}
