package helm

import (
	"encoding/json"
	"os"
	"path"
	"reflect"
	"regexp"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml" //nolint:depguard // decodes as Helm and Kubernetes do, through JSON (k8s API types carry json tags only); go.yaml.in/yaml cannot
)

const (
	apmOverlay        = "../../configs/elasticsearch/apm.yaml"
	apmClassicOverlay = "../../configs/elasticsearch/apm-classic.yaml"
	apmDurableOverlay = "../../configs/elasticsearch/apm-durable.yaml"
	apmDirKey         = "connectors.elasticapm.aggregation.directory"
)

// readConfig parses a tracegate config file.
func readConfig(t *testing.T, file string) map[string]any {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := yaml.Unmarshal(b, &m); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	return m
}

// mergeConfig merges src over dst as the collector merges a second --config: maps are merged
// key by key, anything else (lists, scalars, null) is replaced.
func mergeConfig(dst, src map[string]any) map[string]any {
	for k, sv := range src {
		if sm, ok := sv.(map[string]any); ok {
			if dm, ok := dst[k].(map[string]any); ok {
				mergeConfig(dm, sm)
				continue
			}
		}
		dst[k] = sv
	}
	return dst
}

// renderedConfig renders values and returns the workload's pod and the parsed config.yaml of the
// chart's ConfigMap.
func renderedConfig(t *testing.T, vals string) (*objects, map[string]any, string) {
	t.Helper()
	o := renderObjects(t, vals)
	if len(o.configMaps) != 1 {
		t.Fatalf("%d ConfigMaps, want the config's only", len(o.configMaps))
	}
	text := o.configMaps[0].Data["config.yaml"]
	return o, values(t, text), text
}

var envRef = regexp.MustCompile(`\$\{env:([A-Z_]+)(:-[^}]*)?\}`)

// expandEnv resolves ${env:NAME} and ${env:NAME:-default} with the container's literal variables.
func expandEnv(s string, e map[string]corev1.EnvVar) string {
	return envRef.ReplaceAllStringFunc(s, func(ref string) string {
		m := envRef.FindStringSubmatch(ref)
		if v, ok := e[m[1]]; ok && v.ValueFrom == nil {
			return v.Value
		}
		return strings.TrimPrefix(m[2], ":-")
	})
}

