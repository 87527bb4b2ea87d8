package zipkinreceiver

import (
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/config/confighttp"
)

// Config is the contrib zipkin receiver's: an HTTP server, and whether tag values that read as
// numbers or booleans become attributes of those types.
type Config struct {
	confighttp.ServerConfig `mapstructure:",squash"`
	// ParseStringTags makes "42" an int attribute and "true" a bool one (the translators' option).
	ParseStringTags bool `mapstructure:"parse_string_tags"`

	// prevent unkeyed literal initialization
	_ struct{}
}

var _ component.Config = (*Config)(nil)

// Validate has nothing to check: confighttp validates the server settings.
func (*Config) Validate() error { return nil }
