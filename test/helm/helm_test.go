// Package helm tests the Helm chart charts/tracegate with the Helm Go library: lint (strict),
// render every example and compare it with the committed rendered manifests, decode every object
// strictly into its Kubernetes API type, and validate the rendered tracegate config with the
// built binary. It is a module of its own so that Helm and k8s.io/api stay out of the root go.mod.
package helm

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/engine"
	"helm.sh/helm/v3/pkg/lint"
	"helm.sh/helm/v3/pkg/lint/support"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"sigs.k8s.io/yaml" //nolint:depguard // decodes as Helm and Kubernetes do, through JSON (k8s API types carry json tags only); go.yaml.in/yaml cannot
)

var update = flag.Bool("update", false, "regenerate charts/tracegate/examples/*/rendered from the chart")

const (
	chartDir    = "../../charts/tracegate"
	examplesDir = chartDir + "/examples"
	binary      = "../../bin/tracegate"
	// Every example is rendered as `helm template tracegate charts/tracegate -n observability
	// -f examples/<case>/values.yaml`.
	releaseName = "tracegate"
	namespace   = "observability"
	kubeVersion = "v1.30.0"
)

// kube is the Kubernetes version the chart is rendered and linted for.
var kube = chartutil.KubeVersion{Version: kubeVersion, Major: "1", Minor: "30"}

func loadChart(t *testing.T) *chart.Chart {
	t.Helper()
	c, err := loader.Load(chartDir)
	if err != nil {
		t.Fatalf("load chart: %v", err)
	}
	return c
}

// render is `helm template`: values coalesced over values.yaml, checked against
// values.schema.json, every template rendered. It returns template path (tracegate/templates/x.yaml)
// to output, without partials.
func render(t *testing.T, vals map[string]any) (map[string]string, error) {
	t.Helper()
	c := loadChart(t)
	caps := chartutil.DefaultCapabilities.Copy()
	caps.KubeVersion = kube
	rv, err := chartutil.ToRenderValues(c, vals, chartutil.ReleaseOptions{
		Name: releaseName, Namespace: namespace, Revision: 1, IsInstall: true, IsUpgrade: false,
	}, caps)
	if err != nil {
		return nil, err
	}
	return engine.Render(c, rv)
}

// lintStrict is `helm lint --strict`: any message of warning severity or above fails.
func lintStrict(t *testing.T, vals map[string]any) {
	t.Helper()
	l := lint.AllWithKubeVersion(chartDir, vals, namespace, &kube)
	for _, m := range l.Messages {
		if m.Severity >= support.WarningSev {
			t.Errorf("helm lint --strict: %s", m)
		} else {
			t.Logf("helm lint: %s", m)
		}
	}
}

func readValues(t *testing.T, path string) map[string]any {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	v, err := chartutil.ReadValues(b)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return v.AsMap()
}

// manifests keeps the rendered templates that produced output, as `helm template --output-dir`
// writes them: file name (relative to templates/) to content with a `# Source:` header.
func manifests(out map[string]string) map[string]string {
	files := map[string]string{}
	for name, content := range out {
		if strings.HasSuffix(name, "NOTES.txt") || strings.TrimSpace(content) == "" {
			continue
		}
		rel := strings.TrimPrefix(name, "tracegate/templates/")
		var b strings.Builder
		for _, doc := range splitDocs(content) {
			fmt.Fprintf(&b, "---\n# Source: %s\n%s\n", name, doc)
		}
		files[rel] = b.String()
	}
	return files
}

var docSep = regexp.MustCompile(`(?m)^---\s*$`)

// splitDocs splits a YAML stream into its non-empty documents.
func splitDocs(s string) []string {
	var docs []string
	for _, d := range docSep.Split(s, -1) {
		if strings.TrimSpace(stripComments(d)) != "" {
			docs = append(docs, strings.Trim(d, "\n"))
		}
	}
	return docs
}

func stripComments(s string) string {
	var b strings.Builder
	for l := range strings.SplitSeq(s, "\n") {
		if !strings.HasPrefix(strings.TrimSpace(l), "#") {
			b.WriteString(l + "\n")
		}
	}
	return b.String()
}

