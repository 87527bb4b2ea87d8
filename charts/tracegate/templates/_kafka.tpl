{{/* The Kafka tier (kafka.role): configs/kafka/agent.yaml and configs/kafka/gateway.yaml of the
     tracegate repository, with the topics and consumer group of the values. Keep them alike:
     test/helm compares the rendered config with the base config plus each file. Why the settings
     are so: the comments of those files. */}}
{{- define "tracegate.kafkaAgentOverlay" -}}
receivers:
  ddtrace:
    drop_rejected_chunks: false
  datakit:
    ddtrace:
      drop_rejected_chunks: false
exporters:
  kafka:
    brokers: ${env:KAFKA_BROKERS:-localhost:9092}
    traces:
      topic: {{ .topics.traces | quote }}
      encoding: otlp_proto
    logs:
      topic: {{ .topics.logs | quote }}
      encoding: otlp_proto
    metrics:
      topic: {{ .topics.metrics | quote }}
      encoding: otlp_proto
    partition_traces_by_id: true
    producer:
      required_acks: -1
      compression: lz4
      max_message_bytes: 1000000
    sending_queue:
      enabled: false
    retry_on_failure:
      enabled: false
    timeout: 30s
service:
  pipelines:
    traces:
      processors: [memory_limiter, buffer]
      exporters: [kafka]
    logs:
      processors: [memory_limiter, buffer]
      exporters: [kafka]
    metrics:
      processors: [memory_limiter, buffer]
      exporters: [kafka]
{{- end }}

{{- define "tracegate.kafkaGatewayOverlay" -}}
receivers:
  kafka:
    brokers: ${env:KAFKA_BROKERS:-localhost:9092}
    group_id: {{ .groupId | quote }}
    initial_offset: earliest
    traces:
      topics: [{{ .topics.traces | quote }}]
      encoding: otlp_proto
    logs:
      topics: [{{ .topics.logs | quote }}]
      encoding: otlp_proto
    metrics:
      topics: [{{ .topics.metrics | quote }}]
      encoding: otlp_proto
    message_marking:
      after: true
      on_error: false
      on_permanent_error: true
    error_backoff:
      enabled: true
      initial_interval: 100ms
      max_interval: 5s
      max_elapsed_time: 0
service:
  pipelines:
    traces:
      receivers: [kafka]
    logs:
      receivers: [kafka]
    metrics:
      receivers: [kafka]
{{- end }}

{{/* Where the Kafka TLS Secrets are mounted: <dir>/ca and <dir>/client. Outside /etc/tracegate,
     the config's read-only ConfigMap volume. */}}
{{- define "tracegate.kafkaTLSDir" -}}/etc/tracegate-kafka{{- end }}

{{/* The kafka.role, "" without Kafka. */}}
{{- define "tracegate.kafkaRole" -}}
{{- (.Values.kafka | default dict).role | default "" }}
{{- end }}

{{/* The Kafka overlay of kafka.role merged into .cfg (a dict, changed in place), as the
     collector merges a further --config, plus the TLS and SASL settings of the values in the
     exporter's (agent) or receiver's (gateway) settings. Settings the user gave that component in
     `config` are merged over the chart's; the pipelines are the overlay's. Call with
     (dict "cfg" $cfg "Values" .Values). */}}
{{- define "tracegate.withKafka" -}}
{{- $k := .Values.kafka }}
{{- $overlay := dict }}
{{- $kind := "exporters" }}
{{- if eq $k.role "agent" }}
{{- $overlay = include "tracegate.kafkaAgentOverlay" $k | fromYaml }}
{{- else }}
{{- $overlay = include "tracegate.kafkaGatewayOverlay" $k | fromYaml }}
{{- $kind = "receivers" }}
{{- end }}
{{- $component := get (get $overlay $kind) "kafka" }}
{{- if $k.tls.enabled }}
{{- $tls := dict }}
{{- $dir := include "tracegate.kafkaTLSDir" . }}
{{- if $k.tls.ca.secretName }}
{{- $_ := set $tls "ca_file" (printf "%s/ca/%s" $dir $k.tls.ca.key) }}
{{- end }}
{{- if $k.tls.clientCert.secretName }}
{{- $_ := set $tls "cert_file" (printf "%s/client/%s" $dir $k.tls.clientCert.certKey) }}
{{- $_ := set $tls "key_file" (printf "%s/client/%s" $dir $k.tls.clientCert.keyKey) }}
{{- end }}
{{- $_ := set $component "tls" $tls }}
{{- end }}
{{- if $k.sasl.mechanism }}
{{- $sasl := dict "mechanism" $k.sasl.mechanism "username" "${env:KAFKA_SASL_USERNAME}" "password" "${env:KAFKA_SASL_PASSWORD}" }}
{{- $_ := set $component "auth" (dict "sasl" $sasl) }}
{{- end }}
{{- $own := dig $kind "kafka" nil .cfg }}
{{- if kindIs "map" $own }}
{{- include "tracegate.merge" (dict "dst" $component "src" (deepCopy $own)) }}
{{- end }}
{{- include "tracegate.merge" (dict "dst" .cfg "src" $overlay) }}
{{- end }}

{{/* The container's Kafka environment: the brokers, and the SASL credentials from the Secret. */}}
{{- define "tracegate.kafkaEnv" -}}
{{- $k := .Values.kafka }}
- name: KAFKA_BROKERS
  value: {{ join "," $k.brokers | quote }}
{{- if $k.sasl.mechanism }}
{{- range $var, $key := dict "KAFKA_SASL_USERNAME" $k.sasl.existingSecret.usernameKey "KAFKA_SASL_PASSWORD" $k.sasl.existingSecret.passwordKey }}
- name: {{ $var }}
  valueFrom:
    secretKeyRef:
      name: {{ $k.sasl.existingSecret.name }}
      key: {{ $key }}
{{- end }}
{{- end }}
{{- end }}

{{/* The Kafka TLS Secrets' volumes (.mounts false) or their mounts (.mounts true), each with only
     the keys the config reads: a missing key keeps the pod from starting. */}}
{{- define "tracegate.kafkaTLSVolumes" -}}
{{- $tls := .Values.kafka.tls }}
{{- if and (include "tracegate.kafkaRole" .) $tls.enabled }}
{{- if $tls.ca.secretName }}
{{- if .mounts }}
- name: kafka-ca
  mountPath: {{ include "tracegate.kafkaTLSDir" . }}/ca
  readOnly: true
{{- else }}
- name: kafka-ca
  secret:
    secretName: {{ $tls.ca.secretName }}
    items:
      - key: {{ $tls.ca.key }}
        path: {{ $tls.ca.key }}
{{- end }}
{{- end }}
{{- if $tls.clientCert.secretName }}
{{- if .mounts }}
- name: kafka-client-cert
  mountPath: {{ include "tracegate.kafkaTLSDir" . }}/client
  readOnly: true
{{- else }}
- name: kafka-client-cert
  secret:
    secretName: {{ $tls.clientCert.secretName }}
    items:
      - key: {{ $tls.clientCert.certKey }}
        path: {{ $tls.clientCert.certKey }}
      - key: {{ $tls.clientCert.keyKey }}
        path: {{ $tls.clientCert.keyKey }}
{{- end }}
{{- end }}
{{- end }}
{{- end }}
