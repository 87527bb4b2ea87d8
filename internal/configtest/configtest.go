// Package configtest loads a component's test configuration the way the collector does: one
// section of a YAML file, by component id, unmarshalled over the component's defaults.
package configtest

import (
	"testing"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/confmap/confmaptest"
)

// Load unmarshals the section id of the YAML file at path over defaults and returns it.
func Load[C any](tb testing.TB, path string, id component.ID, defaults *C) *C {
	tb.Helper()
	cm, err := confmaptest.LoadConf(path)
	require.NoError(tb, err)
	sub, err := cm.Sub(id.String())
	require.NoError(tb, err)
	require.NoError(tb, sub.Unmarshal(defaults))
	return defaults
}