// TestAPMFollowsConfigs: apm.enabled renders the config it renders without it plus
// configs/elasticsearch/apm.yaml, merged as the collector merges `--config base --config apm.yaml`;
// in statefulset mode with a disk buffer, plus apm-durable.yaml instead, with the connector's
// aggregation state under the buffer's directory on the pod's claim. Without a disk buffer the
// state stays in memory (no aggregation.directory). Each config passes `tracegate validate`.
func TestAPMFollowsConfigs(t *testing.T) {
	bin := requireBinary(t)
	memory, durable := readConfig(t, apmOverlay), readConfig(t, apmDurableOverlay)

	// apm-durable.yaml is apm.yaml with the state under the buffer's directory of durable.yaml:
	// the chart's durable case follows it, with the buffer's directory of the rendered config.
	durableDir, _ := dig(durable, "connectors", "apmmetrics", "aggregation", "directory").(string)
	bufferDir, _ := dig(readConfig(t, "../../configs/durable.yaml"), "processors", "buffer", "storage", "directory").(string)
	if durableDir == "" || durableDir != bufferDir+"/apm" {
		t.Fatalf("%s: %s is %q, want %q (the buffer's directory of configs/durable.yaml + /apm)", apmDurableOverlay, apmDirKey, durableDir, bufferDir+"/apm")
	}
	delete(dig(durable, "connectors", "apmmetrics").(map[string]any), "aggregation")
	if !reflect.DeepEqual(durable, memory) {
		t.Fatalf("%s without %s differs from %s: keep the two alike", apmDurableOverlay, apmDirKey, apmOverlay)
	}

	noDiskBuffer := "bufferStorage: {volumeName: buffer, mountPath: /var/lib/tracegate/buffer, statefulset: {enabled: false, size: 10Gi}}\n"
	for _, tc := range []struct {
		name, values string
		onDisk       string // the connector's directory as rendered, "" for memory
	}{
		{"deployment", "", ""},
		{"daemonset", "mode: daemonset", ""},
		{"daemonset with a hostPath buffer", "mode: daemonset\nextraVolumes: [{name: buffer, hostPath: {path: /var/lib/tracegate-agent}}]\n" + storageConfig, ""},
		{"statefulset without a disk buffer", "mode: statefulset\n" + noDiskBuffer, ""},
		{"statefulset", "mode: statefulset", "${env:TRACEGATE_BUFFER_DIR}/apm"},
		{"statefulset with its own buffer storage", "mode: statefulset\n" + storageConfig + bufferClaim, "${env:TRACEGATE_BUFFER_DIR}/apm"},
		{"statefulset, buffer in a subdirectory", "mode: statefulset\n" + noDiskBuffer + bufferClaim + `
config:
  processors:
    buffer:
      storage: {directory: /var/lib/tracegate/buffer/spool/, capacity_mib: 1024}
`, "/var/lib/tracegate/buffer/spool/apm"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, base, _ := renderedConfig(t, tc.values)
			o, got, text := renderedConfig(t, tc.values+"\napm: {enabled: true}\n")

			overlay := readConfig(t, apmOverlay)
			if tc.onDisk != "" {
				overlay = readConfig(t, apmDurableOverlay)
				dig(overlay, "connectors", "apmmetrics", "aggregation").(map[string]any)["directory"] = tc.onDisk
			}
			want := mergeConfig(base, overlay)
			if !reflect.DeepEqual(got, want) {
				g, _ := json.MarshalIndent(got, "", "  ")
				w, _ := json.MarshalIndent(want, "", "  ")
				t.Fatalf("apm.enabled renders a config other than the base plus %s:\n%s", map[bool]string{false: apmOverlay, true: apmDurableOverlay}[tc.onDisk != ""],
					firstDiff(string(w), string(g), "base + overlay", "rendered      "))
			}

			pod := onlyPod(t, o)
			c := pod.Containers[0]
			dir, set := dig(got, "connectors", "apmmetrics", "aggregation", "directory").(string)
			if tc.onDisk == "" {
				if set {
					t.Errorf("%s = %q, want the state in memory", apmDirKey, dir)
				}
			} else {
				// The directory, as the container resolves it, is on the buffer's claim.
				abs := expandEnv(dir, env(c))
				claims := map[string]bool{}
				for _, pvc := range o.statefulSets[0].Spec.VolumeClaimTemplates {
					claims[pvc.Name] = true
				}
				onClaim := false
				for _, m := range c.VolumeMounts {
					if claims[m.Name] && !m.ReadOnly && strings.HasPrefix(path.Clean(abs)+"/", path.Clean(m.MountPath)+"/") {
						onClaim = true
					}
				}
				if !path.IsAbs(abs) || !onClaim {
					t.Errorf("%s = %q (%q in the container) is on no claim of the pod: mounts %+v", apmDirKey, dir, abs, c.VolumeMounts)
				}
			}
			validateConfig(t, bin, text, c.Env)
		})
	}
}

// TestAPMClassicFollowsConfigs: apm.mode classic renders the config it renders without APM plus
// configs/elasticsearch/apm-classic.yaml, in every mode, and it passes `tracegate validate`.
func TestAPMClassicFollowsConfigs(t *testing.T) {
	bin := requireBinary(t)
	for _, tc := range []struct{ name, values string }{
		{"deployment", ""},
		{"daemonset", "mode: daemonset"},
		{"statefulset", "mode: statefulset"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, base, _ := renderedConfig(t, tc.values)
			o, got, text := renderedConfig(t, tc.values+"\napm: {enabled: true, mode: classic}\n")
			want := mergeConfig(base, readConfig(t, apmClassicOverlay))
			if !reflect.DeepEqual(got, want) {
				g, _ := json.MarshalIndent(got, "", "  ")
				w, _ := json.MarshalIndent(want, "", "  ")
				t.Fatalf("apm.mode classic renders a config other than the base plus %s:\n%s", apmClassicOverlay,
					firstDiff(string(w), string(g), "base + overlay", "rendered      "))
			}
			validateConfig(t, bin, text, onlyPod(t, o).Containers[0].Env)
		})
	}
	out, err := render(t, values(t, "apm: {enabled: true, mode: classic}"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out["tracegate/templates/NOTES.txt"], "tracegate-es-setup --mode apm-classic") {
		t.Error("NOTES.txt does not say how to check the APM integration")
	}
}

