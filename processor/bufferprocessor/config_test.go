package bufferprocessor

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/config/configoptional"
	"go.opentelemetry.io/collector/confmap/confmaptest"
	"go.opentelemetry.io/collector/confmap/xconfmap"

	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/processor/processortest"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/tracegate/tracegate/processor/bufferprocessor/internal/metadata"
)

func TestLoadConfig(t *testing.T) {
	cm, err := confmaptest.LoadConf(filepath.Join("testdata", "config.yaml"))
	require.NoError(t, err)
	disk := defaultStorage()
	disk.Directory = "/var/lib/tracegate/buffer"
	tests := []struct {
		id       component.ID
		expected *Config
	}{
		{id: component.NewID(metadata.Type), expected: createDefaultConfig().(*Config)},
		{
			id: component.NewIDWithName(metadata.Type, "custom"),
			expected: &Config{
				Threads: 16, QueueSize: 500, MaxBatchItems: 2048, MaxBatchWait: 500 * time.Millisecond, WhenFull: WhenFullDropOldest,
				Storage:         configoptional.Default(defaultStorage()),
				Retry:           RetryConfig{InitialInterval: 200 * time.Millisecond, MaxInterval: 10 * time.Second, MaxElapsed: time.Hour},
				ShutdownTimeout: 25 * time.Second,
			},
		},
		{
			id: component.NewIDWithName(metadata.Type, "disk"),
			expected: &Config{
				Threads: 8, QueueSize: 100, WhenFull: WhenFullRefuse, Storage: configoptional.Some(disk),
				Retry:           RetryConfig{InitialInterval: time.Second, MaxInterval: 5 * time.Second},
				ShutdownTimeout: 10 * time.Second,
			},
		},
		{
			id: component.NewIDWithName(metadata.Type, "durable"),
			expected: &Config{
				Threads: 8, QueueSize: 100, MaxBatchItems: 2048, WhenFull: WhenFullRefuse,
				Storage: configoptional.Some(StorageConfig{
					Directory: "/var/lib/tracegate/buffer", CapacityMiB: 1024, Mode: ModeWriteAhead,
					Fsync: FsyncAlways, FsyncInterval: 50 * time.Millisecond,
				}),
				Retry:           RetryConfig{InitialInterval: time.Second, MaxInterval: 5 * time.Second},
				ShutdownTimeout: 10 * time.Second,
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.id.String(), func(t *testing.T) {
			cfg := NewFactory().CreateDefaultConfig()
			sub, err := cm.Sub(tt.id.String())
			require.NoError(t, err)
			require.NoError(t, sub.Unmarshal(cfg))
			require.NoError(t, xconfmap.Validate(cfg))
			assert.Equal(t, tt.expected, cfg)
		})
	}
}

func TestDefaultConfigHasNoStorage(t *testing.T) {
	cfg := createDefaultConfig().(*Config)
	assert.False(t, cfg.Storage.HasValue())
	require.NoError(t, xconfmap.Validate(cfg))
}

func TestValidateErrors(t *testing.T) {
	withStorage := func(mut func(*StorageConfig)) func(*Config) {
		return func(c *Config) {
			s := defaultStorage()
			s.Directory = "/tmp/x"
			mut(&s)
			c.Storage = configoptional.Some(s)
		}
	}
	tests := []struct {
		name   string
		mutate func(*Config)
		want   string
	}{
		{"threads zero", func(c *Config) { c.Threads = 0 }, "threads must be between 1 and 1024, got 0"},
		{"threads huge", func(c *Config) { c.Threads = 5000 }, "threads must be between 1 and 1024, got 5000"},
		{"queue_size zero", func(c *Config) { c.QueueSize = 0 }, "queue_size must be between 1 and 1000000, got 0"},
		{"max_batch_items negative", func(c *Config) { c.MaxBatchItems = -1 }, "max_batch_items must be between 0 and 1000000, got -1"},
		{"when_full", func(c *Config) { c.WhenFull = "block" }, `when_full must be "refuse" or "drop_oldest", got "block"`},
		{"full_wait negative", func(c *Config) { c.FullWait = -time.Second }, "full_wait must be between 0 and 1m0s, got -1s"},
		{"full_wait too long", func(c *Config) { c.FullWait = 2 * time.Minute }, "full_wait must be between 0 and 1m0s, got 2m0s"},
		{"initial_interval", func(c *Config) { c.Retry.InitialInterval = 0 }, "retry.initial_interval must be between 1ms and 1h0m0s, got 0s"},
		{"max_interval below initial", func(c *Config) { c.Retry.MaxInterval = 500 * time.Millisecond }, "retry.max_interval must be between retry.initial_interval (1s) and 1h0m0s, got 500ms"},
		{"max_elapsed negative", func(c *Config) { c.Retry.MaxElapsed = -time.Second }, "retry.max_elapsed must not be negative, got -1s"},
		{"max_batch_wait without max_batch_items", func(c *Config) { c.MaxBatchWait = time.Second }, "max_batch_wait needs max_batch_items > 0: without merging there is nothing to wait for"},
		{"max_batch_wait too long", func(c *Config) { c.MaxBatchItems, c.MaxBatchWait = 10, time.Hour }, "max_batch_wait must be between 0 and 1m0s, got 1h0m0s"},
		{"shutdown_timeout zero", func(c *Config) { c.ShutdownTimeout = 0 }, "shutdown_timeout must be between 1ms and 1h0m0s, got 0s"},
		{"directory", withStorage(func(s *StorageConfig) { s.Directory = "" }), "storage: directory must be set"},
		{"capacity", withStorage(func(s *StorageConfig) { s.CapacityMiB = 0 }), "storage: capacity_mib must be between 1 and 1048576, got 0"},
		{"mode", withStorage(func(s *StorageConfig) { s.Mode = "wal" }), `storage: mode must be "overflow" or "write_ahead", got "wal"`},
		{"fsync", withStorage(func(s *StorageConfig) { s.Fsync = "sometimes" }), `storage: fsync must be "always", "interval" or "never", got "sometimes"`},
		{"fsync_interval", withStorage(func(s *StorageConfig) { s.FsyncInterval = time.Hour }), "storage: fsync_interval must be between 1ms and 1m0s, got 1h0m0s"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := createDefaultConfig().(*Config)
			tt.mutate(cfg)
			assert.EqualError(t, xconfmap.Validate(cfg), tt.want)
		})
	}
}

