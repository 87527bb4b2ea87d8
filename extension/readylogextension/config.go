package readylogextension

import (
	"fmt"

	"go.opentelemetry.io/collector/component"
)

// Config configures the extension.
type Config struct {
	// Level is the level of the ready line: info or warn (default warn, so that it shows with the
	// log level tracegate's configs run at).
	Level string `mapstructure:"level"`

	// GCDefaults applies tracegate's garbage collector defaults (GOGC, and GOMEMLIMIT under a
	// cgroup memory limit) when the environment sets neither GOGC nor GOMEMLIMIT (default true).
	GCDefaults bool `mapstructure:"gc_defaults"`

	// prevent unkeyed literal initialization
	_ struct{}
}

var _ component.Config = (*Config)(nil)

// Validate checks the level.
func (c *Config) Validate() error {
	switch c.Level {
	case "info", "warn":
		return nil
	}
	return fmt.Errorf("level must be info or warn, got %q", c.Level)
}
