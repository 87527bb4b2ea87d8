package readylogextension

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/confmap/confmaptest"
	"go.opentelemetry.io/collector/confmap/xconfmap"
	"go.opentelemetry.io/collector/extension/extensiontest"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/tracegate/tracegate/extension/readylogextension/internal/metadata"
)

func TestLoadConfig(t *testing.T) {
	cm, err := confmaptest.LoadConf(filepath.Join("testdata", "config.yaml"))
	require.NoError(t, err)
	for _, tt := range []struct {
		name, want, wantErr string
	}{
		{"", "warn", ""},
		{"info", "info", ""},
		{"bad", "", `level must be info or warn, got "debug"`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cfg := createDefaultConfig().(*Config)
			sub, err := cm.Sub(component.NewIDWithName(metadata.Type, tt.name).String())
			require.NoError(t, err)
			require.NoError(t, sub.Unmarshal(cfg))
			if tt.wantErr != "" {
				require.EqualError(t, xconfmap.Validate(cfg), tt.wantErr)
				return
			}
			require.NoError(t, xconfmap.Validate(cfg))
			assert.Equal(t, tt.want, cfg.Level)
		})
	}
}

// TestReadyLine: one line at the configured level, after Ready, listing the listening addresses
// of the receivers in use and the mode of each buffer in use (unused components left out).
func TestReadyLine(t *testing.T) {
	for _, level := range []string{"warn", "info"} {
		t.Run(level, func(t *testing.T) {
			core, logs := observer.New(zapcore.InfoLevel)
			set := extensiontest.NewNopSettings(metadata.Type)
			set.Logger = zap.New(core)
			ext, err := NewFactory().Create(context.Background(), set, &Config{Level: level})
			require.NoError(t, err)
			require.NoError(t, ext.Start(context.Background(), componenttest.NewNopHost()))
			conf, err := confmaptest.LoadConf(filepath.Join("testdata", "collector.yaml"))
			require.NoError(t, err)
			rl := ext.(*readyLog)
			require.NoError(t, rl.NotifyConfig(context.Background(), conf))
			assert.Equal(t, 0, logs.Len(), "nothing before the pipelines are ready")
			require.NoError(t, rl.Ready())
			require.NoError(t, ext.Shutdown(context.Background()))

			require.Equal(t, 1, logs.Len())
			line := logs.All()[0]
			assert.Equal(t, "tracegate is ready", line.Message)
			assert.Equal(t, level, line.Level.String())
			fields := line.ContextMap()
			assert.Equal(t, []any{
				"jaeger/protocols/thrift_compact=0.0.0.0:6831",
				"otlp/protocols/grpc=0.0.0.0:4317",
				"otlp/protocols/http=0.0.0.0:4318",
			}, fields["endpoints"])
			assert.Equal(t, []any{"buffer=memory", "buffer/disk=write_ahead /var/lib/tracegate/buffer"}, fields["buffers"])
		})
	}
}
