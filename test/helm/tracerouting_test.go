package helm

import (
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
)

const tailSamplingOverlay = "../../configs/sampling/tail.yaml"

// TestTailSamplingFollowsExample: tailSampling.enabled renders the config it renders without it
// plus configs/sampling/tail.yaml, merged as `--config base --config tail.yaml`; with the APM
// pipeline the processor goes behind the connector (traces/out, after tracesampling), which must
// count every span; on a Kafka gateway as without Kafka. The pending spans' log is on the buffer's
// volume in statefulset mode with a disk buffer, in memory otherwise. Each passes `tracegate
// validate`.
func TestTailSamplingFollowsExample(t *testing.T) {
	bin := requireBinary(t)
	for _, tc := range []struct {
		name, values string
		pipeline     string // where the processor goes
		onDisk       bool   // storage on the buffer's volume
	}{
		{"deployment", "", "traces", false},
		{"statefulset", "mode: statefulset", "traces", true},
		{"kafka gateway", kafkaRole("gateway"), "traces", false},
		{"apm", "apm: {enabled: true}", "traces/out", false},
		{"apm on a kafka gateway", "mode: statefulset\napm: {enabled: true}\n" + kafkaRole("gateway"), "traces/out", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, base, _ := renderedConfig(t, tc.values)
			o, got, text := renderedConfig(t, withValues(t, tc.values, "tailSampling: {enabled: true}"))
			file := readConfig(t, tailSamplingOverlay) // a copy of its own: changed below
			var want map[string]any
			if tc.pipeline == "traces" {
				want = mergeConfig(base, file)
			} else {
				// The file's processor; its place behind the connector, after tracesampling.
				want = mergeConfig(base, map[string]any{"processors": map[string]any{"durable_tail_sampling": dig(file, "processors", "durable_tail_sampling")}})
				out := dig(want, "service", "pipelines", "traces/out").(map[string]any)
				if !reflect.DeepEqual(out["processors"], []any{"tracesampling", "buffer"}) {
					t.Fatalf("traces/out processors %v without tail sampling, want [tracesampling buffer]", out["processors"])
				}
				out["processors"] = []any{"tracesampling", "durable_tail_sampling", "buffer"}
			}
			ts := dig(want, "processors", "durable_tail_sampling").(map[string]any)
			if bufferDir, _ := dig(base, "processors", "buffer", "storage", "directory").(string); tc.onDisk {
				ts["storage"].(map[string]any)["directory"] = bufferDir + "/tail-sampling"
			} else {
				delete(ts, "storage")
			}
			requireSameConfig(t, got, want, "the base plus "+tailSamplingOverlay)
			validateConfig(t, bin, text, onlyPod(t, o).Containers[0].Env)
		})
	}
}

// TestTailSamplingOwnSettings: config.processors.durable_tail_sampling is merged over the file's
// settings (its policies replace the list), and a pipeline that already names the processor is
// left as it is.
func TestTailSamplingOwnSettings(t *testing.T) {
	_, got, _ := renderedConfig(t, `
tailSampling: {enabled: true}
config:
  processors:
    durable_tail_sampling:
      decision_wait: 30s
      policies: [{name: all-errors, type: status_code, status_code: {status_codes: [ERROR]}}]
  service:
    pipelines:
      traces:
        processors: [memory_limiter, elasticmapping, durable_tail_sampling, buffer]
`)
	ts := dig(got, "processors", "durable_tail_sampling").(map[string]any)
	if ts["decision_wait"] != "30s" || ts["num_traces"] != float64(200000) {
		t.Errorf("durable_tail_sampling %v, want decision_wait 30s and the chart's num_traces", ts)
	}
	if p, _ := ts["policies"].([]any); len(p) != 1 {
		t.Errorf("policies %v, want the one of config", ts["policies"])
	}
	if v := dig(got, "service", "pipelines", "traces", "processors"); !reflect.DeepEqual(v, []any{"memory_limiter", "elasticmapping", "durable_tail_sampling", "buffer"}) {
		t.Errorf("traces processors %v, want config's list unchanged", v)
	}
}

