package readylogextension

import (
	"context"
	"os"
	"path/filepath"
	"runtime/debug"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/confmap/confmaptest"
	"go.opentelemetry.io/collector/confmap/xconfmap"
	"go.opentelemetry.io/collector/extension/extensiontest"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/tracegate/tracegate/extension/readylogextension/internal/metadata"
	"github.com/tracegate/tracegate/internal/gcdefaults"
	"github.com/tracegate/tracegate/internal/readiness"
)

func TestLoadConfig(t *testing.T) {
	cm, err := confmaptest.LoadConf(filepath.Join("testdata", "config.yaml"))
	require.NoError(t, err)
	for _, tt := range []struct {
		name, want, wantErr string
		gcDefaults          bool
	}{
		{name: "", want: "warn", gcDefaults: true},
		{name: "info", want: "info", gcDefaults: true},
		{name: "nogc", want: "warn", gcDefaults: false},
		{name: "bad", wantErr: `level must be info or warn, got "debug"`},
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
			assert.Equal(t, tt.gcDefaults, cfg.GCDefaults)
		})
	}
}

// TestReadyLine: one line at the configured level, after Ready, listing the addresses the
// receivers reported (the ddtrace receiver's bound port, not the 0 of its configuration), the
// configured addresses of the pipelines' receivers that report nothing (otlp, jaeger; an unused
// receiver left out) and the mode of each buffer that reported, once however many signals it runs.
func TestReadyLine(t *testing.T) {
	for _, level := range []string{"warn", "info"} {
		t.Run(level, func(t *testing.T) {
			core, logs := observer.New(zapcore.InfoLevel)
			set := extensiontest.NewNopSettings(metadata.Type)
			set.Logger = zap.New(core)
			ext, err := NewFactory().Create(context.Background(), set, &Config{Level: level})
			require.NoError(t, err)
			host := extensionsHost{component.MustNewID("readylog"): ext}
			require.NoError(t, ext.Start(context.Background(), host))
			conf, err := confmaptest.LoadConf(filepath.Join("testdata", "collector.yaml"))
			require.NoError(t, err)
			rl := ext.(*readyLog)
			require.NoError(t, rl.NotifyConfig(context.Background(), conf))

			// What the components' Start report, through the host as they find the extension.
			readiness.ReportListener(host, readiness.Listener{ID: component.MustNewID("ddtrace"), Addr: "0.0.0.0:41234"})
			for range 3 { // one buffer processor per signal
				readiness.ReportBuffer(host, readiness.Buffer{ID: component.MustNewID("buffer"), Mode: readiness.ModeMemory})
				readiness.ReportBuffer(host, readiness.Buffer{
					ID: component.MustNewIDWithName("buffer", "disk"), Mode: "write_ahead", Directory: "/var/lib/tracegate/buffer",
				})
			}
			assert.Equal(t, 0, logs.Len(), "nothing before the pipelines are ready")
			require.NoError(t, rl.Ready())
			require.NoError(t, rl.NotReady())
			require.NoError(t, ext.Shutdown(context.Background()))

			require.Equal(t, 1, logs.Len())
			line := logs.All()[0]
			assert.Equal(t, "tracegate is ready", line.Message)
			assert.Equal(t, level, line.Level.String())
			fields := line.ContextMap()
			assert.Equal(t, []any{
				"ddtrace=0.0.0.0:41234",
				"jaeger/protocols/thrift_compact=0.0.0.0:6831",
				"otlp/protocols/grpc=0.0.0.0:4317",
				"otlp/protocols/http=0.0.0.0:4318",
			}, fields["endpoints"])
			assert.Equal(t, []any{"buffer=memory", "buffer/disk=write_ahead /var/lib/tracegate/buffer"}, fields["buffers"])
		})
	}
}

// TestReadyLineWithoutConfig: without the configuration the line lists what was reported.
func TestReadyLineWithoutConfig(t *testing.T) {
	core, logs := observer.New(zapcore.InfoLevel)
	rl := newReadyLog(zap.New(core), "warn")
	rl.Listening(readiness.Listener{ID: component.MustNewIDWithName("elasticapm", "a"), Addr: "127.0.0.1:8200"})
	require.NoError(t, rl.Ready())
	require.Equal(t, 1, logs.Len())
	fields := logs.All()[0].ContextMap()
	assert.Equal(t, []any{"elasticapm/a=127.0.0.1:8200"}, fields["endpoints"])
	assert.Equal(t, []any{}, fields["buffers"])
}

// TestConfiguredEndpoints: the addresses configured for the pipelines' receivers that reported
// none: every endpoint or host_port key at any depth, named by its path; receivers no pipeline
// uses, connectors and reported receivers left out.
func TestConfiguredEndpoints(t *testing.T) {
	conf := map[string]any{
		"receivers": map[string]any{
			"zipkin":        map[string]any{"endpoint": "0.0.0.0:9411", "parse_string_tags": false},
			"jaeger/remote": map[string]any{"protocols": map[string]any{"grpc": map[string]any{"endpoint": "0.0.0.0:14250"}}, "remote_sampling": map[string]any{"host_port": "0.0.0.0:5778"}},
			"ddtrace":       map[string]any{"endpoint": "0.0.0.0:8126"},
			"otlp":          map[string]any{"protocols": map[string]any{"grpc": nil}},
			"unused":        map[string]any{"endpoint": "0.0.0.0:9999"},
		},
		"service": map[string]any{"pipelines": map[string]any{
			"traces":   map[string]any{"receivers": []any{"zipkin", "jaeger/remote", "ddtrace", "otlp"}},
			"metrics":  map[string]any{"receivers": []any{"forward"}},
			"logs/odd": "not a pipeline",
		}},
	}
	assert.Equal(t, []string{
		"jaeger/remote/protocols/grpc=0.0.0.0:14250",
		"jaeger/remote/remote_sampling=0.0.0.0:5778",
		"zipkin=0.0.0.0:9411",
	}, configuredEndpoints(conf, map[string]bool{"ddtrace": true}))
	assert.Empty(t, configuredEndpoints(nil, nil))
}

type extensionsHost map[component.ID]component.Component

func (h extensionsHost) GetExtensions() map[component.ID]component.Component { return h }

// TestReadyLineSaysTheGCSettings: the line names the garbage collector's settings; with
// gc_defaults off, that they were left to Go and the environment (and GOGC is untouched).
func TestReadyLineSaysTheGCSettings(t *testing.T) {
	prev := debug.SetGCPercent(100)
	t.Cleanup(func() { debug.SetGCPercent(prev) })
	for _, tc := range []struct {
		gcDefaults bool
		want       string
	}{
		{false, "as Go or the environment set it (gc_defaults: false)"},
		{true, gcdefaults.Choose(os.LookupEnv, gcdefaults.CgroupMemoryLimit("/sys/fs/cgroup"), gcdefaults.Chosen).String()},
	} {
		core, logs := observer.New(zapcore.InfoLevel)
		set := extensiontest.NewNopSettings(metadata.Type)
		set.Logger = zap.New(core)
		ext, err := NewFactory().Create(context.Background(), set, &Config{Level: "warn", GCDefaults: tc.gcDefaults})
		require.NoError(t, err)
		require.NoError(t, ext.(*readyLog).Ready())
		require.Len(t, logs.All(), 1)
		assert.Equal(t, tc.want, logs.All()[0].ContextMap()["gc"])
		if !tc.gcDefaults {
			assert.Equal(t, 100, debug.SetGCPercent(100), "gc_defaults false changed GOGC")
		}
	}
}
