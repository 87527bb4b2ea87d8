package readylogextension

import (
	"context"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/extension"

	"github.com/tracegate/tracegate/extension/readylogextension/internal/metadata"
	"github.com/tracegate/tracegate/internal/gcdefaults"
)

// NewFactory returns the readylog extension factory.
func NewFactory() extension.Factory {
	return extension.NewFactory(metadata.Type, createDefaultConfig, create, metadata.ExtensionStability)
}

func createDefaultConfig() component.Config {
	return &Config{Level: "warn", GCDefaults: true}
}

// create applies the GC defaults here, as the service builds its extensions: before any pipeline
// starts, so that the whole run has them.
func create(_ context.Context, set extension.Settings, cfg component.Config) (extension.Extension, error) {
	c := cfg.(*Config)
	gc := "as Go or the environment set it (gc_defaults: false)"
	if c.GCDefaults {
		gc = gcdefaults.ApplyDefaults().String()
	}
	r := newReadyLog(set.Logger, c.Level)
	r.gc = gc
	return r, nil
}