// TestTwoTierTailSampling: the agent-loadbalancing example routes spans by trace id to the pods of
// the gateway-tailsampling example: the loadbalancing exporter with routing_key traceID, the k8s
// resolver on the gateway release's headless Service at the port of its OTLP/gRPC receiver, the
// per-pod exporters with no queue and no retries (a failure returns to the buffer), plaintext as
// the receiver listens; the Role lets the agent's service account watch the EndpointSlices in the
// gateway's namespace and the pod mounts its token. Logs and metrics keep OTLP/HTTP.
func TestTwoTierTailSampling(t *testing.T) {
	renderExample := func(example string) (*objects, map[string]any) {
		out, err := render(t, readValues(t, filepath.Join(examplesDir, example, "values.yaml")))
		if err != nil {
			t.Fatalf("%s: %v", example, err)
		}
		o := decodeAll(t, manifests(out))
		checkObjects(t, o)
		return o, values(t, o.configMaps[0].Data["config.yaml"])
	}
	gw, gwCfg := renderExample("gateway-tailsampling")
	if l := dig(gwCfg, "service", "pipelines", "traces", "processors").([]any); !slices.Contains(l, any("durable_tail_sampling")) {
		t.Fatalf("gateway-tailsampling: traces processors %v, want durable_tail_sampling", l)
	}
	var headless *corev1.Service
	for i, s := range gw.services {
		if s.Spec.ClusterIP == corev1.ClusterIPNone {
			headless = &gw.services[i]
		}
	}
	if headless == nil {
		t.Fatal("gateway-tailsampling has no headless Service")
	}
	var grpcPort int32
	for _, p := range headless.Spec.Ports {
		if p.Name == "otlp" {
			grpcPort = p.Port
		}
	}
	if grpc := dig(gwCfg, "receivers", "otlp", "protocols", "grpc", "endpoint"); !strings.HasSuffix(grpc.(string), ":4317") || grpcPort != 4317 {
		t.Fatalf("gateway OTLP/gRPC receiver %v, headless Service port otlp %d", grpc, grpcPort)
	}

	agent, cfg := renderExample("agent-loadbalancing")
	lb, _ := dig(cfg, "exporters", "loadbalancing").(map[string]any)
	want := map[string]any{
		"routing_key": "traceID",
		"protocol": map[string]any{"otlp": map[string]any{
			"tls":              map[string]any{"insecure": true},
			"sending_queue":    map[string]any{"enabled": false},
			"retry_on_failure": map[string]any{"enabled": false},
		}},
		"resolver": map[string]any{"k8s": map[string]any{
			"service": headless.Name + "." + headless.Namespace,
			"ports":   []any{float64(grpcPort)},
		}},
	}
	if !reflect.DeepEqual(lb, want) {
		t.Errorf("exporters.loadbalancing %v\nwant %v", lb, want)
	}
	for sig, exporters := range map[string][]any{"traces": {"loadbalancing"}, "logs": {"otlp_http"}, "metrics": {"otlp_http"}} {
		if v := dig(cfg, "service", "pipelines", sig, "exporters"); !reflect.DeepEqual(v, exporters) {
			t.Errorf("%s exporters %v, want %v", sig, v, exporters)
		}
	}
	pod := onlyPod(t, agent)
	if a := pod.AutomountServiceAccountToken; a == nil || !*a {
		t.Error("agent pod does not mount the service account token the k8s resolver needs")
	}
	checkEndpointSliceAccess(t, agent, headless.Namespace, pod.ServiceAccountName, namespace)
	validateConfig(t, requireBinary(t), agent.configMaps[0].Data["config.yaml"], pod.Containers[0].Env)
}

// checkEndpointSliceAccess: one Role in ns allows get, list and watch on EndpointSlices, and one
// RoleBinding there gives it to the service account sa of saNamespace.
func checkEndpointSliceAccess(t *testing.T, o *objects, ns, sa, saNamespace string) {
	t.Helper()
	if len(o.roles) != 1 || len(o.roleBindings) != 1 {
		t.Fatalf("%d Roles and %d RoleBindings, want one each", len(o.roles), len(o.roleBindings))
	}
	role, rb := o.roles[0], o.roleBindings[0]
	wantRules := []rbacv1.PolicyRule{{APIGroups: []string{"discovery.k8s.io"}, Resources: []string{"endpointslices"}, Verbs: []string{"get", "list", "watch"}}}
	if role.Namespace != ns || !reflect.DeepEqual(role.Rules, wantRules) {
		t.Errorf("Role %s/%s rules %+v, want %+v in %s", role.Namespace, role.Name, role.Rules, wantRules, ns)
	}
	wantSubject := []rbacv1.Subject{{Kind: "ServiceAccount", Name: sa, Namespace: saNamespace}}
	if rb.Namespace != ns || rb.RoleRef.Kind != "Role" || rb.RoleRef.Name != role.Name || !reflect.DeepEqual(rb.Subjects, wantSubject) {
		t.Errorf("RoleBinding %s/%s %+v %+v, want Role %s for %+v", rb.Namespace, rb.Name, rb.RoleRef, rb.Subjects, role.Name, wantSubject)
	}
}

