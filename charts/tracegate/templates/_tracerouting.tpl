{{/* Tail sampling on the gateways (tailSampling.enabled) and routing by trace id on the agents
     (loadBalancing.enabled): what one needs from the other is that every span of a trace reaches
     the same gateway pod. */}}

{{/* The durable_tail_sampling processor's settings: those of configs/sampling/tail.yaml of the
     tracegate repository (test/helm compares them), where the comments say why; its storage is
     set by tracegate.withTailSampling. */}}
{{- define "tracegate.tailSamplingProcessor" -}}
decision_wait: 10s
max_trace_wait: 1m
num_traces: 200000
max_pending_mib: 256
decision_cache:
  sampled_cache_size: 100000
  non_sampled_cache_size: 100000
  ttl: 5m
policies:
  - name: errors
    type: status_code
    status_code:
      status_codes: [ERROR]
  - name: slow
    type: latency
    latency:
      threshold_ms: 1000
  - name: ten-percent
    type: probabilistic
    probabilistic:
      sampling_percentage: 10
{{- end }}

{{/* durable_tail_sampling merged into .cfg (changed in place): the processor with the user's
     config.processors.durable_tail_sampling merged over the chart's settings, and its place in the
     pipeline that writes the spans (traces/out behind the APM connector, which must count every
     span, else traces): right after tracesampling, else after memory_limiter, else first, as the
     overlay file places it. A list that already names it stays. Pending spans are on the buffer's
     volume (<the buffer's directory>/tail-sampling) in statefulset mode with a disk buffer, as the
     overlay puts them; otherwise in memory (a crash loses them). Call with (dict "cfg" $cfg
     "Values" .Values). */}}
{{- define "tracegate.withTailSampling" -}}
{{- $procs := .cfg.processors | default dict }}
{{- $settings := include "tracegate.tailSamplingProcessor" . | fromYaml }}
{{- $dir := toString (dig "buffer" "storage" "directory" "" $procs) }}
{{- if and (eq .Values.mode "statefulset") $dir }}
{{- $_ := set $settings "storage" (dict "directory" (printf "%s/tail-sampling" (trimSuffix "/" $dir)) "fsync" "${env:TRACEGATE_TAIL_SAMPLING_FSYNC:-interval}" "fsync_interval" "100ms" "capacity_mib" 2048 "segment_mib" 16) }}
{{- end }}
{{- $own := get $procs "durable_tail_sampling" }}
{{- if kindIs "map" $own }}
{{- include "tracegate.merge" (dict "dst" $settings "src" $own) }}
{{- end }}
{{- $_ := set $procs "durable_tail_sampling" $settings }}
{{- $_ := set .cfg "processors" $procs }}
{{- $name := ternary "traces/out" "traces" (hasKey .cfg.service.pipelines "traces/out") }}
{{- $pipeline := get .cfg.service.pipelines $name }}
{{- $list := $pipeline.processors | default list }}
{{- if not (has "durable_tail_sampling" $list) }}
{{- $anchor := "" }}
{{- if has "tracesampling" $list }}{{ $anchor = "tracesampling" }}{{ else if has "memory_limiter" $list }}{{ $anchor = "memory_limiter" }}{{ end }}
{{- $out := list }}
{{- if not $anchor }}{{ $out = list "durable_tail_sampling" }}{{ end }}
{{- range $list }}
{{- $out = append $out . }}
{{- if eq . $anchor }}{{ $out = append $out "durable_tail_sampling" }}{{ end }}
{{- end }}
{{- $_ := set $pipeline "processors" $out }}
{{- end }}
{{- end }}

{{/* The gateways' Service as <name>.<namespace>. */}}
{{- define "tracegate.lbService" -}}
{{- $svc := .Values.loadBalancing.service }}
{{- if contains "." $svc }}{{ $svc }}{{ else }}{{ printf "%s.%s" $svc (include "tracegate.namespace" .) }}{{ end }}
{{- end }}

{{/* The loadbalancing exporter: trace-id routing over OTLP/gRPC (plaintext, as the gateway's
     receiver listens), no queue and no retries in the per-pod exporters, so a failure returns to
     the buffer, which retries and thereby routes the batch again. */}}
{{- define "tracegate.loadBalancingExporter" -}}
{{- $lb := .Values.loadBalancing }}
routing_key: traceID
protocol:
  otlp:
    tls:
      insecure: true
    sending_queue:
      enabled: false
    retry_on_failure:
      enabled: false
resolver:
  {{- if eq $lb.resolver "dns" }}
  dns:
    hostname: {{ printf "%s.svc.%s" (include "tracegate.lbService" .) $lb.clusterDomain | quote }}
    port: {{ $lb.port | toString | quote }}
  {{- else }}
  k8s:
    service: {{ include "tracegate.lbService" . | quote }}
    ports: [{{ $lb.port }}]
  {{- end }}
{{- end }}

{{/* The loadbalancing exporter merged into .cfg (changed in place), the user's
     config.exporters.loadbalancing over the chart's settings, as the traces pipeline's only
     exporter. Call with the root context's dict (dict "cfg" $cfg "Values" .Values "Release" .Release). */}}
{{- define "tracegate.withLoadBalancing" -}}
{{- $exporters := .cfg.exporters | default dict }}
{{- $settings := include "tracegate.loadBalancingExporter" . | fromYaml }}
{{- $own := get $exporters "loadbalancing" }}
{{- if kindIs "map" $own }}
{{- include "tracegate.merge" (dict "dst" $settings "src" $own) }}
{{- end }}
{{- $_ := set $exporters "loadbalancing" $settings }}
{{- $_ := set .cfg "exporters" $exporters }}
{{- $_ := set (get .cfg.service.pipelines "traces") "exporters" (list "loadbalancing") }}
{{- end }}

{{/* "true" when the agent resolves the gateways through the Kubernetes API: the chart then adds
     the Role and RoleBinding and mounts the service account token. */}}
{{- define "tracegate.lbK8sResolver" -}}
{{- $lb := .Values.loadBalancing | default dict }}
{{- if and $lb.enabled (eq $lb.resolver "k8s") }}true{{ end }}
{{- end }}
