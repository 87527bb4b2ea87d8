package apmdocsconnector

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/confmap/confmaptest"
	"go.opentelemetry.io/collector/confmap/xconfmap"

	"github.com/tracegate/tracegate/connector/apmdocsconnector/internal/metadata"
)

func TestLoadConfig(t *testing.T) {
	cm, err := confmaptest.LoadConf(filepath.Join("testdata", "config.yaml"))
	require.NoError(t, err)
	custom := createDefaultConfig()
	custom.Namespace = "production"
	custom.Aggregation = AggregationConfig{Intervals: []time.Duration{time.Minute}, Delay: 30 * time.Second, MaxServices: 50, MaxGroups: 500}
	custom.DropUnsampled, custom.DocumentIDs = false, false
	custom.Observer = ObserverConfig{Hostname: "gateway-1", Type: "tracegate", Version: "8.13.4"}
	for _, tt := range []struct {
		name    string
		want    *Config
		wantErr string
	}{
		{"", createDefaultConfig(), ""},
		{"custom", custom, ""},
		{"bad_namespace", nil, `namespace must be lowercase, got "Prod-1"`},
		{"bad_intervals", nil, "aggregation.intervals: 1m0s appears twice\n" +
			"aggregation.intervals: 500ms is not a whole number of seconds of at least 1s\n" +
			"aggregation.max_groups must be at least 1, got 0"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cfg := createDefaultConfig()
			sub, err := cm.Sub(component.NewIDWithName(metadata.Type, tt.name).String())
			require.NoError(t, err)
			require.NoError(t, sub.Unmarshal(cfg))
			if tt.wantErr != "" {
				assert.EqualError(t, xconfmap.Validate(cfg), tt.wantErr)
				return
			}
			require.NoError(t, xconfmap.Validate(cfg))
			assert.Equal(t, tt.want, cfg)
		})
	}
}

func TestNamespaceRules(t *testing.T) {
	for ns, ok := range map[string]bool{"default": true, "prod_eu.1": true, "": false, "a-b": false, "a b": false, "a*": false} {
		assert.Equal(t, ok, validNamespace(ns) == nil, ns)
	}
}

func TestNoIntervalsNoMetricsets(t *testing.T) {
	cfg := createDefaultConfig()
	cfg.Aggregation.Intervals = nil
	require.NoError(t, cfg.Validate())
	c, err := newAPMDocs(connectortestSettings(), cfg)
	require.NoError(t, err)
	assert.Nil(t, c.agg)
}
