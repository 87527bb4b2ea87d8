package datakitreceiver

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/confmap/xconfmap"

	"github.com/tracegate/tracegate/internal/configtest"
	"github.com/tracegate/tracegate/receiver/datakitreceiver/internal/metadata"
)

func loadConfig(t *testing.T, name string) *Config {
	t.Helper()
	return configtest.Load(t, filepath.Join("testdata", "config.yaml"), component.NewIDWithName(metadata.Type, name), createDefaultConfig().(*Config))
}

func TestLoadConfig(t *testing.T) {
	def := loadConfig(t, "")
	require.NoError(t, xconfmap.Validate(def))
	assert.Equal(t, createDefaultConfig(), def)
	assert.Equal(t, "localhost:9529", def.NetAddr.Endpoint, "components bind localhost by default")
	assert.Equal(t, 429, def.DDTrace.RefusalStatus, "a refused payload is never answered as taken")

	want := createDefaultConfig().(*Config)
	want.NetAddr.Endpoint = "0.0.0.0:19529"
	want.MaxRequestBodySize = 1 << 20
	want.MaxConcurrentRequests = 16
	want.QueueTimeout = 250 * time.Millisecond
	want.RefusalWait = 0
	want.Paths.Jaeger, want.Paths.OTLPPrefix = "/jaeger/traces", "/otlp"
	want.DDTrace.RefusalStatus = 503
	want.DDTrace.Filters.IgnoreResources = []string{"^GET /health$"}
	want.DDTrace.DropRejectedChunks = true
	custom := loadConfig(t, "custom")
	require.NoError(t, xconfmap.Validate(custom))
	assert.Equal(t, want, custom)
}

func TestValidate(t *testing.T) {
	for _, tt := range []struct {
		name string
		cfg  *Config
		want string
	}{
		{"relative path", loadConfig(t, "bad_path"), `paths::zipkin_v2 must start with /, got "api/v2/spans"`},
		{"a Datadog route", loadConfig(t, "ddtrace_path"), "paths::jaeger: /v0.4/traces is a Datadog tracers' route"},
		{"bad ddtrace section", loadConfig(t, "bad_ddtrace"), `ddtrace: mapping must be "semconv" or "datadogreceiver", got "otel"`},
		{"two routes on one path", func() *Config {
			c := createDefaultConfig().(*Config)
			c.Paths.ZipkinV1 = c.Paths.ZipkinV2
			return c
		}(), "paths::zipkin_v2: /api/v2/spans is also paths::zipkin_v1"},
		{"limits", func() *Config {
			c := createDefaultConfig().(*Config)
			c.MaxRequestBodySize, c.MaxConcurrentRequests, c.QueueTimeout, c.RefusalWait = 0, 0, -time.Second, time.Hour
			return c
		}(), "max_request_body_size must be between 1 and 1073741824 bytes, got 0\nmax_concurrent_requests must be between 1 and 100000, got 0\n" +
			"queue_timeout must not be negative, got -1s\nrefusal_wait must be between 0 and 1m0s, got 1h0m0s"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			assert.EqualError(t, tt.cfg.Validate(), tt.want)
		})
	}
}