// loadTestConfig unmarshals the testdata/config.yaml entry of the processor named name.
func loadTestConfig(t *testing.T, name string) *Config {
	t.Helper()
	cm, err := confmaptest.LoadConf(filepath.Join("testdata", "config.yaml"))
	require.NoError(t, err)
	sub, err := cm.Sub(component.NewIDWithName(metadata.Type, name).String())
	require.NoError(t, err)
	cfg := createDefaultConfig().(*Config)
	require.NoError(t, sub.Unmarshal(cfg))
	return cfg
}

// TestDeprecatedKeys: buffer and max_batch_spans, the old names of queue_size and
// max_batch_items, still set them, and give the same Config apart from the record that they were
// used; both names of a setting together are refused.
func TestDeprecatedKeys(t *testing.T) {
	current := loadTestConfig(t, "custom")
	old := loadTestConfig(t, "deprecated_key")
	require.NoError(t, xconfmap.Validate(old))
	assert.Equal(t, []renamedKeyUse{{renamedKey: renamedKeys[0]}, {renamedKey: renamedKeys[1]}}, old.renamed)
	assert.Equal(t, 500, old.QueueSize)
	assert.Equal(t, 2048, old.MaxBatchItems)
	old.renamed = nil
	assert.Equal(t, current, old)

	for name, want := range map[string]string{
		"both_keys":       "buffer and queue_size are both set: buffer is the deprecated name of queue_size, keep queue_size only",
		"both_batch_keys": "max_batch_spans and max_batch_items are both set: max_batch_spans is the deprecated name of max_batch_items, keep max_batch_items only",
	} {
		require.EqualError(t, xconfmap.Validate(loadTestConfig(t, name)), want, name)
	}

	zero := createDefaultConfig().(*Config)
	zero.QueueSize, zero.MaxBatchItems = 0, -1
	zero.renamed = []renamedKeyUse{{renamedKey: renamedKeys[0]}, {renamedKey: renamedKeys[1]}}
	assert.EqualError(t, xconfmap.Validate(zero), "buffer (now queue_size) must be between 1 and 1000000, got 0\n"+
		"max_batch_spans (now max_batch_items) must be between 0 and 1000000, got -1")
}

// TestDeprecatedKeysWarnOnce: a configuration with the old keys logs one warning per key at Start
// that names the new key; one with the new keys logs none.
func TestDeprecatedKeysWarnOnce(t *testing.T) {
	for _, tt := range []struct {
		name     string
		warnings int
	}{{"deprecated_key", 2}, {"custom", 0}} {
		t.Run(tt.name, func(t *testing.T) {
			core, logs := observer.New(zapcore.WarnLevel)
			set := processortest.NewNopSettings(metadata.Type)
			set.Logger = zap.New(core)
			p, err := NewFactory().CreateTraces(context.Background(), set, loadTestConfig(t, tt.name), consumertest.NewNop())
			require.NoError(t, err)
			require.NoError(t, p.Start(context.Background(), componenttest.NewNopHost()))
			require.NoError(t, p.Shutdown(context.Background()))
			warnings := logs.FilterMessageSnippet("is deprecated and will be removed: rename it to").All()
			require.Len(t, warnings, tt.warnings)
			assert.Equal(t, tt.warnings, logs.Len(), "no other warning")
		})
	}
}
