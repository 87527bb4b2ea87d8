package apmmetricsconnector

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/confmap/confmaptest"
	"go.opentelemetry.io/collector/confmap/xconfmap"

	"github.com/tracegate/tracegate/connector/apmmetricsconnector/internal/metadata"
)

func TestLoadConfig(t *testing.T) {
	cm, err := confmaptest.LoadConf(filepath.Join("testdata", "config.yaml"))
	require.NoError(t, err)
	durable := createDefaultConfig()
	durable.Aggregation.Directory = "/var/lib/tracegate/buffer/apm"
	durable.Aggregation.MetadataKeys = []string{"X-Tenant"}
	durable.Aggregation.Limits.ResourceLimit.MaxCardinality = 500
	durable.CustomResourceAttributes = []string{"k8s.namespace.name"}
	durable.CustomSpanAttributes = []string{"customer.tier"}
	durable.FlushInterval = 5 * time.Second
	durable.MaxPendingSeries = 2000
	for _, tt := range []struct {
		name    string
		want    *Config
		wantErr string
	}{
		{"", createDefaultConfig(), ""},
		{"durable", durable, ""},
		{"bad_flush", nil, "flush_interval 7s must divide the shortest aggregation interval 1m0s"},
		{"zero_flush", nil, "flush_interval must be positive, got 0s\nmax_pending_series must be positive, got 0"},
		{"bad_intervals", nil, "aggregation intervals must be in increasing order: 1m0s after 10m0s"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cfg := createDefaultConfig()
			sub, err := cm.Sub(component.NewIDWithName(metadata.Type, tt.name).String())
			require.NoError(t, err)
			require.NoError(t, sub.Unmarshal(cfg))
			if tt.wantErr != "" {
				assert.ErrorContains(t, xconfmap.Validate(cfg), tt.wantErr)
				return
			}
			require.NoError(t, xconfmap.Validate(cfg))
			assert.Equal(t, tt.want, cfg)
		})
	}
}
