package helm

import (
	"path/filepath"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// TestElasticAPMReceiver: Elastic APM agents reach tracegate on 8200 in every mode, as Datadog
// tracers reach it on 8126: the ConfigMap's config has the elasticapm receiver on 0.0.0.0:8200 in
// the traces, logs and metrics pipelines (transactions and spans, errors and logs, metricsets), with
// the Kibana APM pipeline too, whose receivers come from `config`; the container port and the
// Service port are named elasticapm, the Service's targeting the container's; in daemonset mode the
// port is on the node (hostPort 8200), elsewhere not.
func TestElasticAPMReceiver(t *testing.T) {
	for _, vals := range []string{
		"",
		"mode: daemonset",
		"mode: statefulset",
		"apm: {enabled: true}",
		"mode: statefulset\napm: {enabled: true}",
	} {
		t.Run(vals, func(t *testing.T) {
			o, cfg, _ := renderedConfig(t, vals)
			checkElasticAPMConfig(t, cfg)
			wantHost := int32(0)
			if len(o.daemonSets) > 0 {
				wantHost = 8200
			}
			var c corev1.Container
			for _, pod := range o.pods() {
				c = pod.Spec.Containers[0]
			}
			found := false
			for _, p := range c.Ports {
				if p.Name != "elasticapm" {
					continue
				}
				found = true
				if p.ContainerPort != 8200 || p.Protocol != corev1.ProtocolTCP || p.HostPort != wantHost {
					t.Errorf("container port elasticapm %+v, want 8200/TCP, hostPort %d", p, wantHost)
				}
			}
			if !found {
				t.Errorf("no container port elasticapm among %+v", c.Ports)
			}
			for _, s := range o.services {
				found := false
				for _, p := range s.Spec.Ports {
					if p.Name != "elasticapm" {
						continue
					}
					found = true
					if p.Port != 8200 || p.Protocol != corev1.ProtocolTCP || p.TargetPort.String() != "elasticapm" {
						t.Errorf("Service %s port elasticapm %+v, want 8200/TCP targeting the container port elasticapm", s.Name, p)
					}
				}
				if !found {
					t.Errorf("Service %s has no port elasticapm", s.Name)
				}
			}
		})
	}
}

// TestElasticAPMExamples: every example keeps the elasticapm receiver in its three pipelines (an
// example that lists the traces pipeline's receivers itself lists it too) and its port, except a
// Kafka gateway, which reads Kafka only and serves no receiver port (TestKafkaFollowsConfigs): its
// agents take what Elastic APM agents send.
func TestElasticAPMExamples(t *testing.T) {
	for _, name := range exampleCases(t) {
		t.Run(name, func(t *testing.T) {
			vals := readValues(t, filepath.Join(examplesDir, name, "values.yaml"))
			out, err := render(t, vals)
			if err != nil {
				t.Fatalf("render: %v", err)
			}
			o := decodeAll(t, manifests(out))
			if len(o.configMaps) != 1 {
				t.Fatalf("%d ConfigMaps, want the config's only", len(o.configMaps))
			}
			if dig(vals, "kafka", "role") == "gateway" {
				for _, s := range o.services {
					if slices.ContainsFunc(s.Spec.Ports, func(p corev1.ServicePort) bool { return p.Name == "elasticapm" }) {
						t.Errorf("Kafka gateway: Service %s has the port elasticapm", s.Name)
					}
				}
				return
			}
			checkElasticAPMConfig(t, values(t, o.configMaps[0].Data["config.yaml"]))
			for _, s := range o.services {
				if !slices.ContainsFunc(s.Spec.Ports, func(p corev1.ServicePort) bool { return p.Name == "elasticapm" && p.Port == 8200 }) {
					t.Errorf("Service %s has no port elasticapm 8200", s.Name)
				}
			}
		})
	}
}

func checkElasticAPMConfig(t *testing.T, cfg map[string]any) {
	t.Helper()
	recv, _ := cfg["receivers"].(map[string]any)
	apm, ok := recv["elasticapm"].(map[string]any)
	if !ok {
		t.Fatalf("config has no elasticapm receiver: receivers %v", recv)
	}
	if apm["endpoint"] != "0.0.0.0:8200" {
		t.Errorf("elasticapm endpoint %v, want 0.0.0.0:8200", apm["endpoint"])
	}
	pipelines, _ := cfg["service"].(map[string]any)["pipelines"].(map[string]any)
	for _, p := range []string{"traces", "logs", "metrics"} {
		pl, _ := pipelines[p].(map[string]any)
		list, _ := pl["receivers"].([]any)
		if !slices.Contains(list, any("elasticapm")) {
			t.Errorf("pipeline %s: receivers %v, want elasticapm among them", p, list)
		}
	}
}