// TestLoadBalancingResolvers: the dns resolver polls the Service's name in the cluster's domain
// and needs no Kubernetes API (no Role, no token); a Service named without a namespace is the
// release's; config.exporters.loadbalancing is merged over the chart's settings.
func TestLoadBalancingResolvers(t *testing.T) {
	bin := requireBinary(t)
	o, cfg, text := renderedConfig(t, "mode: daemonset\nloadBalancing: {enabled: true, service: gw-headless, resolver: dns, port: 14317, clusterDomain: k8s.internal}")
	if v := dig(cfg, "exporters", "loadbalancing", "resolver"); !reflect.DeepEqual(v, map[string]any{"dns": map[string]any{"hostname": "gw-headless." + namespace + ".svc.k8s.internal", "port": "14317"}}) {
		t.Errorf("resolver %v", v)
	}
	if len(o.roles)+len(o.roleBindings) != 0 {
		t.Errorf("%d Roles, %d RoleBindings with the dns resolver", len(o.roles), len(o.roleBindings))
	}
	pod := onlyPod(t, o)
	if a := pod.AutomountServiceAccountToken; a == nil || *a {
		t.Errorf("automountServiceAccountToken %v with the dns resolver, want false", a)
	}
	validateConfig(t, bin, text, pod.Containers[0].Env)

	o, cfg, text = renderedConfig(t, `
loadBalancing: {enabled: true, service: gw-headless}
config:
  exporters:
    loadbalancing:
      protocol: {otlp: {timeout: 10s, compression: zstd}}
      resolver: {k8s: {timeout: 30s}}
`)
	if v := dig(cfg, "exporters", "loadbalancing", "resolver", "k8s"); !reflect.DeepEqual(v, map[string]any{"service": "gw-headless." + namespace, "ports": []any{float64(4317)}, "timeout": "30s"}) {
		t.Errorf("resolver.k8s %v", v)
	}
	if v := dig(cfg, "exporters", "loadbalancing", "protocol", "otlp"); !reflect.DeepEqual(v, map[string]any{
		"timeout": "10s", "compression": "zstd", "tls": map[string]any{"insecure": true},
		"sending_queue": map[string]any{"enabled": false}, "retry_on_failure": map[string]any{"enabled": false},
	}) {
		t.Errorf("protocol.otlp %v", v)
	}
	pod = onlyPod(t, o)
	checkEndpointSliceAccess(t, o, namespace, pod.ServiceAccountName, namespace)
	validateConfig(t, bin, text, pod.Containers[0].Env)
}

// TestTraceRoutingRenderFailures: combinations that cannot work fail with what to do.
func TestTraceRoutingRenderFailures(t *testing.T) {
	for _, tc := range []struct{ name, values, err string }{
		{"schema: load balancing without a Service", "loadBalancing: {enabled: true}", "at '/loadBalancing/service': minLength: got 0, want 1"},
		{"schema: unknown resolver", "loadBalancing: {enabled: true, service: gw, resolver: static}", "at '/loadBalancing/resolver': value must be one of 'k8s', 'dns'"},
		{"schema: unknown tailSampling value", "tailSampling: {enabled: true, policies: []}", "at '/tailSampling': additional properties 'policies' not allowed"},
		{
			"load balancing on a Kafka agent", "loadBalancing: {enabled: true, service: gw}\n" + kafkaRole("agent"),
			"loadBalancing.enabled with kafka.role agent: Kafka already sends each trace to one gateway",
		},
		{
			"load balancing with apm", "loadBalancing: {enabled: true, service: gw}\napm: {enabled: true}",
			"loadBalancing.enabled with apm.enabled: an agent that routes spans to the gateways runs no APM pipeline",
		},
		{
			"load balancing and tail sampling", "loadBalancing: {enabled: true, service: gw}\ntailSampling: {enabled: true}",
			"loadBalancing.enabled with tailSampling.enabled: tail sampling runs on the gateways the agents route to",
		},
		{
			"tail sampling in an own ConfigMap", "tailSampling: {enabled: true}\nconfigMap: {create: false, existingName: mine}",
			"tailSampling.enabled renders the durable_tail_sampling processor into the chart's ConfigMap, but configMap.create is false",
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

// TestTraceRoutingNotes: NOTES.txt says where the spans go and what tail sampling needs.
func TestTraceRoutingNotes(t *testing.T) {
	for vals, want := range map[string]string{
		"tailSampling: {enabled: true}":                          "every span of a trace must reach the same pod: run one replica, or send through agents with loadBalancing.enabled.",
		"tailSampling: {enabled: true}\n" + kafkaRole("gateway"): "(Kafka keys each trace to one partition, read by one pod).",
		"loadBalancing: {enabled: true, service: gw-headless}":   "Spans go to the pods of gw-headless." + namespace + " by trace id (loadbalancing exporter, k8s resolver, port 4317).",
	} {
		out, err := render(t, values(t, vals))
		if err != nil {
			t.Fatalf("%q: %v", vals, err)
		}
		if notes := out["tracegate/templates/NOTES.txt"]; !strings.Contains(notes, want) {
			t.Errorf("%q: NOTES.txt, want %q:\n%s", vals, want, notes)
		}
	}
	// Where the spans wait: in memory without a disk buffer, on the pod's volume with one.
	for vals, want := range map[string]string{
		"tailSampling: {enabled: true}":                    "Each trace is decided 10s after its last span; the spans waiting for it are in memory (a crash loses them",
		"tailSampling: {enabled: true}\nmode: statefulset": "the spans waiting for it are on the buffer's volume in /var/lib/tracegate/buffer/tail-sampling before the client's reply (a crash loses none).",
	} {
		out, err := render(t, values(t, vals))
		if err != nil {
			t.Fatal(err)
		}
		if notes := out["tracegate/templates/NOTES.txt"]; !strings.Contains(notes, want) {
			t.Errorf("%q: NOTES.txt, want %q:\n%s", vals, want, notes)
		}
	}
}