func exampleCases(t *testing.T) []string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(examplesDir, "*", "values.yaml"))
	if err != nil || len(m) == 0 {
		t.Fatalf("no examples/*/values.yaml in %s (%v)", examplesDir, err)
	}
	var cases []string
	for _, p := range m {
		cases = append(cases, filepath.Base(filepath.Dir(p)))
	}
	sort.Strings(cases)
	return cases
}

func requireBinary(t *testing.T) string {
	t.Helper()
	abs, _ := filepath.Abs(binary)
	if _, err := os.Stat(abs); err != nil {
		t.Fatalf("%s is missing: build it first with `make build` (make test and make helm-test do); "+
			"the rendered tracegate configs are validated with it", abs)
	}
	return abs
}

// TestLint is `helm lint --strict` of the chart with its defaults and with every example's values.
func TestLint(t *testing.T) {
	t.Run("defaults", func(t *testing.T) { lintStrict(t, map[string]any{}) })
	for _, name := range exampleCases(t) {
		t.Run(name, func(t *testing.T) {
			// Helm's coalescing edits the values it is given (a null removes the key): every
			// use reads its own copy, as separate helm commands would.
			lintStrict(t, readValues(t, filepath.Join(examplesDir, name, "values.yaml")))
		})
	}
}

// TestExamples renders every examples/<case>/values.yaml, compares the result with
// examples/<case>/rendered (go test -run TestExamples -update regenerates it), decodes every
// object strictly and validates the rendered tracegate config with bin/tracegate.
func TestExamples(t *testing.T) {
	bin := requireBinary(t)
	for _, name := range exampleCases(t) {
		t.Run(name, func(t *testing.T) {
			dir := filepath.Join(examplesDir, name)
			out, err := render(t, readValues(t, filepath.Join(dir, "values.yaml")))
			if err != nil {
				t.Fatalf("render: %v", err)
			}
			files := manifests(out)
			compareRendered(t, filepath.Join(dir, "rendered"), files)

			objs := decodeAll(t, files)
			checkObjects(t, objs)
			var env []corev1.EnvVar
			for _, pod := range objs.pods() {
				env = pod.Spec.Containers[0].Env
			}
			for _, cm := range objs.configMaps {
				cfg, ok := cm.Data["config.yaml"]
				if !ok {
					t.Errorf("ConfigMap %s has no config.yaml", cm.Name)
					continue
				}
				validateConfig(t, bin, cfg, env)
			}
			if notes := out["tracegate/templates/NOTES.txt"]; !strings.Contains(notes, "tracegate") {
				t.Errorf("NOTES.txt rendered to %q", notes)
			}
		})
	}
}

