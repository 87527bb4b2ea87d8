package helm

import (
	"encoding/json"
	"os"
	"reflect"
	"testing"

	"sigs.k8s.io/yaml" //nolint:depguard // decodes as Helm and Kubernetes do, through JSON (k8s API types carry json tags only); go.yaml.in/yaml cannot
)

// TestDefaultConfigFollowsConfigs: the chart's default `config` is configs/default.yaml without
// the buffer's disk storage (the chart's default mode has no volume for it). A change to
// configs/default.yaml must be carried into charts/tracegate/values.yaml.
func TestDefaultConfigFollowsConfigs(t *testing.T) {
	b, err := os.ReadFile("../../configs/default.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var want map[string]any
	if err := yaml.Unmarshal(b, &want); err != nil {
		t.Fatal(err)
	}
	buffer := want["processors"].(map[string]any)["buffer"].(map[string]any)
	delete(buffer, "storage")
	got := readValues(t, chartDir+"/values.yaml")["config"]
	if !reflect.DeepEqual(got, want) {
		g, _ := json.MarshalIndent(got, "", "  ")
		w, _ := json.MarshalIndent(want, "", "  ")
		t.Errorf("values.yaml config differs from configs/default.yaml (less processors.buffer.storage):\n%s\n%s",
			firstDiff(string(w), string(g), "configs/default.yaml", "values.yaml config  "), "update charts/tracegate/values.yaml, then make helm-examples")
	}
}
