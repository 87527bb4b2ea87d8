package ddtracereceiver

import (
	"context"
	"runtime"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/config/confighttp"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/receiver"

	"github.com/tracegate/tracegate/receiver/ddtracereceiver/internal/metadata"
	"github.com/tracegate/tracegate/receiver/ddtracereceiver/internal/obfuscation"
	"github.com/tracegate/tracegate/receiver/ddtracereceiver/internal/ratesampler"
	"github.com/tracegate/tracegate/receiver/ddtracereceiver/internal/translator"
)

const (
	defaultEndpoint    = "localhost:8126"
	defaultMaxBodySize = 25 << 20 // the agent's apm_config.max_payload_size
	defaultReadTimeout = 5 * time.Second
)

// NewFactory returns the ddtrace receiver factory.
func NewFactory() receiver.Factory {
	return receiver.NewFactory(metadata.Type, createDefaultConfig,
		receiver.WithTraces(createTraces, metadata.TracesStability))
}

func createDefaultConfig() component.Config {
	server := confighttp.NewDefaultServerConfig()
	server.NetAddr.Endpoint = defaultEndpoint
	server.MaxRequestBodySize = defaultMaxBodySize
	server.ReadTimeout = defaultReadTimeout
	server.ReadHeaderTimeout = defaultReadTimeout
	return &Config{
		ServerConfig:          server,
		MaxConcurrentRequests: max(8, 4*runtime.GOMAXPROCS(0)),
		QueueTimeout:          time.Second,
		DecodeMemoryMiB:       512,
		RefusalStatus:         200,
		RefusalWait:           time.Second,
		TraceIDCacheSize:      100_000,
		Mapping:               translator.MappingSemconv,
		AgentVersion:          "7.65.0",
		Obfuscation:           obfuscation.DefaultConfig(),
		RateByService:         ratesampler.DefaultConfig(),
	}
}

func createTraces(_ context.Context, set receiver.Settings, cfg component.Config, next consumer.Traces) (receiver.Traces, error) {
	return newReceiver(cfg.(*Config), set, next)
}
