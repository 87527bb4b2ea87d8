package configtest

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"go.opentelemetry.io/collector/component"
)

type sample struct {
	Endpoint string `mapstructure:"endpoint"`
	Limit    int    `mapstructure:"limit"`
}

func TestLoadKeepsDefaultsAndTakesTheSection(t *testing.T) {
	path := filepath.Join(t.TempDir(), "config.yaml")
	yaml := "thing:\nthing/custom:\n  limit: 7\nother/custom:\n  limit: 9\n"
	if err := os.WriteFile(path, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	typ := component.MustNewType("thing")
	got := Load(t, path, component.NewIDWithName(typ, "custom"), &sample{Endpoint: "localhost:1", Limit: 1})
	assert.Equal(t, &sample{Endpoint: "localhost:1", Limit: 7}, got)
	assert.Equal(t, &sample{Endpoint: "localhost:1", Limit: 1}, Load(t, path, component.NewID(typ), &sample{Endpoint: "localhost:1", Limit: 1}))
}
