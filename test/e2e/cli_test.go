package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

func runBinary(t *testing.T, env []string, args ...string) (string, error) {
	t.Helper()
	cmd := exec.Command(binary(t), args...)
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// TestVersion checks that the binary reports the version of builder-config.yaml.
func TestVersion(t *testing.T) {
	manifest, err := os.ReadFile(filepath.Join(repoRoot, "builder-config.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^\s+version:\s*"?([^"\s]+)"?`).FindSubmatch(manifest)
	if m == nil {
		t.Fatal("no dist.version in builder-config.yaml")
	}
	out, err := runBinary(t, nil, "--version")
	if err != nil {
		t.Fatalf("--version: %v\n%s", err, out)
	}
	if want := "tracegate version " + string(m[1]); strings.TrimSpace(out) != want {
		t.Errorf("--version printed %q, want %q", strings.TrimSpace(out), want)
	}
}

// TestComponents checks that every component of the distribution is built in.
func TestComponents(t *testing.T) {
	out, err := runBinary(t, nil, "components")
	if err != nil {
		t.Fatalf("components: %v\n%s", err, out)
	}
	sections := map[string][]string{}
	section := ""
	for line := range strings.SplitSeq(out, "\n") {
		if !strings.HasPrefix(line, " ") && strings.HasSuffix(line, ":") {
			section = strings.TrimSuffix(line, ":")
		}
		if name, ok := strings.CutPrefix(strings.TrimSpace(line), "- name: "); ok {
			sections[section] = append(sections[section], name)
		}
	}
	want := map[string][]string{
		"receivers": {"datakit", "ddtrace", "elasticapm", "jaeger", "kafka", "otlp", "zipkin"},
		"processors": {
			"attributes", "batch", "buffer", "durable_tail_sampling", "elasticapm", "elasticmapping", "filter", "memory_limiter",
			"probabilistic_sampler", "redaction", "resource", "resourcedetection", "tail_sampling", "tracesampling", "transform",
		},
		// k8s_attributes is built in but not listed, as otlp_grpc and otlp_http are not (deprecated aliases).
		"connectors": {"apmdocs", "apmmetrics", "elasticapm", "forward"},
		// otlp_grpc and otlp_http are built in but not listed: see testdata/otlp-exporters.yaml.
		"exporters":  {"debug", "elasticsearch", "elasticsearch_documents", "kafka", "loadbalancing"},
		"extensions": {"basicauth", "bearertokenauth", "file_storage", "health_check", "pprof", "readylog", "zpages"},
	}
	for kind, names := range want {
		if got := strings.Join(sections[kind], ","); got != strings.Join(names, ",") {
			t.Errorf("%s: got [%s], want [%s]", kind, got, strings.Join(names, ","))
		}
	}
	for _, scheme := range []string{"env", "file", "http", "https", "yaml"} {
		if !regexp.MustCompile(`(?m)scheme: ` + scheme + `$`).MatchString(out) {
			t.Errorf("confmap provider %q missing from:\n%s", scheme, out)
		}
	}
}

// TestValidateConfigs validates every file in configs/ with the built binary, with and without the
// Elasticsearch environment, and checks that invalid configs fail with a useful message.
func TestValidateConfigs(t *testing.T) {
	configs, err := filepath.Glob(filepath.Join(repoRoot, "configs", "*.yaml"))
	if err != nil || len(configs) == 0 {
		t.Fatalf("no configs found: %v", err)
	}
	for _, c := range configs {
		t.Run(filepath.Base(c), func(t *testing.T) {
			for _, env := range [][]string{
				nil,
				{"ELASTICSEARCH_URL=https://es1.example:9200,https://es2.example:9200", "ELASTICSEARCH_API_KEY=a2V5OnNlY3JldA=="},
				{"ELASTICSEARCH_USERNAME=elastic", "ELASTICSEARCH_PASSWORD=changeme"},
			} {
				if out, err := runBinary(t, env, "validate", "--config", c); err != nil {
					t.Errorf("validate with %v: %v\n%s", env, err, out)
				}
			}
		})
	}
	// The Elasticsearch version overlays go on top of either pipeline.
	overlays, err := filepath.Glob(filepath.Join(repoRoot, "configs", "elasticsearch", "*.yaml"))
	if err != nil || len(overlays) == 0 {
		t.Fatalf("no overlays found: %v", err)
	}
	for _, base := range configs {
		for _, ov := range overlays {
			t.Run(filepath.Base(base)+"+"+filepath.Base(ov), func(t *testing.T) {
				if out, err := runBinary(t, nil, "validate", "--config", base, "--config", ov); err != nil {
					t.Errorf("validate: %v\n%s", err, out)
				}
			})
		}
	}
	// The tail sampling overlay goes on either pipeline, and with tail-apm.yaml on the APM overlays.
	for _, combo := range [][]string{
		{"default.yaml", "sampling/tail.yaml"},
		{"durable.yaml", "sampling/tail.yaml"},
		{"default.yaml", "elasticsearch/apm.yaml", "sampling/tail.yaml", "sampling/tail-apm.yaml"},
		{"durable.yaml", "elasticsearch/apm-durable.yaml", "sampling/tail.yaml", "sampling/tail-apm.yaml"},
	} {
		t.Run(strings.Join(combo, "+"), func(t *testing.T) {
			var args []string
			for _, f := range combo {
				args = append(args, "--config", filepath.Join(repoRoot, "configs", f))
			}
			if out, err := runBinary(t, nil, append([]string{"validate"}, args...)...); err != nil {
				t.Errorf("validate: %v\n%s", err, out)
			}
		})
	}
	t.Run("otlp-exporters", func(t *testing.T) {
		if out, err := runBinary(t, nil, "validate", "--config", "testdata/otlp-exporters.yaml"); err != nil {
			t.Errorf("validate: %v\n%s", err, out)
		}
	})
	for _, c := range []struct{ file, want string }{
		{"testdata/unknown-component.yaml", `unknown type: "splunk_hec"`},
		{"testdata/invalid-batch.yaml", "send_batch_max_size must be greater or equal to send_batch_size"},
		{"testdata/missing.yaml", "no such file or directory"},
	} {
		t.Run(c.file, func(t *testing.T) {
			out, err := runBinary(t, nil, "validate", "--config", c.file)
			if err == nil {
				t.Fatalf("validate succeeded, want an error containing %q", c.want)
			}
			if !strings.Contains(out, c.want) {
				t.Errorf("validate output does not contain %q:\n%s", c.want, out)
			}
		})
	}
}