func compareRendered(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	if *update {
		if err := os.RemoveAll(dir); err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		for name, content := range files {
			if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		return
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatalf("%v: run `make helm-examples` to render the examples", err)
	}
	committed := map[string]bool{}
	for _, e := range entries {
		committed[e.Name()] = true
		want, ok := files[e.Name()]
		if !ok {
			t.Errorf("%s/%s: committed, but the chart no longer renders it (make helm-examples)", dir, e.Name())
			continue
		}
		got, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != want {
			t.Errorf("%s/%s differs from what the chart renders (make helm-examples regenerates it):\n%s",
				dir, e.Name(), firstDiff(string(got), want, "committed", "rendered "))
		}
	}
	for name := range files {
		if !committed[name] {
			t.Errorf("%s/%s: rendered by the chart but not committed (make helm-examples)", dir, name)
		}
	}
}

// firstDiff shows the first differing line of two texts, named nameA and nameB.
func firstDiff(textA, textB, nameA, nameB string) string {
	a, b := strings.Split(textA, "\n"), strings.Split(textB, "\n")
	for i := 0; i < len(a) || i < len(b); i++ {
		var la, lb string
		if i < len(a) {
			la = a[i]
		}
		if i < len(b) {
			lb = b[i]
		}
		if la != lb || i >= len(a) || i >= len(b) {
			return fmt.Sprintf("line %d:\n  %s: %q\n  %s: %q", i+1, nameA, la, nameB, lb)
		}
	}
	return "(no difference found)"
}

type objects struct {
	deployments     []appsv1.Deployment
	daemonSets      []appsv1.DaemonSet
	statefulSets    []appsv1.StatefulSet
	services        []corev1.Service
	configMaps      []corev1.ConfigMap
	secrets         []corev1.Secret
	serviceAccounts []corev1.ServiceAccount
	hpas            []autoscalingv2.HorizontalPodAutoscaler
	pdbs            []policyv1.PodDisruptionBudget
	roles           []rbacv1.Role
	roleBindings    []rbacv1.RoleBinding
	serviceMonitors []map[string]any
}

// decodeAll decodes every rendered document strictly (an unknown or duplicated field fails)
// into its Kubernetes API type.
func decodeAll(t *testing.T, files map[string]string) *objects {
	t.Helper()
	o := &objects{}
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, name := range names {
		for _, doc := range splitDocs(files[name]) {
			if err := o.decode([]byte(doc)); err != nil {
				t.Errorf("%s: %v\n%s", name, err, doc)
			}
		}
	}
	return o
}

func strict[T any](doc []byte, list *[]T) error {
	var v T
	if err := yaml.UnmarshalStrict(doc, &v); err != nil {
		return err
	}
	*list = append(*list, v)
	return nil
}

func (o *objects) decode(doc []byte) error {
	var meta struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
	}
	if err := yaml.Unmarshal(doc, &meta); err != nil {
		return err
	}
	switch meta.APIVersion + " " + meta.Kind {
	case "apps/v1 Deployment":
		return strict(doc, &o.deployments)
	case "apps/v1 DaemonSet":
		return strict(doc, &o.daemonSets)
	case "apps/v1 StatefulSet":
		return strict(doc, &o.statefulSets)
	case "v1 Service":
		return strict(doc, &o.services)
	case "v1 ConfigMap":
		return strict(doc, &o.configMaps)
	case "v1 Secret":
		return strict(doc, &o.secrets)
	case "v1 ServiceAccount":
		return strict(doc, &o.serviceAccounts)
	case "autoscaling/v2 HorizontalPodAutoscaler":
		return strict(doc, &o.hpas)
	case "policy/v1 PodDisruptionBudget":
		return strict(doc, &o.pdbs)
	case "rbac.authorization.k8s.io/v1 Role":
		return strict(doc, &o.roles)
	case "rbac.authorization.k8s.io/v1 RoleBinding":
		return strict(doc, &o.roleBindings)
	case "monitoring.coreos.com/v1 ServiceMonitor":
		var sm map[string]any
		if err := yaml.UnmarshalStrict(doc, &sm); err != nil {
			return err
		}
		spec, _ := sm["spec"].(map[string]any)
		eps, _ := spec["endpoints"].([]any)
		sel, _ := spec["selector"].(map[string]any)
		if len(eps) == 0 || sel["matchLabels"] == nil {
			return errors.New("ServiceMonitor without spec.endpoints or spec.selector.matchLabels")
		}
		for _, k := range []string{"apiVersion", "kind", "metadata", "spec"} {
			if _, ok := sm[k]; !ok {
				return fmt.Errorf("ServiceMonitor without %s", k)
			}
		}
		for k := range sm {
			if k != "apiVersion" && k != "kind" && k != "metadata" && k != "spec" {
				return fmt.Errorf("ServiceMonitor: unknown field %q", k)
			}
		}
		o.serviceMonitors = append(o.serviceMonitors, sm)
		return nil
	}
	return fmt.Errorf("no API type for apiVersion %q kind %q: add it to the test", meta.APIVersion, meta.Kind)
}

// pods returns the pod templates of every workload, with the workload kind.
func (o *objects) pods() map[string]corev1.PodTemplateSpec {
	p := map[string]corev1.PodTemplateSpec{}
	for _, d := range o.deployments {
		p["Deployment/"+d.Name] = d.Spec.Template
	}
	for _, d := range o.daemonSets {
		p["DaemonSet/"+d.Name] = d.Spec.Template
	}
	for _, d := range o.statefulSets {
		p["StatefulSet/"+d.Name] = d.Spec.Template
	}
	return p
}

