package readylogextension

import (
	"context"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/extension"

	"github.com/tracegate/tracegate/extension/readylogextension/internal/metadata"
)

// NewFactory returns the readylog extension factory.
func NewFactory() extension.Factory {
	return extension.NewFactory(metadata.Type, createDefaultConfig, create, metadata.ExtensionStability)
}

func createDefaultConfig() component.Config {
	return &Config{Level: "warn"}
}

func create(_ context.Context, set extension.Settings, cfg component.Config) (extension.Extension, error) {
	return newReadyLog(set.Logger, cfg.(*Config).Level), nil
}
