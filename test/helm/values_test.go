package helm

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/tracegate/tracegate/internal/gcdefaults"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml" //nolint:depguard // decodes as Helm and Kubernetes do, through JSON (k8s API types carry json tags only); go.yaml.in/yaml cannot
)

// values parses a YAML overlay for the chart's values.
func values(t *testing.T, y string) map[string]any {
	t.Helper()
	v := map[string]any{}
	if err := yaml.Unmarshal([]byte(y), &v); err != nil {
		t.Fatalf("bad test values: %v", err)
	}
	return v
}

const storageConfig = `
config:
  processors:
    buffer:
      storage:
        directory: ${env:TRACEGATE_BUFFER_DIR}
        capacity_mib: 1024
`

const bufferClaim = `
statefulset:
  volumeClaimTemplates:
    - metadata: {name: buffer}
      spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 2Gi}}}
`

// TestRenderFailures: values that must not render, each with the message that says what to do.
func TestRenderFailures(t *testing.T) {
	tests := []struct {
		name, values, err string
	}{
		{
			"statefulset storage without persistence", "mode: statefulset\nbufferStorage: {volumeName: buffer, mountPath: /var/lib/tracegate/buffer, statefulset: {enabled: false, size: 10Gi}}\n" + storageConfig,
			`config.processors.buffer.storage is set (the buffer's disk log) but has no persistent volume: add a statefulset.volumeClaimTemplates entry named "buffer"`,
		},
		{
			"statefulset storage with claim of another name", "mode: statefulset\nbufferStorage: {volumeName: spool, mountPath: /spool, statefulset: {enabled: false, size: 10Gi}}\n" + storageConfig + bufferClaim,
			`add a statefulset.volumeClaimTemplates entry named "spool"`,
		},
		{
			"statefulset storage in extraVolumes too", "mode: statefulset\nextraVolumes: [{name: buffer, emptyDir: {}}]\n" + storageConfig + bufferClaim,
			`volume "buffer" is both in statefulset.volumeClaimTemplates and extraVolumes`,
		},
		{
			"deployment storage without volume", storageConfig,
			`config.processors.buffer.storage is set (the buffer's disk log) but has no volume in deployment mode: use mode statefulset`,
		},
		{
			"daemonset storage without volume", "mode: daemonset\n" + storageConfig,
			`has no volume in daemonset mode`,
		},
		{
			"deployment storage on a shared claim", "extraVolumes: [{name: buffer, persistentVolumeClaim: {claimName: x}}]\n" + storageConfig,
			`extraVolumes "buffer" is a persistentVolumeClaim shared by every pod of the deployment`,
		},
		{
			"deployment storage on a hostPath", "extraVolumes: [{name: buffer, hostPath: {path: /var/lib/tracegate}}]\n" + storageConfig,
			`extraVolumes "buffer" is a hostPath in deployment mode`,
		},
		{
			"deployment storage on an emptyDir", "extraVolumes: [{name: buffer, emptyDir: {}}]\n" + storageConfig,
			`extraVolumes "buffer" is deleted with its pod, but at shutdown the buffer writes what it holds to its disk log`,
		},
		{
			"daemonset storage on an emptyDir", "mode: daemonset\nextraVolumes: [{name: buffer, emptyDir: {sizeLimit: 1Gi}}]\n" + storageConfig,
			`extraVolumes "buffer" is deleted with its pod`,
		},
		{
			"deployment storage on an ephemeral volume", "extraVolumes: [{name: buffer, ephemeral: {volumeClaimTemplate: {spec: {accessModes: [ReadWriteOnce]}}}}]\n" + storageConfig,
			`extraVolumes "buffer" is deleted with its pod`,
		},
		{"storage directory off the volume", "mode: statefulset\n" + bufferClaim + `
config:
  processors:
    buffer:
      storage: {directory: /tmp/buffer}
`, `config.processors.buffer.storage.directory "/tmp/buffer" is not on the buffer volume`},
		{
			"autoscaling a daemonset", "mode: daemonset\nautoscaling: {enabled: true}",
			"a daemonset runs one pod per node and cannot be autoscaled",
		},
		{
			"autoscaling without cpu request", "autoscaling: {enabled: true}\nresources: {requests: {cpu: null}}",
			"autoscaling.targetCPUUtilizationPercentage needs resources.requests.cpu",
		},
		{
			"autoscaling without target", "autoscaling: {enabled: true, targetCPUUtilizationPercentage: null, targetMemoryUtilizationPercentage: null}",
			"set targetCPUUtilizationPercentage and/or targetMemoryUtilizationPercentage",
		},
		{
			"secret and literal credentials", "elasticsearch: {existingSecret: {name: es}, apiKey: abc}",
			"elasticsearch: set either existingSecret.name or literal apiKey/username/password, not both",
		},
		{
			"api key and basic auth", "elasticsearch: {apiKey: abc, username: u, password: p}",
			"elasticsearch: set either apiKey or username/password, not both",
		},
		{
			"username without password", "elasticsearch: {username: u}",
			"elasticsearch: username and password go together",
		},
		{
			"secret api key and basic auth keys", "elasticsearch: {existingSecret: {name: es, usernameKey: u, passwordKey: p}}",
			`elasticsearch.existingSecret: set apiKeyKey, or usernameKey and passwordKey with apiKeyKey: "", not both`,
		},
		{
			"secret username key without password key", "elasticsearch: {existingSecret: {name: es, apiKeyKey: '', usernameKey: u}}",
			"elasticsearch.existingSecret: usernameKey and passwordKey go together",
		},
		{
			"secret without keys", "elasticsearch: {existingSecret: {name: es, apiKeyKey: ''}}",
			"elasticsearch.existingSecret.name: set apiKeyKey, usernameKey and passwordKey, or urlKey: which keys to read",
		},
		{
			"url key without secret", "elasticsearch: {existingSecret: {urlKey: url}}",
			"elasticsearch.existingSecret.urlKey needs elasticsearch.existingSecret.name",
		},
		{
			"url key and endpoints", "elasticsearch: {endpoints: ['https://es:9200'], existingSecret: {name: es, urlKey: url}}",
			"elasticsearch: set either endpoints or existingSecret.urlKey, not both",
		},
		{
			"service monitor without metrics port", "serviceMonitor: {enabled: true}\nports: {metrics: {enabled: false, containerPort: 8888}}",
			"serviceMonitor.enabled needs ports.metrics.enabled",
		},
		{
			"no config map", "configMap: {create: false}",
			"configMap.create is false: set configMap.existingName",
		},
		{
			"bad memory limit", "resources: {limits: {memory: 2GB}}",
			`resources.limits.memory "2GB": use a plain number of bytes or a Ki/Mi/Gi/Ti/k/M/G/T suffix`,
		},
		// values.schema.json: the schema's own messages, so a check the templates also make cannot
		// pass for a rule the schema lost
		{"schema: unknown mode", "mode: sidecar", "at '/mode': value must be one of 'deployment', 'daemonset', 'statefulset'"},
		{"schema: typo in a value name", "replicas: 3", "additional properties 'replicas' not allowed"},
		{"schema: unknown port field", "ports: {otlp: {enabled: true, containerPort: 4317, hostport: 4317}}", "at '/ports/otlp': additional properties 'hostport' not allowed"},
		{"schema: bad protocol", "ports: {otlp: {enabled: true, containerPort: 4317, protocol: tcp}}", "at '/ports/otlp/protocol': value must be one of 'TCP', 'UDP', 'SCTP'"},
		{"schema: endpoint list with a comma", "elasticsearch: {endpoints: ['https://a:9200,https://b:9200']}", "at '/elasticsearch/endpoints/0': 'https://a:9200,https://b:9200' does not match pattern"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := render(t, values(t, tt.values))
			if err == nil {
				t.Fatalf("rendered; want an error containing %q", tt.err)
			}
			if !strings.Contains(err.Error(), tt.err) {
				t.Fatalf("error %q\nwant it to contain %q", err, tt.err)
			}
		})
	}
}

