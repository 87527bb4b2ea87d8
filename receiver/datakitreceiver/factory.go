package datakitreceiver

import (
	"net/http"
	"runtime"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/config/confighttp"
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
		receiver.WithTraces(receivers.CreateTraces, metadata.TracesStability),
		receiver.WithMetrics(receivers.CreateMetrics, metadata.MetricsStability),
		receiver.WithLogs(receivers.CreateLogs, metadata.LogsStability))
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
var receivers = sharedcomponent.Receivers[Config, *datakitReceiver]{New: newReceiver}
