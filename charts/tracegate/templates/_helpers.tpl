{{/* Chart name, truncated to 63 characters (DNS label). */}}
{{- define "tracegate.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* Full name: the release name, prefixed with the chart name unless it already holds it. */}}
{{- define "tracegate.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{- define "tracegate.namespace" -}}
{{- default .Release.Namespace .Values.namespaceOverride }}
{{- end }}

{{- define "tracegate.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "tracegate.selectorLabels" -}}
app.kubernetes.io/name: {{ include "tracegate.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{- define "tracegate.labels" -}}
helm.sh/chart: {{ include "tracegate.chart" . }}
{{ include "tracegate.selectorLabels" . }}
app.kubernetes.io/version: {{ .Values.image.tag | default .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/component: {{ include "tracegate.component" . }}
{{- with .Values.additionalLabels }}
{{ toYaml . }}
{{- end }}
{{- end }}

{{- define "tracegate.component" -}}
{{- if eq .Values.mode "daemonset" }}agent{{ else }}gateway{{ end }}
{{- end }}

{{- define "tracegate.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "tracegate.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- default "default" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{- define "tracegate.configName" -}}
{{- if .Values.configMap.create }}
{{- include "tracegate.fullname" . }}
{{- else }}
{{- .Values.configMap.existingName }}
{{- end }}
{{- end }}

{{- define "tracegate.esSecretName" -}}
{{- printf "%s-elasticsearch" (include "tracegate.fullname" .) | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* "true" when the chart creates the Elasticsearch credentials Secret from literal values. */}}
{{- define "tracegate.createEsSecret" -}}
{{- $es := .Values.elasticsearch }}
{{- if or $es.apiKey $es.username $es.password }}true{{ end }}
{{- end }}

{{/* "true" in statefulset mode with bufferStorage.statefulset.enabled when config gives the
     buffer no storage: the chart then adds a disk log in overflow mode on a claim of its own. */}}
{{- define "tracegate.defaultDiskBuffer" -}}
{{- $buffer := dig "processors" "buffer" nil (.Values.config | default dict) }}
{{- if and (eq .Values.mode "statefulset") .Values.bufferStorage.statefulset.enabled (kindIs "map" $buffer) (not (get $buffer "storage")) }}true{{ end }}
{{- end }}

{{/* Merges .src into .dst (dicts; .dst is changed) as the collector merges a further --config:
     maps key by key, anything else (lists, scalars, null) replaced. */}}
{{- define "tracegate.merge" -}}
{{- $dst := .dst }}
{{- range $k, $v := .src }}
{{- if and (kindIs "map" $v) (kindIs "map" (get $dst $k)) }}
{{- include "tracegate.merge" (dict "dst" (get $dst $k) "src" $v) }}
{{- else }}
{{- $_ := set $dst $k $v }}
{{- end }}
{{- end }}
{{- end }}

{{/* The config the pods run, as YAML: config, plus the default disk buffer (defaultDiskBuffer)
     with 90 % of the claim's size as the log's capacity (segments and the index need the rest),
     then, in this order as further --config files would be: the Kibana APM pipeline when
     apm.enabled (tracegate.withAPM, _apm.tpl), tail sampling when tailSampling.enabled, the Kafka
     tier of kafka.role (tracegate.withKafka, _kafka.tpl), the loadbalancing exporter when
     loadBalancing.enabled (_tracerouting.tpl). */}}
{{- define "tracegate.effectiveConfig" -}}
{{- $cfg := deepCopy (.Values.config | default dict) }}
{{- if include "tracegate.defaultDiskBuffer" . }}
{{- $bytes := include "tracegate.quantityToBytes" .Values.bufferStorage.statefulset.size | float64 }}
{{- $mib := divf (mulf $bytes 0.9) 1048576 | floor | int64 }}
{{- $_ := set $cfg.processors.buffer "storage" (dict "directory" "${env:TRACEGATE_BUFFER_DIR}" "mode" "overflow" "capacity_mib" $mib) }}
{{- end }}
{{- $args := dict "cfg" $cfg "Values" .Values "Release" .Release }}
{{- if (.Values.apm | default dict).enabled }}
{{- include "tracegate.withAPM" $args }}
{{- end }}
{{- if (.Values.tailSampling | default dict).enabled }}
{{- include "tracegate.withTailSampling" $args }}
{{- end }}
{{- if include "tracegate.kafkaRole" . }}
{{- include "tracegate.withKafka" $args }}
{{- end }}
{{- if (.Values.loadBalancing | default dict).enabled }}
{{- include "tracegate.withLoadBalancing" $args }}
{{- end }}
{{- toYaml $cfg }}
{{- end }}

{{/* "true" when the effective config gives the buffer processor a disk log. */}}
{{- define "tracegate.bufferStorageEnabled" -}}
{{- $buffer := dig "processors" "buffer" dict (include "tracegate.effectiveConfig" . | fromYaml) }}
{{- if and (kindIs "map" $buffer) (get $buffer "storage") }}true{{ end }}
{{- end }}

{{/* "true" when statefulset.volumeClaimTemplates has an entry named bufferStorage.volumeName. */}}
{{- define "tracegate.bufferClaimListed" -}}
{{- $vol := .Values.bufferStorage.volumeName }}
{{- range .Values.statefulset.volumeClaimTemplates }}
{{- if eq (dig "metadata" "name" "" .) $vol }}true{{ end }}
{{- end }}
{{- end }}

{{/* "true" when the chart adds the buffer's claim (bufferStorage.statefulset) to the StatefulSet. */}}
{{- define "tracegate.defaultBufferClaim" -}}
{{- if and (eq .Values.mode "statefulset") .Values.bufferStorage.statefulset.enabled (include "tracegate.bufferStorageEnabled" .) (not (include "tracegate.bufferClaimListed" .)) }}true{{ end }}
{{- end }}

{{/*
A Kubernetes quantity (512Mi, 2G, 1.5Gi, 1073741824) in bytes, as an integer string.
*/}}
{{- define "tracegate.quantityToBytes" -}}
{{- $q := toString . }}
{{- $units := dict "Ki" 1024 "Mi" 1048576 "Gi" 1073741824 "Ti" 1099511627776 "k" 1000 "M" 1000000 "G" 1000000000 "T" 1000000000000 }}
{{- $bytes := "" }}
{{- range $suffix, $mult := $units }}
{{- if and (not $bytes) (hasSuffix $suffix $q) (regexMatch "^[0-9.]+$" (trimSuffix $suffix $q)) }}
{{- $bytes = mulf (trimSuffix $suffix $q | float64) $mult | floor | int64 | toString }}
{{- end }}
{{- end }}
{{- if and (not $bytes) (regexMatch "^[0-9]+$" $q) }}
{{- $bytes = $q }}
{{- end }}
{{- if not $bytes }}
{{- fail (printf "resources.limits.memory %q: use a plain number of bytes or a Ki/Mi/Gi/Ti/k/M/G/T suffix (or set useGOMEMLIMIT: false)" $q) }}
{{- end }}
{{- $bytes }}
{{- end }}

{{/* GOMEMLIMIT: 90% of the memory limit, in MiB (the Go runtime's own syntax). Above the
     memory_limiter's 80% (of heap in use, which is less than what GOMEMLIMIT counts), so the
     limiter refuses data before the garbage collector starts running flat out to hold the limit. */}}
{{- define "tracegate.gomemlimit" -}}
{{- $bytes := include "tracegate.quantityToBytes" . | float64 }}
{{- printf "%dMiB" (divf (mulf $bytes 0.9) 1048576 | floor | int64) }}
{{- end }}

{{/* Checks of the values that the schema cannot express; fail with a message saying what to do. */}}
{{- define "tracegate.validate" -}}
{{- $mode := .Values.mode }}
{{- if not (has $mode (list "deployment" "daemonset" "statefulset")) }}
{{- fail (printf "mode %q: use deployment, daemonset or statefulset" $mode) }}
{{- end }}
{{- if and (not .Values.configMap.create) (not .Values.configMap.existingName) }}
{{- fail "configMap.create is false: set configMap.existingName to a ConfigMap with a config.yaml key" }}
{{- end }}
{{- /* The buffer's disk log must live on a volume. */}}
{{- if include "tracegate.bufferStorageEnabled" . }}
{{- $vol := .Values.bufferStorage.volumeName }}
{{- $inClaims := or (include "tracegate.bufferClaimListed" .) (include "tracegate.defaultBufferClaim" .) }}
{{- $extra := dict }}
{{- range .Values.extraVolumes }}
{{- if eq .name $vol }}{{ $extra = . }}{{ end }}
{{- end }}
{{- if eq $mode "statefulset" }}
{{- if not $inClaims }}
{{- fail (printf "config.processors.buffer.storage is set (the buffer's disk log) but has no persistent volume: add a statefulset.volumeClaimTemplates entry named %q (bufferStorage.volumeName), or remove config.processors.buffer.storage for a memory-only buffer" $vol) }}
{{- end }}
{{- if and $extra (include "tracegate.bufferClaimListed" .) }}
{{- fail (printf "volume %q is both in statefulset.volumeClaimTemplates and extraVolumes: keep the claim template only" $vol) }}
{{- end }}
{{- else }}
{{- if not $extra }}
{{- fail (printf "config.processors.buffer.storage is set (the buffer's disk log) but has no volume in %s mode: use mode statefulset with a statefulset.volumeClaimTemplates entry named %q for a persistent buffer, or (daemonset mode) an extraVolumes hostPath entry named %q, or remove config.processors.buffer.storage for a memory-only buffer" $mode $vol $vol) }}
{{- end }}
{{- /* With storage, shutdown writes the memory queue to the disk log instead of delivering it:
       on a volume deleted with the pod, every rollout, scale-down or eviction would lose it. */}}
{{- if or (hasKey $extra "emptyDir") (hasKey $extra "ephemeral") }}
{{- fail (printf "extraVolumes %q is deleted with its pod, but at shutdown the buffer writes what it holds to its disk log, which every rollout, scale-down or eviction would then lose: use mode statefulset with statefulset.volumeClaimTemplates (or, in daemonset mode, a hostPath), or remove config.processors.buffer.storage: a memory-only buffer delivers its queue at shutdown" $vol) }}
{{- end }}
{{- if $extra.persistentVolumeClaim }}
{{- fail (printf "extraVolumes %q is a persistentVolumeClaim shared by every pod of the %s, but the buffer needs one directory per pod (flock): use mode statefulset with statefulset.volumeClaimTemplates" $vol $mode) }}
{{- end }}
{{- if and $extra.hostPath (eq $mode "deployment") }}
{{- fail (printf "extraVolumes %q is a hostPath in deployment mode: two pods on one node would share the buffer directory (flock); use mode statefulset, or daemonset for a hostPath per node" $vol) }}
{{- end }}
{{- end }}
{{- $dir := toString (dig "processors" "buffer" "storage" "directory" "" (include "tracegate.effectiveConfig" . | fromYaml)) }}
{{- if not (or (contains "TRACEGATE_BUFFER_DIR" $dir) (hasPrefix .Values.bufferStorage.mountPath $dir)) }}
{{- fail (printf "config.processors.buffer.storage.directory %q is not on the buffer volume: use ${env:TRACEGATE_BUFFER_DIR} (set to bufferStorage.mountPath %q)" $dir .Values.bufferStorage.mountPath) }}
{{- end }}
{{- end }}
{{- /* Kibana APM: the overlay's pipelines need the base's processors and exporter, the otel
       mapping, and a config the chart renders. */}}
{{- if (.Values.apm | default dict).enabled }}
{{- if not .Values.configMap.create }}
{{- fail "apm.enabled renders the APM pipeline into the chart's ConfigMap, but configMap.create is false: put configs/elasticsearch/apm.yaml's pipeline into your own ConfigMap instead, or set configMap.create: true" }}
{{- end }}
{{- $base := .Values.config | default dict }}
{{- $procs := dig "processors" nil $base | default dict }}
{{- $classic := include "tracegate.apmClassic" . }}
{{- range $p := ternary (list "memory_limiter" "tracesampling" "buffer") (list "memory_limiter" "elasticmapping" "buffer") (eq $classic "true") }}
{{- if not (hasKey $procs $p) }}
{{- fail (printf "apm.enabled: the APM pipelines run the processor %s, which config.processors does not have" $p) }}
{{- end }}
{{- end }}
{{- range $e := list "elasticsearch" "elasticsearch_documents" }}
{{- if not (hasKey (dig "exporters" nil $base | default dict) $e) }}
{{- fail (printf "apm.enabled: the APM pipelines write through the %s exporter, which config.exporters does not have (an agent that forwards to a gateway: enable apm on the gateway only)" $e) }}
{{- end }}
{{- end }}
{{- $mapping := toString (dig "processors" "elasticmapping" "mode" "otel" $base) }}
{{- if and $classic (.Values.tailSampling | default dict).enabled }}
{{- fail "tailSampling.enabled with apm.mode classic: the classic path counts its metricsets in the connector that ends the pipelines, after any sampling in them, so tail sampling would leave the dropped traces out of the counts; run it with apm.mode otel, or without tail sampling" }}
{{- end }}
{{- if and (not $classic) (ne $mapping "otel") }}
{{- fail (printf "apm.enabled needs the otel mapping (Kibana's APM UI reads the otel data streams), but config.processors.elasticmapping.mode is %q" $mapping) }}
{{- end }}
{{- end }}
{{- /* The Kafka tier. */}}
{{- $kafka := .Values.kafka | default dict }}
{{- $role := include "tracegate.kafkaRole" . }}
{{- if $role }}
{{- if not .Values.configMap.create }}
{{- fail (printf "kafka.role %s renders configs/kafka/%s.yaml into the chart's ConfigMap, but configMap.create is false: put that file's settings into your own ConfigMap instead, or set configMap.create: true" $role $role) }}
{{- end }}
{{- if and (eq $role "agent") (.Values.apm | default dict).enabled }}
{{- fail "kafka.role agent with apm.enabled: the agents only buffer and forward to Kafka; enable apm on the gateways (kafka.role gateway)" }}
{{- end }}
{{- if and (eq $role "agent") (.Values.tailSampling | default dict).enabled }}
{{- fail "kafka.role agent with tailSampling.enabled: the agents only buffer and forward to Kafka; enable tailSampling on the gateways (kafka.role gateway), which get every span of a trace from one partition" }}
{{- end }}
{{- if eq $role "agent" }}
{{- $procs := dig "processors" nil (.Values.config | default dict) | default dict }}
{{- range $p := list "memory_limiter" "buffer" }}
{{- if not (hasKey $procs $p) }}
{{- fail (printf "kafka.role agent: the pipelines run the processor %s, which config.processors does not have" $p) }}
{{- end }}
{{- end }}
{{- end }}
{{- end }}
{{- with $kafka.tls }}
{{- if and (not .enabled) (or .ca.secretName .clientCert.secretName) }}
{{- fail "kafka.tls.ca.secretName or kafka.tls.clientCert.secretName is set but kafka.tls.enabled is false: set kafka.tls.enabled: true, or remove the Secret names" }}
{{- end }}
{{- if and .enabled (not $role) }}
{{- fail "kafka.tls.enabled without kafka.role: set kafka.role to agent or gateway" }}
{{- end }}
{{- end }}
{{- if and $kafka.sasl $kafka.sasl.mechanism (not $role) }}
{{- fail "kafka.sasl.mechanism without kafka.role: set kafka.role to agent or gateway" }}
{{- end }}
{{- /* Trace-id routing. */}}
{{- if (.Values.loadBalancing | default dict).enabled }}
{{- if $role }}
{{- fail (printf "loadBalancing.enabled with kafka.role %s: Kafka already sends each trace to one gateway (one partition per trace id); choose one of the two" $role) }}
{{- end }}
{{- if (.Values.apm | default dict).enabled }}
{{- fail "loadBalancing.enabled with apm.enabled: an agent that routes spans to the gateways runs no APM pipeline; enable apm on the gateways" }}
{{- end }}
{{- if (.Values.tailSampling | default dict).enabled }}
{{- fail "loadBalancing.enabled with tailSampling.enabled: tail sampling runs on the gateways the agents route to; enable it in the gateways' release" }}
{{- end }}
{{- if not .Values.configMap.create }}
{{- fail "loadBalancing.enabled renders the loadbalancing exporter into the chart's ConfigMap, but configMap.create is false: set configMap.create: true" }}
{{- end }}
{{- end }}
{{- if and (.Values.tailSampling | default dict).enabled (not .Values.configMap.create) }}
{{- fail "tailSampling.enabled renders the durable_tail_sampling processor into the chart's ConfigMap, but configMap.create is false: set configMap.create: true" }}
{{- end }}
{{- /* Autoscaling. */}}
{{- if .Values.autoscaling.enabled }}
{{- if eq $mode "daemonset" }}
{{- fail "autoscaling.enabled: a daemonset runs one pod per node and cannot be autoscaled; use mode deployment or statefulset" }}
{{- end }}
{{- if and .Values.autoscaling.targetCPUUtilizationPercentage (not (dig "requests" "cpu" "" (.Values.resources | default dict))) }}
{{- fail "autoscaling.targetCPUUtilizationPercentage needs resources.requests.cpu (utilization is measured against the request)" }}
{{- end }}
{{- if and .Values.autoscaling.targetMemoryUtilizationPercentage (not (dig "requests" "memory" "" (.Values.resources | default dict))) }}
{{- fail "autoscaling.targetMemoryUtilizationPercentage needs resources.requests.memory (utilization is measured against the request)" }}
{{- end }}
{{- if not (or .Values.autoscaling.targetCPUUtilizationPercentage .Values.autoscaling.targetMemoryUtilizationPercentage) }}
{{- fail "autoscaling.enabled: set targetCPUUtilizationPercentage and/or targetMemoryUtilizationPercentage" }}
{{- end }}
{{- end }}
{{- /* Elasticsearch. */}}
{{- $es := .Values.elasticsearch }}
{{- if and $es.existingSecret.name (include "tracegate.createEsSecret" .) }}
{{- fail "elasticsearch: set either existingSecret.name or literal apiKey/username/password, not both" }}
{{- end }}
{{- if and $es.apiKey (or $es.username $es.password) }}
{{- fail "elasticsearch: set either apiKey or username/password, not both" }}
{{- end }}
{{- if and (or $es.username $es.password) (not (and $es.username $es.password)) }}
{{- fail "elasticsearch: username and password go together" }}
{{- end }}
{{- with $es.existingSecret }}
{{- if and .apiKeyKey (or .usernameKey .passwordKey) }}
{{- fail "elasticsearch.existingSecret: set apiKeyKey, or usernameKey and passwordKey with apiKeyKey: \"\", not both" }}
{{- end }}
{{- if and (or .usernameKey .passwordKey) (not (and .usernameKey .passwordKey)) }}
{{- fail "elasticsearch.existingSecret: usernameKey and passwordKey go together" }}
{{- end }}
{{- if and .name (not (or .apiKeyKey .usernameKey .urlKey)) }}
{{- fail "elasticsearch.existingSecret.name: set apiKeyKey, usernameKey and passwordKey, or urlKey: which keys to read" }}
{{- end }}
{{- end }}
{{- if and $es.existingSecret.urlKey (not $es.existingSecret.name) }}
{{- fail "elasticsearch.existingSecret.urlKey needs elasticsearch.existingSecret.name" }}
{{- end }}
{{- if and $es.existingSecret.urlKey $es.endpoints }}
{{- fail "elasticsearch: set either endpoints or existingSecret.urlKey, not both" }}
{{- end }}
{{- if and .Values.serviceMonitor.enabled (not .Values.ports.metrics.enabled) }}
{{- fail "serviceMonitor.enabled needs ports.metrics.enabled" }}
{{- end }}
{{- end }}

{{/* "true" when the port is served (call with (list $ $name $port)): enabled, and not the port
     of a receiver that kafka.role gateway takes out of the pipelines (the gateway reads Kafka
     only, so no client can reach it there); `metrics` and ports added in values stay. */}}
{{- define "tracegate.portServed" -}}
{{- $root := index . 0 }}
{{- $name := index . 1 }}
{{- $port := index . 2 }}
{{- $receiverPorts := list "otlp" "otlp-http" "zipkin" "jaeger-grpc" "jaeger-thrift" "jaeger-compact" "jaeger-binary" "ddtrace" "elasticapm" "datakit" }}
{{- if and $port.enabled (not (and (eq (include "tracegate.kafkaRole" $root) "gateway") (has $name $receiverPorts))) }}true{{ end }}
{{- end }}

{{/* Container ports of the served ports; hostPort in daemonset mode only. */}}
{{- define "tracegate.containerPorts" -}}
{{- range $name, $port := .Values.ports }}
{{- if include "tracegate.portServed" (list $ $name $port) }}
- name: {{ $name }}
  containerPort: {{ $port.containerPort }}
  protocol: {{ $port.protocol | default "TCP" }}
  {{- if and $port.hostPort (eq $.Values.mode "daemonset") }}
  hostPort: {{ $port.hostPort }}
  {{- end }}
{{- end }}
{{- end }}
{{- end }}