// renderObjects renders values and decodes the result strictly.
func renderObjects(t *testing.T, y string) *objects {
	t.Helper()
	out, err := render(t, values(t, y))
	if err != nil {
		t.Fatalf("render: %v", err)
	}
	o := decodeAll(t, manifests(out))
	checkObjects(t, o)
	return o
}

func onlyPod(t *testing.T, o *objects) corev1.PodSpec {
	t.Helper()
	for _, p := range o.pods() {
		return p.Spec
	}
	t.Fatal("no workload")
	return corev1.PodSpec{}
}

func env(c corev1.Container) map[string]corev1.EnvVar {
	m := map[string]corev1.EnvVar{}
	for _, e := range c.Env {
		m[e.Name] = e
	}
	return m
}

func TestDefaults(t *testing.T) {
	o := renderObjects(t, "")
	if len(o.deployments) != 1 || len(o.hpas) != 0 || len(o.pdbs) != 0 || len(o.serviceMonitors) != 0 || len(o.secrets) != 0 {
		t.Fatalf("defaults: want one Deployment and no HPA, PDB, ServiceMonitor or Secret")
	}
	pod := onlyPod(t, o)
	c := pod.Containers[0]
	e := env(c)
	if got := e["GOMEMLIMIT"].Value; got != "1843MiB" {
		t.Errorf("GOMEMLIMIT = %q, want 1843MiB (90%% of 2Gi, gcdefaults.Chosen.LimitShare %g)", got, gcdefaults.Chosen.LimitShare)
	}
	if _, ok := e["TRACEGATE_BUFFER_DIR"]; ok {
		t.Error("TRACEGATE_BUFFER_DIR set without buffer storage")
	}
	for _, p := range c.Ports {
		if p.HostPort != 0 {
			t.Errorf("port %s: hostPort %d outside daemonset mode", p.Name, p.HostPort)
		}
	}
	// Every receiver port, TCP and UDP, is on the Service.
	want := map[string]string{
		"otlp": "4317/TCP", "otlp-http": "4318/TCP", "zipkin": "9411/TCP", "jaeger-grpc": "14250/TCP",
		"jaeger-thrift": "14268/TCP", "jaeger-compact": "6831/UDP", "jaeger-binary": "6832/UDP", "ddtrace": "8126/TCP", "elasticapm": "8200/TCP",
		"metrics": "8888/TCP",
	}
	if len(o.services) != 1 {
		t.Fatalf("want one Service, got %d", len(o.services))
	}
	got := map[string]string{}
	for _, p := range o.services[0].Spec.Ports {
		got[p.Name] = strconv.Itoa(int(p.Port)) + "/" + string(p.Protocol)
		if p.TargetPort.String() != p.Name {
			t.Errorf("Service port %s targets %q, want the container port of its name", p.Name, p.TargetPort.String())
		}
	}
	for n, w := range want {
		if got[n] != w {
			t.Errorf("Service port %s = %q, want %q", n, got[n], w)
		}
	}
	// ...and the container's, named as on the Service.
	cports := map[string]string{}
	for _, p := range c.Ports {
		cports[p.Name] = strconv.Itoa(int(p.ContainerPort)) + "/" + string(p.Protocol)
	}
	for n, w := range want {
		if cports[n] != w {
			t.Errorf("container port %s = %q, want %q", n, cports[n], w)
		}
	}
	if c.Args[0] != "--config=/etc/tracegate/config.yaml" {
		t.Errorf("args %v", c.Args)
	}
	if u := pod.SecurityContext.RunAsUser; u == nil || *u != 10001 {
		t.Errorf("runAsUser %v, want 10001 (the image's user)", u)
	}
}

