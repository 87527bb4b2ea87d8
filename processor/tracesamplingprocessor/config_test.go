package tracesamplingprocessor

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/confmap/xconfmap"

	"github.com/tracegate/tracegate/internal/configtest"
	"github.com/tracegate/tracegate/processor/tracesamplingprocessor/internal/metadata"
)

func loadConfig(t *testing.T, name string) *Config {
	t.Helper()
	return configtest.Load(t, filepath.Join("testdata", "config.yaml"), component.NewIDWithName(metadata.Type, name), createDefaultConfig().(*Config))
}

func TestLoadConfig(t *testing.T) {
	def := createDefaultConfig().(*Config)
	assert.Equal(t, def, loadConfig(t, ""))
	require.NoError(t, xconfmap.Validate(def))

	keepAll := loadConfig(t, "keep_everything")
	assert.False(t, keepAll.Datadog.HonourPriority)
	assert.False(t, keepAll.Elastic.DropUnsampled)

	dk := loadConfig(t, "datakit")
	require.NoError(t, xconfmap.Validate(dk))
	assert.Equal(t, RareSamplerConfig{Enabled: true, TracesPerSecond: 2, Cooldown: time.Minute, Cardinality: 50}, dk.Datadog.RareSampler)
	assert.InDelta(t, 5, dk.Datadog.ErrorsPerSecond, 0)
	assert.Equal(t, DatakitConfig{
		SamplingRate:     0.1,
		CloseResource:    map[string][]string{"*": {"^GET /health"}, "checkout": {"^SELECT 1$"}},
		KeepRareResource: true,
		OmitErrStatus:    []string{"404", "499"},
	}, dk.Datakit)
}

func TestInvalidConfig(t *testing.T) {
	tests := []struct {
		name string
		errs []string
	}{
		{"bad_rate", []string{"datakit.sampling_rate must be above 0 and at most 1, got 1.5"}},
		{"bad_regex", []string{"datakit.close_resource[\"*\"]: \"(unclosed\" is not a regular expression"}},
		{"bad_rare", []string{
			"datadog.errors_per_second must be between 0 and 1000000, got -1",
			"datadog.rare_sampler.traces_per_second must be above 0 and at most 1000000, got 0",
			"datadog.rare_sampler.cooldown must be positive, got 0s",
			"datadog.rare_sampler.cardinality must be between 1 and 1000000, got 0",
		}},
		{"bad_status", []string{
			"datakit.omit_err_status: \"40x\" is not an HTTP status code",
			"datakit.omit_err_status: \"700\" is not an HTTP status code",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := xconfmap.Validate(loadConfig(t, tt.name))
			require.Error(t, err)
			for _, want := range tt.errs {
				assert.Contains(t, err.Error(), want)
			}
		})
	}
}

func TestZeroRateIsRefused(t *testing.T) {
	cfg := createDefaultConfig().(*Config)
	cfg.Datakit.SamplingRate = 0
	assert.ErrorContains(t, cfg.Validate(), "datakit.sampling_rate must be above 0 and at most 1, got 0")
}
