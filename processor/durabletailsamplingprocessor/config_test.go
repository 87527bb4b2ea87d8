package durabletailsamplingprocessor

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/confmap/xconfmap"

	"github.com/tracegate/tracegate/internal/configtest"
	"github.com/tracegate/tracegate/processor/durabletailsamplingprocessor/internal/metadata"
)

func loadConfig(t *testing.T, name string) *Config {
	t.Helper()
	return configtest.Load(t, filepath.Join("testdata", "config.yaml"), component.NewIDWithName(metadata.Type, name), createDefaultConfig().(*Config))
}

func TestLoadConfig(t *testing.T) {
	assert.Equal(t, createDefaultConfig(), loadConfig(t, ""))

	tg := loadConfig(t, "tracegate")
	require.NoError(t, xconfmap.Validate(tg))
	assert.Equal(t, "always", tg.Storage.Fsync)
	assert.Equal(t, map[string]int64{"batch": 60000}, tg.Policies[1].Latency.ServiceThresholdMs)

	contrib := loadConfig(t, "contrib")
	require.NoError(t, xconfmap.Validate(contrib))
	assert.Equal(t, 30*time.Second, contrib.DecisionWait)
	assert.Equal(t, 500000, contrib.DecisionCache.SampledCacheSize)
	assert.True(t, contrib.SampleOnFirstMatch)
	assert.Len(t, contrib.Policies[0].Drop.SubPolicies, 1)
	assert.Len(t, contrib.Policies[1].And.SubPolicies, 2)
}

func TestValidateConfig(t *testing.T) {
	tests := map[string]string{
		"":               "at least one policy", // the default has none: the user says what to keep
		"no_policies":    "at least one policy",
		"unsupported":    `type "ottl_condition" is not supported here`,
		"bad_fsync":      `fsync "sometimes"`,
		"short_max_wait": "max_trace_wait",
	}
	for name, want := range tests {
		t.Run(name, func(t *testing.T) {
			assert.ErrorContains(t, xconfmap.Validate(loadConfig(t, name)), want)
		})
	}
}
