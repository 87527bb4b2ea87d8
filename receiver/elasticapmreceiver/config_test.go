package elasticapmreceiver

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/confmap/confmaptest"
	"go.opentelemetry.io/collector/confmap/xconfmap"

	"github.com/tracegate/tracegate/receiver/elasticapmreceiver/internal/metadata"
)

func TestLoadConfig(t *testing.T) {
	cm, err := confmaptest.LoadConf(filepath.Join("testdata", "config.yaml"))
	require.NoError(t, err)

	custom := createDefaultConfig().(*Config)
	custom.NetAddr.Endpoint = "0.0.0.0:18200"
	custom.MaxRequestBodySize = 32 << 20
	custom.ReadTimeout = 10 * time.Second
	custom.MaxEventSize = 1 << 20
	custom.MaxConcurrentRequests = 32
	custom.QueueTimeout = 500 * time.Millisecond
	custom.RefusalWait = 250 * time.Millisecond
	custom.ServerVersion = "9.3.0"
	custom.Output = OutputAPMEvents

	for _, tt := range []struct {
		id   component.ID
		want *Config
	}{
		{component.NewID(metadata.Type), createDefaultConfig().(*Config)},
		{component.NewIDWithName(metadata.Type, "custom"), custom},
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

// TestAuthConfig: agents' secret token or API key is checked by an authenticator extension.
func TestAuthConfig(t *testing.T) {
	cm, err := confmaptest.LoadConf(filepath.Join("testdata", "config.yaml"))
	require.NoError(t, err)
	sub, err := cm.Sub(component.NewIDWithName(metadata.Type, "auth").String())
	require.NoError(t, err)
	cfg := createDefaultConfig().(*Config)
	require.NoError(t, sub.Unmarshal(cfg))
	require.NoError(t, xconfmap.Validate(cfg))
	require.True(t, cfg.Auth.HasValue())
	assert.Equal(t, component.MustNewID("bearertokenauth"), cfg.Auth.Get().AuthenticatorID)
}

// TestDefaultConfig: APM Server's port, limits and timeouts.
func TestDefaultConfig(t *testing.T) {
	cfg := createDefaultConfig().(*Config)
	assert.Equal(t, "localhost:8200", cfg.NetAddr.Endpoint)
	assert.Equal(t, 300<<10, cfg.MaxEventSize)
	assert.Equal(t, int64(16<<20), cfg.MaxRequestBodySize)
	assert.Equal(t, 30*time.Second, cfg.ReadTimeout)
	assert.Equal(t, 45*time.Second, cfg.IdleTimeout)
	assert.Equal(t, "9.2.0", cfg.ServerVersion)
	require.NoError(t, cfg.Validate())
}

func TestValidate(t *testing.T) {
	for _, tc := range []struct {
		name    string
		mutate  func(*Config)
		wantErr string
	}{
		{"body limit zero", func(c *Config) { c.MaxRequestBodySize = 0 }, "max_request_body_size must be between 1 and"},
		{"body limit huge", func(c *Config) { c.MaxRequestBodySize = 2 << 30 }, "max_request_body_size must be between 1 and"},
		{"event size zero", func(c *Config) { c.MaxEventSize = 0 }, "max_event_size must be between 1 and"},
		{"event above body", func(c *Config) { c.MaxRequestBodySize = 1 << 10; c.MaxEventSize = 2 << 10 }, "must not exceed max_request_body_size"},
		{"no slots", func(c *Config) { c.MaxConcurrentRequests = 0 }, "max_concurrent_requests must be between 1 and"},
		{"negative queue timeout", func(c *Config) { c.QueueTimeout = -time.Second }, "queue_timeout must not be negative"},
		{"refusal wait too long", func(c *Config) { c.RefusalWait = 2 * time.Minute }, "refusal_wait must be between 0 and 1m0s"},
		{"no version", func(c *Config) { c.ServerVersion = "" }, "server_version must not be empty"},
		{"unknown output", func(c *Config) { c.Output = "ecs" }, `output must be "otel" or "apm_events", got "ecs"`},
		{"negative read timeout", func(c *Config) { c.ReadTimeout = -time.Second }, "read_timeout must not be negative"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := createDefaultConfig().(*Config)
			tc.mutate(cfg)
			assert.ErrorContains(t, cfg.Validate(), tc.wantErr)
		})
	}
}
