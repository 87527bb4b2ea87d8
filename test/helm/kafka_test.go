package helm

import (
	"encoding/json"
	"os"
	"path"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml" //nolint:depguard // decodes as Helm and Kubernetes do, through JSON (k8s API types carry json tags only); go.yaml.in/yaml cannot
)

const (
	kafkaAgentOverlay   = "../../configs/kafka/agent.yaml"
	kafkaGatewayOverlay = "../../configs/kafka/gateway.yaml"
	// kafkaBrokers are the brokers of the tests that do not read an example.
	kafkaBrokers = "kafka-0.kafka.svc:9092,kafka-1.kafka.svc:9092"
)

// kafkaOverlay is the configs/kafka file of a role.
func kafkaOverlay(role string) string {
	return map[string]string{"agent": kafkaAgentOverlay, "gateway": kafkaGatewayOverlay}[role]
}

// withValues returns the YAML of base with more merged over it, as Helm merges a second -f file.
func withValues(t *testing.T, base, more string) string {
	t.Helper()
	b, err := yaml.Marshal(mergeConfig(values(t, base), values(t, more)))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func kafkaRole(role string) string {
	return "kafka: {role: " + role + ", brokers: ['" + strings.ReplaceAll(kafkaBrokers, ",", "', '") + "']}"
}

// requireSameConfig fails when got is not want, showing the first differing line.
func requireSameConfig(t *testing.T, got, want map[string]any, what string) {
	t.Helper()
	if !reflect.DeepEqual(got, want) {
		g, _ := json.MarshalIndent(got, "", "  ")
		w, _ := json.MarshalIndent(want, "", "  ")
		t.Fatalf("the rendered config is not %s:\n%s", what, firstDiff(string(w), string(g), "expected", "rendered"))
	}
}

// servedPorts returns the container's port names and, per Service, its port names.
func servedPorts(o *objects, c corev1.Container) (container []string, services map[string][]string) {
	for _, p := range c.Ports {
		container = append(container, p.Name)
	}
	sort.Strings(container)
	services = map[string][]string{}
	for _, s := range o.services {
		var names []string
		for _, p := range s.Spec.Ports {
			names = append(names, p.Name)
		}
		sort.Strings(names)
		services[s.Name] = names
	}
	return container, services
}

// TestKafkaFollowsConfigs: kafka.role renders the config it renders without it plus
// configs/kafka/<role>.yaml, merged as the collector merges `--config base --config <role>.yaml`
// (after configs/elasticsearch/apm.yaml when apm.enabled, as gateway.yaml asks); KAFKA_BROKERS is
// the brokers joined with ","; the gateway has no receiver port left on its container or its
// Services, the agent keeps every one. Each config passes `tracegate validate`.
func TestKafkaFollowsConfigs(t *testing.T) {
	bin := requireBinary(t)
	for _, role := range []string{"agent", "gateway"} {
		for _, tc := range []struct{ name, values string }{
			{"deployment", ""},
			{"daemonset", "mode: daemonset"},
			{"statefulset", "mode: statefulset"},
			{"statefulset with apm", "mode: statefulset\napm: {enabled: true}"},
			{"deployment with apm", "apm: {enabled: true}"},
			{"own pipelines", "config: {service: {pipelines: {traces: {receivers: [otlp], processors: [memory_limiter, buffer]}}}}"},
		} {
			if role == "agent" && strings.Contains(tc.values, "apm") {
				continue // refused: TestKafkaRenderFailures
			}
			t.Run(role+"/"+tc.name, func(t *testing.T) {
				baseObjs, base, _ := renderedConfig(t, tc.values)
				o, got, text := renderedConfig(t, withValues(t, tc.values, kafkaRole(role)))
				requireSameConfig(t, got, mergeConfig(base, readConfig(t, kafkaOverlay(role))), "the base plus "+kafkaOverlay(role))

				c := onlyPod(t, o).Containers[0]
				if got := env(c)["KAFKA_BROKERS"]; got.Value != kafkaBrokers || got.ValueFrom != nil {
					t.Errorf("KAFKA_BROKERS %+v, want %q", got, kafkaBrokers)
				}
				names, services := servedPorts(o, c)
				if role == "gateway" {
					// Only metrics: a receiver port added to the chart's defaults must join
					// tracegate.portServed's list.
					for name, ports := range services {
						if !reflect.DeepEqual(ports, []string{"metrics"}) {
							t.Errorf("gateway: Service %s ports %v, want [metrics]: the kafka receiver is the only one in the pipelines", name, ports)
						}
					}
					if !reflect.DeepEqual(names, []string{"metrics"}) {
						t.Errorf("gateway: container ports %v, want [metrics]", names)
					}
				} else {
					baseNames, baseServices := servedPorts(baseObjs, onlyPod(t, baseObjs).Containers[0])
					if !reflect.DeepEqual(names, baseNames) || !reflect.DeepEqual(services, baseServices) {
						t.Errorf("agent: ports %v %v, want those without Kafka: %v %v", names, services, baseNames, baseServices)
					}
				}
				validateConfig(t, bin, text, c.Env)
			})
		}
	}
}

// kafkaSecurity is what kafka's tls and sasl values add to the component's settings: the
// Secrets' files under /etc/tracegate-kafka, the credentials as environment references.
func kafkaSecurity(k map[string]any) map[string]any {
	comp := map[string]any{}
	if enabled, _ := dig(k, "tls", "enabled").(bool); enabled {
		tls := map[string]any{}
		if name, _ := dig(k, "tls", "ca", "secretName").(string); name != "" {
			tls["ca_file"] = "/etc/tracegate-kafka/ca/" + dig(k, "tls", "ca", "key").(string)
		}
		if name, _ := dig(k, "tls", "clientCert", "secretName").(string); name != "" {
			tls["cert_file"] = "/etc/tracegate-kafka/client/" + dig(k, "tls", "clientCert", "certKey").(string)
			tls["key_file"] = "/etc/tracegate-kafka/client/" + dig(k, "tls", "clientCert", "keyKey").(string)
		}
		comp["tls"] = tls
	}
	if mech, _ := dig(k, "sasl", "mechanism").(string); mech != "" {
		comp["auth"] = map[string]any{"sasl": map[string]any{
			"mechanism": mech, "username": "${env:KAFKA_SASL_USERNAME}", "password": "${env:KAFKA_SASL_PASSWORD}",
		}}
	}
	return comp
}

// componentPath is where the role's kafka component is in the config.
func componentPath(role string) []string {
	if role == "agent" {
		return []string{"exporters", "kafka"}
	}
	return []string{"receivers", "kafka"}
}

// checkKafkaSecrets: every TLS file the config names is mounted read-only from the Secret and key
// the values name (only the keys read, so a missing key keeps the pod from starting); the SASL
// credentials come from the values' Secret keys, required, never literal.
func checkKafkaSecrets(t *testing.T, role string, k, cfg map[string]any, pod corev1.PodSpec) {
	t.Helper()
	c := pod.Containers[0]
	vols := map[string]corev1.Volume{}
	for _, v := range pod.Volumes {
		vols[v.Name] = v
	}
	tls, _ := dig(cfg, append(componentPath(role), "tls")...).(map[string]any)
	want := map[string][2]string{} // file -> Secret, key
	if name, _ := dig(k, "tls", "ca", "secretName").(string); name != "" {
		want["ca_file"] = [2]string{name, dig(k, "tls", "ca", "key").(string)}
	}
	if name, _ := dig(k, "tls", "clientCert", "secretName").(string); name != "" {
		want["cert_file"] = [2]string{name, dig(k, "tls", "clientCert", "certKey").(string)}
		want["key_file"] = [2]string{name, dig(k, "tls", "clientCert", "keyKey").(string)}
	}
	for field, src := range want {
		file, _ := tls[field].(string)
		found := false
		for _, m := range c.VolumeMounts {
			if m.MountPath != path.Dir(file) {
				continue
			}
			v := vols[m.Name]
			if !m.ReadOnly || v.Secret == nil || v.Secret.SecretName != src[0] {
				t.Errorf("%s %q: mount %+v of volume %+v, want Secret %s read-only", field, file, m, v, src[0])
				continue
			}
			for _, it := range v.Secret.Items {
				found = found || (it.Key == src[1] && it.Path == path.Base(file))
			}
		}
		if !found {
			t.Errorf("%s %q: no mount of key %s of Secret %s there (mounts %+v, volumes %+v)", field, file, src[1], src[0], c.VolumeMounts, pod.Volumes)
		}
	}
	e := env(c)
	mech, _ := dig(k, "sasl", "mechanism").(string)
	for v, keyField := range map[string]string{"KAFKA_SASL_USERNAME": "usernameKey", "KAFKA_SASL_PASSWORD": "passwordKey"} {
		ev, set := e[v]
		if mech == "" {
			if set {
				t.Errorf("%s set without sasl.mechanism", v)
			}
			continue
		}
		ref := ev.ValueFrom
		if ev.Value != "" || ref == nil || ref.SecretKeyRef == nil {
			t.Errorf("%s %+v, want it from a Secret", v, ev)
			continue
		}
		if ref.SecretKeyRef.Name != dig(k, "sasl", "existingSecret", "name") || ref.SecretKeyRef.Key != dig(k, "sasl", "existingSecret", keyField) {
			t.Errorf("%s from %s/%s, want the values' Secret and %s", v, ref.SecretKeyRef.Name, ref.SecretKeyRef.Key, keyField)
		}
		if ref.SecretKeyRef.Optional != nil && *ref.SecretKeyRef.Optional {
			t.Errorf("%s: optional reference; a missing Secret or key would start the pod without it", v)
		}
	}
}

// TestKafkaSecurity: kafka.tls and kafka.sasl reach the role's component as the Secrets' mounted
// files and the credentials' environment variables, for both roles.
func TestKafkaSecurity(t *testing.T) {
	bin := requireBinary(t)
	for _, role := range []string{"agent", "gateway"} {
		for _, tc := range []struct{ name, values string }{
			{"system roots", "kafka: {tls: {enabled: true}}"},
			{"own CA", "kafka: {tls: {enabled: true, ca: {secretName: kafka-ca, key: ca.pem}}}"},
			{"mutual TLS", "kafka: {tls: {enabled: true, ca: {secretName: kafka-ca}, clientCert: {secretName: tracegate-user, certKey: user.crt, keyKey: user.key}}}"},
			{"SCRAM", "kafka: {sasl: {mechanism: SCRAM-SHA-256, existingSecret: {name: kafka-login}}}"},
			{"TLS and PLAIN", "kafka: {tls: {enabled: true, ca: {secretName: kafka-ca}}, sasl: {mechanism: PLAIN, existingSecret: {name: kafka-login, usernameKey: user, passwordKey: pass}}}"},
		} {
			t.Run(role+"/"+tc.name, func(t *testing.T) {
				vals := withValues(t, kafkaRole(role), tc.values)
				_, base, _ := renderedConfig(t, "")
				o, got, text := renderedConfig(t, vals)
				k := values(t, vals)["kafka"].(map[string]any)
				// The values as Helm coalesces them: the chart's defaults under the test's.
				k = mergeConfig(readValues(t, chartDir+"/values.yaml")["kafka"].(map[string]any), k)
				want := mergeConfig(base, readConfig(t, kafkaOverlay(role)))
				mergeConfig(dig(want, componentPath(role)...).(map[string]any), kafkaSecurity(k))
				requireSameConfig(t, got, want, "the base plus "+kafkaOverlay(role)+" and the TLS and SASL settings")
				pod := onlyPod(t, o)
				checkKafkaSecrets(t, role, k, got, pod)
				validateConfig(t, bin, text, pod.Containers[0].Env)
			})
		}
	}
}

// TestKafkaExamples: the kafka-agent and kafka-gateway examples render what their values without
// `kafka` render, plus their role's configs/kafka file and their TLS and SASL settings.
func TestKafkaExamples(t *testing.T) {
	for example, role := range map[string]string{"kafka-agent": "agent", "kafka-gateway": "gateway"} {
		t.Run(example, func(t *testing.T) {
			vals := readValues(t, filepath.Join(examplesDir, example, "values.yaml"))
			k, _ := vals["kafka"].(map[string]any)
			if k["role"] != role {
				t.Fatalf("kafka.role %v, want %s", k["role"], role)
			}
			k = mergeConfig(readValues(t, chartDir+"/values.yaml")["kafka"].(map[string]any), k)
			delete(vals, "kafka")
			_, base, _ := renderedConfig(t, mustYAML(t, vals))
			raw, err := os.ReadFile(filepath.Join(examplesDir, example, "values.yaml"))
			if err != nil {
				t.Fatal(err)
			}
			o, got, _ := renderedConfig(t, string(raw))
			want := mergeConfig(base, readConfig(t, kafkaOverlay(role)))
			mergeConfig(dig(want, componentPath(role)...).(map[string]any), kafkaSecurity(k))
			requireSameConfig(t, got, want, "the example without kafka plus "+kafkaOverlay(role)+" and the TLS and SASL settings")
			checkKafkaSecrets(t, role, k, got, onlyPod(t, o))
		})
	}
}

func mustYAML(t *testing.T, v any) string {
	t.Helper()
	b, err := yaml.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestKafkaOwnSettings: settings under config.exporters.kafka (agent) or config.receivers.kafka
// (gateway) are merged over the chart's, false and zero included; the pipelines stay the chart's.
func TestKafkaOwnSettings(t *testing.T) {
	bin := requireBinary(t)
	o, got, text := renderedConfig(t, withValues(t, kafkaRole("agent"), `
config:
  exporters:
    kafka:
      partition_traces_by_id: false
      producer: {max_message_bytes: 4000000}
`))
	if v := dig(got, "exporters", "kafka", "producer", "max_message_bytes"); v != float64(4000000) {
		t.Errorf("producer.max_message_bytes %v, want 4000000", v)
	}
	if v := dig(got, "exporters", "kafka", "producer", "required_acks"); v != float64(-1) {
		t.Errorf("producer.required_acks %v, want the chart's -1 kept", v)
	}
	if v := dig(got, "exporters", "kafka", "partition_traces_by_id"); v != false {
		t.Errorf("partition_traces_by_id %v, want the user's false", v)
	}
	if v := dig(got, "service", "pipelines", "traces", "exporters"); !reflect.DeepEqual(v, []any{"kafka"}) {
		t.Errorf("traces exporters %v, want [kafka]", v)
	}
	validateConfig(t, bin, text, onlyPod(t, o).Containers[0].Env)

	_, got, _ = renderedConfig(t, withValues(t, kafkaRole("gateway"), "config: {receivers: {kafka: {group_id: mine, session_timeout: 30s}}}\nkafka: {groupId: theirs}"))
	if v := dig(got, "receivers", "kafka", "group_id"); v != "mine" {
		t.Errorf("group_id %v, want config's mine over kafka.groupId", v)
	}
	if v := dig(got, "receivers", "kafka", "session_timeout"); v != "30s" {
		t.Errorf("session_timeout %v, want 30s", v)
	}
	_, got, _ = renderedConfig(t, withValues(t, kafkaRole("gateway"), "kafka: {groupId: tracegate-eu, topics: {traces: spans-eu, logs: logs-eu, metrics: metrics-eu}}"))
	for sig, topic := range map[string]string{"traces": "spans-eu", "logs": "logs-eu", "metrics": "metrics-eu"} {
		if v := dig(got, "receivers", "kafka", sig, "topics"); !reflect.DeepEqual(v, []any{topic}) {
			t.Errorf("receivers.kafka.%s.topics %v, want [%s]", sig, v, topic)
		}
	}
	if v := dig(got, "receivers", "kafka", "group_id"); v != "tracegate-eu" {
		t.Errorf("group_id %v, want kafka.groupId tracegate-eu", v)
	}
}

// TestKafkaRenderFailures: Kafka values that cannot work fail with what to do.
func TestKafkaRenderFailures(t *testing.T) {
	for _, tc := range []struct{ name, values, err string }{
		{"schema: unknown role", "kafka: {role: producer, brokers: ['k:9092']}", "at '/kafka/role': value must be one of '', 'agent', 'gateway'"},
		{"schema: role without brokers", "kafka: {role: agent}", "at '/kafka/brokers': minItems: got 0, want 1"},
		{"schema: broker without port", "kafka: {role: agent, brokers: [kafka]}", "at '/kafka/brokers/0': 'kafka' does not match pattern"},
		{"schema: unknown mechanism", "kafka: {role: agent, brokers: ['k:9092'], sasl: {mechanism: GSSAPI}}", "at '/kafka/sasl/mechanism': value must be one of"},
		{"schema: SASL without Secret", "kafka: {role: agent, brokers: ['k:9092'], sasl: {mechanism: PLAIN}}", "at '/kafka/sasl/existingSecret/name': minLength: got 0, want 1"},
		{"schema: unknown kafka value", "kafka: {role: agent, brokers: ['k:9092'], topic: x}", "at '/kafka': additional properties 'topic' not allowed"},
		{
			"agent with apm", kafkaRole("agent") + "\napm: {enabled: true}",
			"kafka.role agent with apm.enabled: the agents only buffer and forward to Kafka; enable apm on the gateways",
		},
		{
			"agent with tail sampling", kafkaRole("agent") + "\ntailSampling: {enabled: true}",
			"kafka.role agent with tailSampling.enabled",
		},
		{
			"agent without buffer", kafkaRole("agent") + "\nconfig: {processors: {buffer: null}}",
			"kafka.role agent: the pipelines run the processor buffer, which config.processors does not have",
		},
		{
			"own ConfigMap", kafkaRole("gateway") + "\nconfigMap: {create: false, existingName: mine}",
			"kafka.role gateway renders configs/kafka/gateway.yaml into the chart's ConfigMap, but configMap.create is false",
		},
		{
			"CA Secret without TLS", "kafka: {role: agent, brokers: ['k:9092'], tls: {ca: {secretName: kafka-ca}}}",
			"kafka.tls.ca.secretName or kafka.tls.clientCert.secretName is set but kafka.tls.enabled is false",
		},
		{"TLS without a role", "kafka: {tls: {enabled: true}}", "kafka.tls.enabled without kafka.role"},
		{"SASL without a role", "kafka: {sasl: {mechanism: PLAIN, existingSecret: {name: s}}}", "kafka.sasl.mechanism without kafka.role"},
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

// TestKafkaNotes: NOTES.txt tells a gateway's reader where it reads from instead of listing ports
// no client can reach, and an agent's where it writes.
func TestKafkaNotes(t *testing.T) {
	for role, want := range map[string]string{
		"gateway": "Kafka gateway: reads the topics otlp_spans, otlp_logs and otlp_metrics from " + kafkaBrokers,
		"agent":   "Kafka agent: everything received goes through the buffer to the topics otlp_spans, otlp_logs and",
	} {
		out, err := render(t, values(t, kafkaRole(role)+"\nmode: daemonset"))
		if err != nil {
			t.Fatal(err)
		}
		notes := out["tracegate/templates/NOTES.txt"]
		if !strings.Contains(notes, want) {
			t.Errorf("%s: NOTES.txt, want %q:\n%s", role, want, notes)
		}
		if sends := strings.Contains(notes, "Send traces to the Service"); sends != (role == "agent") {
			t.Errorf("%s: NOTES.txt lists the receiver ports: %v, want %v:\n%s", role, sends, role == "agent", notes)
		}
		if strings.Contains(notes, "WARNING: elasticsearch.endpoints is empty") == (role == "agent") {
			t.Errorf("%s: NOTES.txt Elasticsearch warning, want it for the gateway only (the agent writes to Kafka):\n%s", role, notes)
		}
	}
}

// TestKafkaGatewayKeepsAddedPorts: a port added in values stays on a gateway (only the chart's
// receiver ports go), and so does its hostPort in daemonset mode.
func TestKafkaGatewayKeepsAddedPorts(t *testing.T) {
	o := renderObjects(t, withValues(t, kafkaRole("gateway"), "mode: daemonset\nports: {admin: {enabled: true, containerPort: 9000, hostPort: 9000}}"))
	names, services := servedPorts(o, onlyPod(t, o).Containers[0])
	if !reflect.DeepEqual(names, []string{"admin", "metrics"}) {
		t.Errorf("container ports %v, want [admin metrics]", names)
	}
	for name, ports := range services {
		if !reflect.DeepEqual(ports, []string{"admin", "metrics"}) {
			t.Errorf("Service %s ports %v, want [admin metrics]", name, ports)
		}
	}
}