func TestDaemonsetHostPorts(t *testing.T) {
	o := renderObjects(t, "mode: daemonset\nports: {zipkin: {enabled: false, containerPort: 9411}}")
	if len(o.daemonSets) != 1 {
		t.Fatal("want a DaemonSet")
	}
	ports := map[string]corev1.ContainerPort{}
	for _, p := range onlyPod(t, o).Containers[0].Ports {
		ports[p.Name] = p
	}
	if p := ports["ddtrace"]; p.HostPort != 8126 || p.ContainerPort != 8126 {
		t.Errorf("ddtrace port %+v, want hostPort 8126", p)
	}
	if p := ports["elasticapm"]; p.HostPort != 8200 || p.ContainerPort != 8200 || p.Protocol != corev1.ProtocolTCP {
		t.Errorf("elasticapm port %+v, want TCP hostPort 8200", p)
	}
	if p := ports["jaeger-compact"]; p.HostPort != 6831 || p.Protocol != corev1.ProtocolUDP {
		t.Errorf("jaeger-compact port %+v, want UDP hostPort 6831", p)
	}
	if p := ports["metrics"]; p.HostPort != 0 {
		t.Errorf("metrics on hostPort %d", p.HostPort)
	}
	if _, ok := ports["zipkin"]; ok {
		t.Error("disabled port zipkin rendered")
	}
	for _, p := range o.services[0].Spec.Ports {
		if p.Name == "zipkin" {
			t.Error("disabled port zipkin on the Service")
		}
	}
	if itp := o.services[0].Spec.InternalTrafficPolicy; itp == nil || *itp != corev1.ServiceInternalTrafficPolicyLocal {
		t.Errorf("daemonset Service internalTrafficPolicy %v, want Local", itp)
	}
}

