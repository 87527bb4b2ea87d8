package ratesampler

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestValidate(t *testing.T) {
	for _, tt := range []struct {
		name   string
		modify func(*Config)
		want   string
	}{
		{"defaults", func(*Config) {}, ""},
		{"enabled with a small target", func(c *Config) { c.Enabled, c.TargetTracesPerSecond = true, 0.5 }, ""},
		{"zero target", func(c *Config) { c.TargetTracesPerSecond = 0 }, "target_traces_per_second must be greater than 0 and at most 1000000, got 0"},
		{"negative target", func(c *Config) { c.TargetTracesPerSecond = -1 }, "target_traces_per_second must be greater than 0 and at most 1000000, got -1"},
		{"NaN target", func(c *Config) { c.TargetTracesPerSecond = math.NaN() }, "target_traces_per_second must be greater than 0 and at most 1000000, got NaN"},
		{"huge target", func(c *Config) { c.TargetTracesPerSecond = 2e6 }, "target_traces_per_second must be greater than 0 and at most 1000000, got 2e+06"},
		{"no services", func(c *Config) { c.MaxServices = 0 }, "max_services must be between 1 and 1000000, got 0"},
		{"too many services", func(c *Config) { c.MaxServices = 2_000_000 }, "max_services must be between 1 and 1000000, got 2000000"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cfg := DefaultConfig()
			tt.modify(&cfg)
			if tt.want == "" {
				assert.NoError(t, cfg.Validate())
				return
			}
			assert.EqualError(t, cfg.Validate(), tt.want)
		})
	}
}

func TestDefaultConfigIsTheAgents(t *testing.T) {
	cfg := DefaultConfig()
	assert.False(t, cfg.Enabled)
	assert.InDelta(t, 10.0, cfg.TargetTracesPerSecond, 0, "apm_config.max_traces_per_second")
	assert.Equal(t, 5000, cfg.MaxServices, "the agent's catalog size")
}
