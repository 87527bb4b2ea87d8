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
	durable.Aggregation.Limits.Resource.MaxCardinality = 500
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
		{"bad_flush", nil, "flush_interval must divide the shortest of aggregation.intervals (1m0s), got 7s"},
		{"zero_flush", nil, "flush_interval must be at least 1s, got 0s\nmax_pending_series must be between 1 and 10000000, got 0"},
		{"short_flush", nil, "flush_interval must be at least 1s, got 500ms"},
		{"huge_pending", nil, "max_pending_series must be between 1 and 10000000, got 20000000"},
		{"bad_intervals", nil, "aggregation.intervals must increase, got 1m0s after 10m0s"},
		{"odd_intervals", nil, "aggregation.intervals must be whole minutes from 1m to 24h0m0s, got 1m30s\n" +
			"aggregation.intervals must be whole minutes from 1m to 24h0m0s, got 25h0m0s"},
		{"not_multiple", nil, "aggregation.intervals must be multiples of the first (2m0s), got 3m0s"},
		{"bad_names", nil, "custom_resource_attributes must not hold an empty name\n" +
			"custom_span_attributes names \"customer.tier\" twice\n" +
			"aggregation.metadata_keys names \"x-tenant\" twice"},
		{"negative_limit", nil, "aggregation.limits.datapoint.max_cardinality must be 0 (no cap) or more, got -1"},
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