func TestStatefulsetBuffer(t *testing.T) {
	o := renderObjects(t, "mode: statefulset\n"+storageConfig+bufferClaim)
	if len(o.statefulSets) != 1 {
		t.Fatal("want a StatefulSet")
	}
	ss := o.statefulSets[0]
	if len(ss.Spec.VolumeClaimTemplates) != 1 || ss.Spec.VolumeClaimTemplates[0].Name != "buffer" {
		t.Errorf("volumeClaimTemplates %+v", ss.Spec.VolumeClaimTemplates)
	}
	c := ss.Spec.Template.Spec.Containers[0]
	if got := env(c)["TRACEGATE_BUFFER_DIR"].Value; got != "/var/lib/tracegate/buffer" {
		t.Errorf("TRACEGATE_BUFFER_DIR = %q", got)
	}
	mounted := false
	for _, m := range c.VolumeMounts {
		if m.Name == "buffer" && m.MountPath == "/var/lib/tracegate/buffer" && !m.ReadOnly {
			mounted = true
		}
	}
	if !mounted {
		t.Errorf("buffer claim not mounted read-write at the buffer dir: %+v", c.VolumeMounts)
	}
	headless := ""
	for _, s := range o.services {
		if s.Spec.ClusterIP == corev1.ClusterIPNone {
			headless = s.Name
		}
	}
	if headless == "" || ss.Spec.ServiceName != headless {
		t.Errorf("serviceName %q, headless Service %q", ss.Spec.ServiceName, headless)
	}
}

// TestModeAloneChoosesTheBuffer: `mode: statefulset` alone gives each pod the disk buffer
// (overflow) on a 10Gi claim of its own; daemonset and deployment alone stay memory-only.
func TestModeAloneChoosesTheBuffer(t *testing.T) {
	bin := requireBinary(t)
	for _, tc := range []struct {
		values   string
		claim    string // the buffer claim's size, "" for none
		class    string
		capacity float64 // capacity_mib, 0 for no storage
	}{
		{"mode: statefulset", "10Gi", "", 9216},
		{"mode: statefulset\nbufferStorage: {volumeName: buffer, mountPath: /var/lib/tracegate/buffer, statefulset: {enabled: true, size: 50Gi, storageClassName: fast-ssd}}", "50Gi", "fast-ssd", 46080},
		{"mode: statefulset\nbufferStorage: {volumeName: buffer, mountPath: /var/lib/tracegate/buffer, statefulset: {enabled: false, size: 10Gi}}", "", "", 0},
		{"mode: daemonset", "", "", 0},
		{"mode: deployment", "", "", 0},
	} {
		t.Run(tc.values, func(t *testing.T) {
			o := renderObjects(t, tc.values)
			if len(o.configMaps) != 1 {
				t.Fatalf("%d ConfigMaps", len(o.configMaps))
			}
			cfgText := o.configMaps[0].Data["config.yaml"]
			cfg := values(t, cfgText)
			storage, _ := dig(cfg, "processors", "buffer", "storage").(map[string]any)
			if got, _ := storage["capacity_mib"].(float64); got != tc.capacity {
				t.Errorf("processors.buffer.storage %v, want capacity_mib %v", storage, tc.capacity)
			}
			if tc.capacity > 0 && (storage["mode"] != "overflow" || storage["directory"] != "${env:TRACEGATE_BUFFER_DIR}") {
				t.Errorf("processors.buffer.storage %v, want overflow in ${env:TRACEGATE_BUFFER_DIR}", storage)
			}
			var claims []corev1.PersistentVolumeClaim
			if len(o.statefulSets) == 1 {
				claims = o.statefulSets[0].Spec.VolumeClaimTemplates
			}
			switch {
			case tc.claim == "" && len(claims) > 0:
				t.Errorf("claims %+v, want none", claims)
			case tc.claim != "":
				if len(claims) != 1 || claims[0].Name != "buffer" || claims[0].Spec.Resources.Requests.Storage().String() != tc.claim {
					t.Fatalf("claims %+v, want one named buffer of %s", claims, tc.claim)
				}
				if got := ptrValue(claims[0].Spec.StorageClassName); got != tc.class {
					t.Errorf("storageClassName %q, want %q", got, tc.class)
				}
				validateConfig(t, bin, cfgText, []corev1.EnvVar{{Name: "TRACEGATE_BUFFER_DIR", Value: t.TempDir()}})
			}
		})
	}
}

