package helm

import (
	"os"
	"strings"
	"testing"
)

// TestReadmeValues: the chart README's values table names every top-level value and every example.
func TestReadmeValues(t *testing.T) {
	b, err := os.ReadFile(chartDir + "/README.md")
	if err != nil {
		t.Fatal(err)
	}
	readme := string(b)
	for key := range readValues(t, chartDir+"/values.yaml") {
		// "`key`" or "`key.sub`": a prefix alone would let `config` pass on `configMap`.
		if !strings.Contains(readme, "`"+key+"`") && !strings.Contains(readme, "`"+key+".") {
			t.Errorf("charts/tracegate/README.md does not document the value %q", key)
		}
	}
	for _, name := range exampleCases(t) {
		if !strings.Contains(readme, "`"+name+"`") {
			t.Errorf("charts/tracegate/README.md does not list the example %q", name)
		}
	}
}
