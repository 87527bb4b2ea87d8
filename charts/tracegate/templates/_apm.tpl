{{/* The Kibana APM overlay (apm.enabled): configs/elasticsearch/apm.yaml of the tracegate
     repository, merged over the config as the collector merges a second --config (maps merged,
     lists replaced). Keep the two alike: test/helm compares the rendered config with the base
     config plus that file. Why the pipelines are so: the comments of apm.yaml. */}}
{{- define "tracegate.apmOverlay" -}}
receivers:
  ddtrace:
    drop_rejected_chunks: false
  datakit:
    ddtrace:
      drop_rejected_chunks: false
processors:
  elasticmapping:
    apm_inputs: true
  elasticapm: {}
connectors:
  apmmetrics: {}
service:
  pipelines:
    traces:
      processors: [memory_limiter, elasticmapping, elasticapm]
      exporters: [apmmetrics]
    traces/out:
      receivers: [apmmetrics]
      processors: [tracesampling, buffer]
      exporters: [elasticsearch_documents]
    logs:
      processors: [memory_limiter, elasticmapping, elasticapm]
      exporters: [apmmetrics]
    logs/out:
      receivers: [apmmetrics]
      processors: [buffer]
      exporters: [elasticsearch]
    metrics:
      processors: [memory_limiter, elasticmapping, elasticapm]
      exporters: [apmmetrics]
    metrics/out:
      receivers: [apmmetrics]
      processors: [buffer]
      exporters: [elasticsearch]
{{- end }}

{{/* The classic APM overlay (apm.mode classic): configs/elasticsearch/apm-classic.yaml of the
     tracegate repository; keep the two alike (test/helm compares them). Why the pipelines are so:
     the comments of apm-classic.yaml. */}}
{{- define "tracegate.apmClassicOverlay" -}}
receivers:
  elasticapm:
    output: apm_events
connectors:
  apmdocs:
    namespace: ${env:TRACEGATE_APM_NAMESPACE:-default}
exporters:
  elasticsearch_documents:
    endpoints: ${env:ELASTICSEARCH_URL:-http://localhost:9200}
    api_key: ${env:ELASTICSEARCH_API_KEY:-}
    user: ${env:ELASTICSEARCH_USERNAME:-}
    password: ${env:ELASTICSEARCH_PASSWORD:-}
    tls:
      ca_file: ${env:ELASTICSEARCH_CA_FILE:-}
    compression_level: 1
service:
  pipelines:
    traces:
      receivers: [otlp, zipkin, jaeger, ddtrace, datakit]
      processors: [memory_limiter, tracesampling]
      exporters: [apmdocs]
    logs:
      processors: [memory_limiter]
      exporters: [apmdocs]
    metrics:
      receivers: [otlp, datakit]
      processors: [memory_limiter]
      exporters: [apmdocs]
    logs/apm:
      receivers: [apmdocs]
      processors: [buffer]
      exporters: [elasticsearch_documents]
{{- end }}

{{/* "true" when apm.enabled selects the classic path. */}}
{{- define "tracegate.apmClassic" -}}
{{- $apm := .Values.apm | default dict }}
{{- if and $apm.enabled (eq (toString ($apm.mode | default "otel")) "classic") }}true{{ end }}
{{- end }}

{{/* The APM overlay merged into .cfg (a dict, changed in place). In statefulset mode with a disk
     buffer the connector's open windows go to <the buffer's directory>/apm, on the pod's claim, as
     configs/elasticsearch/apm-durable.yaml; otherwise they stay in memory, as apm.yaml. Call with
     (dict "cfg" $cfg "Values" .Values). */}}
{{- define "tracegate.withAPM" -}}
{{- $cfg := .cfg }}
{{- if include "tracegate.apmClassic" . }}
{{- include "tracegate.merge" (dict "dst" $cfg "src" (include "tracegate.apmClassicOverlay" . | fromYaml)) }}
{{- else }}
{{- $overlay := include "tracegate.apmOverlay" . | fromYaml }}
{{- $dir := toString (dig "processors" "buffer" "storage" "directory" "" $cfg) }}
{{- if and (eq .Values.mode "statefulset") $dir }}
{{- $_ := set $overlay.connectors "apmmetrics" (dict "aggregation" (dict "directory" (printf "%s/apm" (trimSuffix "/" $dir)))) }}
{{- end }}
{{- include "tracegate.merge" (dict "dst" $cfg "src" $overlay) }}
{{- end }}
{{- end }}