func dig(m map[string]any, keys ...string) any {
	var cur any = m
	for _, k := range keys {
		mm, ok := cur.(map[string]any)
		if !ok {
			return nil
		}
		cur = mm[k]
	}
	return cur
}

func ptrValue(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

func TestAutoscalingStatefulset(t *testing.T) {
	o := renderObjects(t, "mode: statefulset\nautoscaling: {enabled: true, maxReplicas: 4}\npodDisruptionBudget: {enabled: true}")
	if len(o.hpas) != 1 || o.hpas[0].Spec.ScaleTargetRef.Kind != "StatefulSet" || len(o.hpas[0].Spec.Metrics) != 2 {
		t.Fatalf("HPA %+v", o.hpas)
	}
	if o.statefulSets[0].Spec.Replicas != nil {
		t.Error("replicas set while the HPA owns them")
	}
	if len(o.pdbs) != 1 || o.pdbs[0].Spec.MaxUnavailable == nil || o.pdbs[0].Spec.MaxUnavailable.IntValue() != 1 {
		t.Errorf("PDB %+v, want maxUnavailable 1 by default", o.pdbs)
	}
}

func TestGOMEMLIMIT(t *testing.T) {
	for limit, want := range map[string]string{"512Mi": "460MiB", "1Gi": "921MiB", "1.5Gi": "1382MiB", "1G": "858MiB", "1073741824": "921MiB", "4Gi": "3686MiB"} {
		o := renderObjects(t, "resources: {limits: {memory: '"+limit+"'}}")
		if got := env(onlyPod(t, o).Containers[0])["GOMEMLIMIT"].Value; got != want {
			t.Errorf("limit %s: GOMEMLIMIT %q, want %q", limit, got, want)
		}
	}
	o := renderObjects(t, "useGOMEMLIMIT: false")
	if _, ok := env(onlyPod(t, o).Containers[0])["GOMEMLIMIT"]; ok {
		t.Error("GOMEMLIMIT set with useGOMEMLIMIT: false")
	}
}

// TestGOGC: the pods run with the binary's own GOGC default (the chart sets GOMEMLIMIT, which
// turns the binary's defaults off), another value when given, none when "".
func TestGOGC(t *testing.T) {
	for values, want := range map[string]string{"": strconv.Itoa(gcdefaults.Chosen.GOGC), "gogc: '100'": "100", "gogc: 'off'": "off"} {
		if got := env(onlyPod(t, renderObjects(t, values)).Containers[0])["GOGC"].Value; got != want {
			t.Errorf("values %q: GOGC %q, want %q", values, got, want)
		}
	}
	if _, ok := env(onlyPod(t, renderObjects(t, "gogc: ''")).Containers[0])["GOGC"]; ok {
		t.Error(`GOGC set with gogc: ""`)
	}
}

// TestLiteralCredentials: credentials in values go into a Secret the chart creates, never into
// the pod spec, and the pods roll when it changes.
func TestLiteralCredentials(t *testing.T) {
	o := renderObjects(t, "elasticsearch: {endpoints: ['https://a:9200', 'https://b:9200'], username: elastic, password: changeme}")
	if len(o.secrets) != 1 || string(o.secrets[0].Data["password"]) != "changeme" || string(o.secrets[0].Data["username"]) != "elastic" {
		t.Fatalf("Secret %+v", o.secrets)
	}
	pod := o.deployments[0].Spec.Template
	if pod.Annotations["checksum/secret"] == "" {
		t.Error("no checksum/secret annotation")
	}
	e := env(pod.Spec.Containers[0])
	if e["ELASTICSEARCH_URL"].Value != "https://a:9200,https://b:9200" {
		t.Errorf("ELASTICSEARCH_URL %q", e["ELASTICSEARCH_URL"].Value)
	}
	if r := e["ELASTICSEARCH_PASSWORD"].ValueFrom; r == nil || r.SecretKeyRef == nil || r.SecretKeyRef.Name != o.secrets[0].Name {
		t.Errorf("ELASTICSEARCH_PASSWORD not from the Secret: %+v", e["ELASTICSEARCH_PASSWORD"])
	}
	if _, ok := e["ELASTICSEARCH_API_KEY"]; ok {
		t.Error("ELASTICSEARCH_API_KEY set without an api key")
	}
}

// TestExistingSecret: credentials come from the named keys of the user's Secret, and every
// reference is required, so a misspelled Secret or key stops the pod (CreateContainerConfigError)
// instead of running it without credentials against a cluster that then refuses every bulk.
func TestExistingSecret(t *testing.T) {
	for _, tc := range []struct {
		name, values string
		want         map[string]string // variable -> key
	}{
		{
			"api key (default key)", "elasticsearch: {existingSecret: {name: es}}",
			map[string]string{"ELASTICSEARCH_API_KEY": "api-key"},
		},
		{
			"basic auth", "elasticsearch: {existingSecret: {name: es, apiKeyKey: '', usernameKey: user, passwordKey: pass}}",
			map[string]string{"ELASTICSEARCH_USERNAME": "user", "ELASTICSEARCH_PASSWORD": "pass"},
		},
		{
			"url and api key", "elasticsearch: {existingSecret: {name: es, urlKey: url}}",
			map[string]string{"ELASTICSEARCH_URL": "url", "ELASTICSEARCH_API_KEY": "api-key"},
		},
		{
			"url only", "elasticsearch: {existingSecret: {name: es, apiKeyKey: '', urlKey: url}}",
			map[string]string{"ELASTICSEARCH_URL": "url"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := env(onlyPod(t, renderObjects(t, tc.values)).Containers[0])
			for _, v := range []string{"ELASTICSEARCH_URL", "ELASTICSEARCH_API_KEY", "ELASTICSEARCH_USERNAME", "ELASTICSEARCH_PASSWORD"} {
				ev, set := e[v]
				key, want := tc.want[v]
				if !want {
					if set && ev.ValueFrom != nil {
						t.Errorf("%s from a Secret: %+v", v, ev.ValueFrom)
					}
					continue
				}
				if ev.ValueFrom == nil || ev.ValueFrom.SecretKeyRef == nil {
					t.Errorf("%s not from the Secret: %+v", v, ev)
					continue
				}
				ref := ev.ValueFrom.SecretKeyRef
				if ref.Name != "es" || ref.Key != key {
					t.Errorf("%s from %s/%s, want es/%s", v, ref.Name, ref.Key, key)
				}
				if ref.Optional != nil && *ref.Optional {
					t.Errorf("%s: optional reference; a missing Secret or key would run the pod without it", v)
				}
			}
		})
	}
}

// TestServicePortDefaultsToContainerPort: a port added in values with only its container port is
// served on the same port (before, the Service rendered "port:" empty and the install failed).
func TestServicePortDefaultsToContainerPort(t *testing.T) {
	o := renderObjects(t, "ports: {extra: {enabled: true, containerPort: 5140}}")
	var found bool
	for _, svc := range o.services {
		for _, p := range svc.Spec.Ports {
			if p.Name == "extra" {
				found = true
				if p.Port != 5140 {
					t.Errorf("Service port %d, want the container port 5140", p.Port)
				}
			}
		}
	}
	if !found {
		t.Error("no Service port for the added port")
	}
}

// TestLifecycleHooks: the container's lifecycle is passed through (none by default).
func TestLifecycleHooks(t *testing.T) {
	if l := onlyPod(t, renderObjects(t, "")).Containers[0].Lifecycle; l != nil {
		t.Errorf("lifecycle by default: %+v", l)
	}
	l := onlyPod(t, renderObjects(t, "lifecycleHooks: {preStop: {sleep: {seconds: 5}}}")).Containers[0].Lifecycle
	if l == nil || l.PreStop == nil || l.PreStop.Sleep == nil || l.PreStop.Sleep.Seconds != 5 {
		t.Errorf("lifecycle %+v, want a 5 s preStop sleep", l)
	}
}

// TestConfigChecksum: a config change changes the pod template, so the pods roll.
func TestConfigChecksum(t *testing.T) {
	a := renderObjects(t, "")
	b := renderObjects(t, "config: {processors: {buffer: {threads: 16}}}")
	ca := a.deployments[0].Spec.Template.Annotations["checksum/config"]
	cb := b.deployments[0].Spec.Template.Annotations["checksum/config"]
	if ca == cb {
		t.Error("checksum/config did not change with the config")
	}
}

// TestNoSecretsInFiles: no file in configs/ or the chart holds a literal credential.
func TestNoSecretsInFiles(t *testing.T) {
	// A credential key followed by a value that is neither empty nor an env reference.
	re := regexp.MustCompile(`(?i)^\s*(api_key|apikey|password|passwd|user|username|token|secret_token)\s*:\s*(\S.*)$`)
	allowed := regexp.MustCompile(`^("?\$\{env:[A-Z_]+(:-)?\}"?|""|''|null|~)\s*(#.*)?$`)
	var files []string
	for _, root := range []string{"../../configs", chartDir} {
		err := filepath.Walk(root, func(p string, info os.FileInfo, err error) error {
			if err != nil {
				return err
			}
			if !info.IsDir() && (strings.HasSuffix(p, ".yaml") || strings.HasSuffix(p, ".yml")) {
				files = append(files, p)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if len(files) < 10 {
		t.Fatalf("only %d YAML files found", len(files))
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for i, line := range strings.Split(string(b), "\n") {
			m := re.FindStringSubmatch(line)
			if len(m) < 3 || allowed.MatchString(m[2]) {
				continue
			}
			// Template expressions and Secret key names are not values.
			if strings.Contains(m[2], "{{") || strings.HasPrefix(f, chartDir+"/templates") {
				continue
			}
			t.Errorf("%s:%d: literal credential %q: use an environment variable or a Secret", f, i+1, strings.TrimSpace(line))
		}
	}
}

// TestDaemonsetHostPathBuffer: an agent may keep its disk log on a hostPath of its node.
func TestDaemonsetHostPathBuffer(t *testing.T) {
	o := renderObjects(t, "mode: daemonset\nextraVolumes: [{name: buffer, hostPath: {path: /var/lib/tracegate-agent, type: DirectoryOrCreate}}]\n"+storageConfig)
	pod := onlyPod(t, o)
	if got := env(pod.Containers[0])["TRACEGATE_BUFFER_DIR"].Value; got != "/var/lib/tracegate/buffer" {
		t.Errorf("TRACEGATE_BUFFER_DIR = %q", got)
	}
	found := false
	for _, v := range pod.Volumes {
		if v.Name == "buffer" && v.HostPath != nil {
			found = true
		}
	}
	if !found {
		t.Errorf("hostPath volume missing: %+v", pod.Volumes)
	}
}

// TestDaemonsetHostNetwork: with hostNetwork and no dnsPolicy the pod gets ClusterFirstWithHostNet
// (else it could not resolve a gateway's Service name); an explicit dnsPolicy wins.
func TestDaemonsetHostNetwork(t *testing.T) {
	for values, want := range map[string]corev1.DNSPolicy{
		"mode: daemonset\nhostNetwork: true":                     corev1.DNSClusterFirstWithHostNet,
		"mode: daemonset\nhostNetwork: true\ndnsPolicy: Default": corev1.DNSDefault,
		"mode: daemonset": "",
	} {
		if got := onlyPod(t, renderObjects(t, values)).DNSPolicy; got != want {
			t.Errorf("%q: dnsPolicy %q, want %q", values, got, want)
		}
	}
}

// TestNotesWithoutAgentPorts: NOTES.txt names only the host ports the agent has: it renders when
// a port it mentions was removed or disabled.
func TestNotesWithoutAgentPorts(t *testing.T) {
	vars := [3]string{"DD_TRACE_AGENT_URL", "ELASTIC_APM_SERVER_URL", "OTEL_EXPORTER_OTLP_ENDPOINT"}
	for vals, want := range map[string][3]bool{
		"mode: daemonset": {true, true, true},
		"mode: daemonset\nports: {ddtrace: null, elasticapm: null, otlp-http: null}":                                   {false, false, false},
		"mode: daemonset\nports: {ddtrace: {enabled: false, containerPort: 8126}}":                                     {false, true, true},
		"mode: daemonset\nports: {elasticapm: {enabled: false, containerPort: 8200}}":                                  {true, false, true},
		"mode: daemonset\nports: {otlp-http: {enabled: true, containerPort: 4318, servicePort: 4318, hostPort: null}}": {true, true, false},
	} {
		out, err := render(t, values(t, vals))
		if err != nil {
			t.Fatalf("%q: %v", vals, err)
		}
		notes := out["tracegate/templates/NOTES.txt"]
		var got [3]bool
		for i, v := range vars {
			got[i] = strings.Contains(notes, v)
		}
		if got != want {
			t.Errorf("%q: NOTES.txt names %v = %v, want %v:\n%s", vals, vars, got, want, notes)
		}
	}
	// The agent's URL for Elastic APM agents is the node's port 8200.
	out, err := render(t, values(t, "mode: daemonset"))
	if err != nil {
		t.Fatal(err)
	}
	if notes := out["tracegate/templates/NOTES.txt"]; !strings.Contains(notes, "value: http://$(HOST_IP):8200") {
		t.Errorf("NOTES.txt in daemonset mode does not point Elastic APM agents at $(HOST_IP):8200:\n%s", notes)
	}
}

// TestExternalConfigMapWithStorage: with the user's own ConfigMap the chart cannot see its disk
// buffer, and follows `config` instead (as its README says): storage set there mounts the claim and
// sets TRACEGATE_BUFFER_DIR, and no ConfigMap is rendered.
func TestExternalConfigMapWithStorage(t *testing.T) {
	o := renderObjects(t, "mode: statefulset\nconfigMap: {create: false, existingName: mine}\n"+storageConfig+bufferClaim)
	if len(o.configMaps) != 0 {
		t.Errorf("rendered %d ConfigMaps with create: false", len(o.configMaps))
	}
	pod := o.statefulSets[0].Spec.Template.Spec
	if got := env(pod.Containers[0])["TRACEGATE_BUFFER_DIR"].Value; got != "/var/lib/tracegate/buffer" {
		t.Errorf("TRACEGATE_BUFFER_DIR %q", got)
	}
	mounted, usesMine := false, false
	for _, m := range pod.Containers[0].VolumeMounts {
		mounted = mounted || (m.Name == "buffer" && m.MountPath == "/var/lib/tracegate/buffer")
	}
	for _, v := range pod.Volumes {
		usesMine = usesMine || (v.ConfigMap != nil && v.ConfigMap.Name == "mine")
	}
	if !mounted || !usesMine {
		t.Errorf("buffer mounted %v, ConfigMap mine used %v", mounted, usesMine)
	}
}

// TestGrafanaDashboard: enabled, the chart ships dashboards/tracegate.json unchanged in a
// ConfigMap with the sidecar's label; by default it renders none.
func TestGrafanaDashboard(t *testing.T) {
	if o := renderObjects(t, ""); len(o.configMaps) != 1 {
		t.Errorf("%d ConfigMaps by default, want only the config", len(o.configMaps))
	}
	want, err := os.ReadFile(chartDir + "/dashboards/tracegate.json")
	if err != nil {
		t.Fatal(err)
	}
	o := renderObjects(t, "grafanaDashboard: {enabled: true, labels: {grafana_dashboard: \"1\"}}")
	for _, cm := range o.configMaps {
		if !strings.HasSuffix(cm.Name, "-dashboard") {
			continue
		}
		if cm.Labels["grafana_dashboard"] != "1" {
			t.Errorf("labels %v, want grafana_dashboard: \"1\"", cm.Labels)
		}
		if got := cm.Data["tracegate.json"]; got != strings.TrimRight(string(want), "\n") {
			t.Errorf("the ConfigMap's dashboard differs from dashboards/tracegate.json (%d vs %d bytes)", len(got), len(want))
		}
		return
	}
	t.Errorf("no dashboard ConfigMap among %d", len(o.configMaps))
}
