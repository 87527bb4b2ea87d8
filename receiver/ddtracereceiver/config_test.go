package ddtracereceiver

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/confmap/confmaptest"
	"go.opentelemetry.io/collector/confmap/xconfmap"

	"github.com/tracegate/tracegate/receiver/ddtracereceiver/internal/metadata"
	"github.com/tracegate/tracegate/receiver/ddtracereceiver/internal/translator"
)

func TestLoadConfig(t *testing.T) {
	cm, err := confmaptest.LoadConf(filepath.Join("testdata", "config.yaml"))
	require.NoError(t, err)

	custom := createDefaultConfig().(*Config)
	custom.NetAddr.Endpoint = "0.0.0.0:18126"
	custom.MaxRequestBodySize = 10 << 20
	custom.ReadTimeout = 10 * time.Second
	custom.MaxConcurrentRequests = 32
	custom.QueueTimeout = 500 * time.Millisecond
	custom.DecodeMemoryMiB = 2048
	custom.RefusalStatus = 429
	custom.RefusalWait = 250 * time.Millisecond
	custom.TraceIDCacheSize = 1000
	custom.Mapping = translator.MappingDatadogReceiver
	custom.StatusOKWithoutError = new(bool)
	custom.AgentVersion = "7.70.0"
	custom.DropRejectedChunks = true

	socket := createDefaultConfig().(*Config)
	socket.NetAddr.Endpoint = "/var/run/datadog/apm.socket"
	socket.NetAddr.Transport = "unix"

	for _, tt := range []struct {
		id   component.ID
		want *Config
	}{
		{component.NewID(metadata.Type), createDefaultConfig().(*Config)},
		{component.NewIDWithName(metadata.Type, "custom"), custom},
		{component.NewIDWithName(metadata.Type, "socket"), socket},
	} {
		t.Run(tt.id.String(), func(t *testing.T) {
			cfg := createDefaultConfig()
			sub, err := cm.Sub(tt.id.String())
			require.NoError(t, err)
			require.NoError(t, sub.Unmarshal(cfg))
			require.NoError(t, xconfmap.Validate(cfg))
			assert.Equal(t, tt.want, cfg)
		})
	}
}

func TestDefaultConfig(t *testing.T) {
	cfg := createDefaultConfig().(*Config)
	assert.Equal(t, "localhost:8126", cfg.NetAddr.Endpoint, "components bind localhost by default")
	assert.Equal(t, int64(25<<20), cfg.MaxRequestBodySize)
	assert.Equal(t, 5*time.Second, cfg.ReadTimeout)
	assert.Equal(t, 200, cfg.RefusalStatus)
	assert.False(t, cfg.DropRejectedChunks, "every chunk reaches the pipeline unless a configuration says otherwise")
	assert.NoError(t, cfg.Validate())
}

// TestStatusDefaultFollowsMapping: spans without an error are Unset with the semconv mapping (the
// specification's choice) and Ok with datadogreceiver (contrib's), unless the setting says.
func TestStatusDefaultFollowsMapping(t *testing.T) {
	yes, no := true, false
	for _, tt := range []struct {
		mapping translator.Mapping
		setting *bool
		want    bool
	}{
		{translator.MappingSemconv, nil, false},
		{translator.MappingDatadogReceiver, nil, true},
		{translator.MappingSemconv, &yes, true},
		{translator.MappingDatadogReceiver, &no, false},
	} {
		cfg := createDefaultConfig().(*Config)
		cfg.Mapping, cfg.StatusOKWithoutError = tt.mapping, tt.setting
		assert.Equal(t, tt.want, cfg.statusOKWithoutError(), "mapping %s, setting %v", tt.mapping, tt.setting)
	}
}

func TestValidate(t *testing.T) {
	for _, tt := range []struct {
		name   string
		modify func(*Config)
		want   string
	}{
		{"body too large", func(c *Config) { c.MaxRequestBodySize = 2 << 30 }, "max_request_body_size must be between 1 and 1073741824 bytes, got 2147483648"},
		{"negative body", func(c *Config) { c.MaxRequestBodySize = -1 }, "max_request_body_size must be between 1 and 1073741824 bytes, got -1"},
		{"zero body (confighttp would silently use its own 20 MiB)", func(c *Config) { c.MaxRequestBodySize = 0 }, "max_request_body_size must be between 1 and 1073741824 bytes, got 0"},
		{"no concurrency", func(c *Config) { c.MaxConcurrentRequests = 0 }, "max_concurrent_requests must be between 1 and 100000, got 0"},
		{"negative queue timeout", func(c *Config) { c.QueueTimeout = -time.Second }, "queue_timeout must not be negative, got -1s"},
		{"no decode memory", func(c *Config) { c.DecodeMemoryMiB = 0 }, "decode_memory_mib must be between 1 and 1048576, got 0"},
		{"refusal wait negative", func(c *Config) { c.RefusalWait = -time.Second }, "refusal_wait must be between 0 and 1m0s, got -1s"},
		{"refusal wait too long", func(c *Config) { c.RefusalWait = time.Hour }, "refusal_wait must be between 0 and 1m0s, got 1h0m0s"},
		{"refusal status 500", func(c *Config) { c.RefusalStatus = 500 }, "refusal_status must be 200, 429 or 503, got 500"},
		{"cache too large", func(c *Config) { c.TraceIDCacheSize = 20_000_000 }, "trace_id_cache_size must be between 0 and 10000000, got 20000000"},
		{"no agent version", func(c *Config) { c.AgentVersion = "" }, "agent_version must not be empty"},
		{"negative read timeout", func(c *Config) { c.ReadTimeout = -time.Second }, "read_timeout must not be negative, got -1s"},
		{"bad filter regex", func(c *Config) { c.Filters.FilterTagsRegex.Reject = []string{"env:(prod"} }, "filter_tags_regex.reject: \"env:(prod\": error parsing regexp: missing closing ): `(prod`"},
		{"unknown mapping", func(c *Config) { c.Mapping = "otel" }, `mapping must be "semconv" or "datadogreceiver", got "otel"`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cfg := createDefaultConfig().(*Config)
			tt.modify(cfg)
			assert.EqualError(t, cfg.Validate(), tt.want)
		})
	}
}