// checkObjects holds what every rendering must satisfy whatever the values.
func checkObjects(t *testing.T, o *objects) {
	t.Helper()
	pods := o.pods()
	if len(pods) != 1 {
		t.Fatalf("want exactly one workload, got %v", keys(pods))
	}
	for name, pod := range pods {
		if pod.Annotations["checksum/config"] == "" {
			t.Errorf("%s: no checksum/config annotation", name)
		}
		sc := pod.Spec.SecurityContext
		if sc == nil || sc.RunAsNonRoot == nil || !*sc.RunAsNonRoot {
			t.Errorf("%s: pod securityContext.runAsNonRoot is not true", name)
		}
		c := pod.Spec.Containers[0]
		if c.SecurityContext == nil || c.SecurityContext.ReadOnlyRootFilesystem == nil || !*c.SecurityContext.ReadOnlyRootFilesystem {
			t.Errorf("%s: container securityContext.readOnlyRootFilesystem is not true", name)
		}
		for _, e := range c.Env {
			if strings.HasPrefix(e.Name, "ELASTICSEARCH_") && e.Name != "ELASTICSEARCH_URL" && e.Value != "" {
				t.Errorf("%s: %s has a literal value: credentials must come from a Secret", name, e.Name)
			}
		}
		// Every Service port targets a container port by name.
		cports := map[string]corev1.ContainerPort{}
		for _, p := range c.Ports {
			cports[p.Name] = p
		}
		for _, s := range o.services {
			for _, sp := range s.Spec.Ports {
				cp, ok := cports[sp.TargetPort.String()]
				if !ok {
					t.Errorf("Service %s port %s targets no container port", s.Name, sp.Name)
				} else if cp.Protocol != sp.Protocol {
					t.Errorf("Service %s port %s: protocol %s, container port %s", s.Name, sp.Name, sp.Protocol, cp.Protocol)
				}
			}
		}
	}
}

func keys[V any](m map[string]V) []string {
	var k []string
	for n := range m {
		k = append(k, n)
	}
	sort.Strings(k)
	return k
}

// outsideCluster is a kubeconfig naming an API server nobody listens on. The loadbalancing
// exporter's k8s resolver builds its Kubernetes client when the exporter is created, which
// `tracegate validate` does; in a pod the client comes from the service account, here from this
// file. Validation never calls the server.
const outsideCluster = `apiVersion: v1
kind: Config
clusters: [{name: none, cluster: {server: "https://127.0.0.1:1"}}]
users: [{name: none, user: {token: none}}]
contexts: [{name: none, context: {cluster: none, user: none}}]
current-context: none
`

// validateConfig runs `tracegate validate` on a rendered config, with the environment the chart
// gives the container and nothing else of this process's (a variable the config needs but the
// chart does not set must fail here): literal values as they are, the pod IP as 127.0.0.1, and
// a placeholder for what comes from Secrets and other references; KUBECONFIG is outsideCluster.
func validateConfig(t *testing.T, bin, cfg string, env []corev1.EnvVar) {
	t.Helper()
	dir := t.TempDir()
	f := filepath.Join(dir, "config.yaml")
	if err := os.WriteFile(f, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	kubeconfig := filepath.Join(dir, "kubeconfig")
	if err := os.WriteFile(kubeconfig, []byte(outsideCluster), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "validate", "--config", f)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir(), "KUBECONFIG=" + kubeconfig}
	for _, e := range env {
		v := e.Value
		switch {
		case e.ValueFrom == nil:
		case e.ValueFrom.FieldRef != nil && e.ValueFrom.FieldRef.FieldPath == "status.podIP":
			v = "127.0.0.1"
		case strings.HasSuffix(e.Name, "_URL"): // a URL from a Secret
			v = "https://from-secret.invalid:9200"
		default:
			v = "from-" + e.Name
		}
		cmd.Env = append(cmd.Env, e.Name+"="+v)
	}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		t.Errorf("tracegate validate: %v\n%s\nconfig:\n%s", err, out.String(), cfg)
	}
}
