package elasticmappingprocessor

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/confmap/confmaptest"
	"go.opentelemetry.io/collector/confmap/xconfmap"

	"github.com/tracegate/tracegate/processor/elasticmappingprocessor/internal/metadata"
)

func TestLoadConfig(t *testing.T) {
	cm, err := confmaptest.LoadConf(filepath.Join("testdata", "config.yaml"))
	require.NoError(t, err)
	for _, tt := range []struct {
		name    string
		want    *Config
		wantErr string
	}{
		{"", &Config{Mode: "otel", ECSDuration: true, ECSErrors: true}, ""},
		{"ecs", &Config{Mode: "ecs", ECSDuration: true, ECSErrors: true}, ""},
		{"ecs_bare", &Config{Mode: "ecs"}, ""},
		{"document_ids", &Config{Mode: "otel", ECSDuration: true, ECSErrors: true, DocumentIDs: true}, ""},
		{"apm_inputs", &Config{Mode: "otel", ECSDuration: true, ECSErrors: true, APMInputs: true}, ""},
		{"bad", nil, `mode must be one of otel, ecs, none, raw, got "bodymap"`},
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