// TestAPMKeepsComponentSettings: the overlay replaces the pipelines, not the settings of the
// components in `config` (as a second --config does): a user's connector or buffer settings stay.
func TestAPMKeepsComponentSettings(t *testing.T) {
	bin := requireBinary(t)
	o, got, text := renderedConfig(t, `
apm: {enabled: true}
config:
  processors:
    buffer: {threads: 16}
  connectors:
    apmmetrics:
      aggregation:
        limits: {resource: {max_cardinality: 500}}
`)
	if v := dig(got, "processors", "buffer", "threads"); v != float64(16) {
		t.Errorf("processors.buffer.threads = %v, want 16", v)
	}
	if v := dig(got, "connectors", "apmmetrics", "aggregation", "limits", "resource", "max_cardinality"); v != float64(500) {
		t.Errorf("connectors.apmmetrics...max_cardinality = %v, want 500", v)
	}
	if v := dig(got, "processors", "elasticmapping", "mode"); v != "otel" {
		t.Errorf("processors.elasticmapping.mode = %v", v)
	}
	validateConfig(t, bin, text, onlyPod(t, o).Containers[0].Env)
}

// TestAPMRenderFailures: apm.enabled where its pipelines cannot work fails with what to do.
func TestAPMRenderFailures(t *testing.T) {
	for _, tc := range []struct{ name, values, err string }{
		{
			"own ConfigMap", "apm: {enabled: true}\nconfigMap: {create: false, existingName: mine}",
			"apm.enabled renders the APM pipeline into the chart's ConfigMap, but configMap.create is false",
		},
		{
			"ecs mapping", "apm: {enabled: true}\nconfig: {processors: {elasticmapping: {mode: ecs, ecs_duration: true, ecs_errors: true}}}",
			`apm.enabled needs the otel mapping (Kibana's APM UI reads the otel data streams), but config.processors.elasticmapping.mode is "ecs"`,
		},
		{
			"agent without the exporter", "mode: daemonset\napm: {enabled: true}\nconfig: {exporters: {elasticsearch: null, otlp_http: {endpoint: 'http://gw:4318'}}}",
			"apm.enabled: the APM pipelines write through the elasticsearch exporter, which config.exporters does not have",
		},
		{
			"no mapping processor", "apm: {enabled: true}\nconfig: {processors: {elasticmapping: null}}",
			"apm.enabled: the APM pipelines run the processor elasticmapping, which config.processors does not have",
		},
		{"schema: unknown apm value", "apm: {enabled: true, directory: /x}", "at '/apm': additional properties 'directory' not allowed"},
		{"schema: unknown apm mode", "apm: {enabled: true, mode: ecs}", "at '/apm/mode'"},
		{
			"classic with tail sampling", "apm: {enabled: true, mode: classic}\ntailSampling: {enabled: true}",
			"tailSampling.enabled with apm.mode classic",
		},
		{
			"classic without tracesampling", "apm: {enabled: true, mode: classic}\nconfig: {processors: {tracesampling: null}}",
			"apm.enabled: the APM pipelines run the processor tracesampling, which config.processors does not have",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := render(t, values(t, tc.values))
			if err == nil {
				t.Fatalf("rendered; want an error containing %q", tc.err)
			}
			if !strings.Contains(err.Error(), tc.err) {
				t.Fatalf("error %q\nwant it to contain %q", err, tc.err)
			}
		})
	}
}

// TestAPMNotes: NOTES.txt says where the connector's state is.
func TestAPMNotes(t *testing.T) {
	for vals, want := range map[string]string{
		"apm: {enabled: true}":                    "The connector's open aggregation windows are in memory",
		"apm: {enabled: true}\nmode: statefulset": "The connector's open aggregation windows are on the buffer's volume in /var/lib/tracegate/buffer/apm.",
		"mode: statefulset":                       "",
	} {
		out, err := render(t, values(t, vals))
		if err != nil {
			t.Fatalf("%q: %v", vals, err)
		}
		notes := out["tracegate/templates/NOTES.txt"]
		if want == "" && strings.Contains(notes, "Kibana APM") || want != "" && !strings.Contains(notes, want) {
			t.Errorf("%q: NOTES.txt, want %q:\n%s", vals, want, notes)
		}
	}
}
