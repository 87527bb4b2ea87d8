{{/* Pod template metadata: labels and the checksums that roll the pods on a change. */}}
{{- define "tracegate.podMetadata" -}}
metadata:
  annotations:
    checksum/config: {{ include (print $.Template.BasePath "/configmap.yaml") . | sha256sum }}
    {{- if include "tracegate.createEsSecret" . }}
    checksum/secret: {{ include (print $.Template.BasePath "/secret.yaml") . | sha256sum }}
    {{- end }}
    {{- with .Values.podAnnotations }}
    {{- toYaml . | nindent 4 }}
    {{- end }}
  labels:
    {{- include "tracegate.selectorLabels" . | nindent 4 }}
    app.kubernetes.io/component: {{ include "tracegate.component" . }}
    {{- with .Values.podLabels }}
    {{- toYaml . | nindent 4 }}
    {{- end }}
{{- end }}

{{/* Elasticsearch environment: endpoints and credentials. */}}
{{- define "tracegate.esEnv" -}}
{{- $es := .Values.elasticsearch }}
{{- if $es.existingSecret.urlKey }}
- name: ELASTICSEARCH_URL
  valueFrom:
    secretKeyRef:
      name: {{ $es.existingSecret.name }}
      key: {{ $es.existingSecret.urlKey }}
{{- else if $es.endpoints }}
- name: ELASTICSEARCH_URL
  value: {{ join "," $es.endpoints | quote }}
{{- end }}
{{- if $es.existingSecret.name }}
{{- range $var, $key := dict "ELASTICSEARCH_API_KEY" $es.existingSecret.apiKeyKey "ELASTICSEARCH_USERNAME" $es.existingSecret.usernameKey "ELASTICSEARCH_PASSWORD" $es.existingSecret.passwordKey }}
{{- if $key }}
- name: {{ $var }}
  valueFrom:
    secretKeyRef:
      name: {{ $es.existingSecret.name }}
      key: {{ $key }}
{{- end }}
{{- end }}
{{- else if include "tracegate.createEsSecret" . }}
{{- range $var, $key := dict "ELASTICSEARCH_API_KEY" (ternary "api-key" "" (not (empty $es.apiKey))) "ELASTICSEARCH_USERNAME" (ternary "username" "" (not (empty $es.username))) "ELASTICSEARCH_PASSWORD" (ternary "password" "" (not (empty $es.password))) }}
{{- if $key }}
- name: {{ $var }}
  valueFrom:
    secretKeyRef:
      name: {{ include "tracegate.esSecretName" $ }}
      key: {{ $key }}
{{- end }}
{{- end }}
{{- end }}
{{- end }}

{{/* The pod spec shared by the Deployment, the DaemonSet and the StatefulSet. */}}
{{- define "tracegate.podSpec" -}}
{{- include "tracegate.validate" . -}}
{{- $storage := include "tracegate.bufferStorageEnabled" . -}}
{{- with .Values.imagePullSecrets }}
imagePullSecrets:
  {{- toYaml . | nindent 2 }}
{{- end }}
serviceAccountName: {{ include "tracegate.serviceAccountName" . }}
{{- /* The loadbalancing exporter's k8s resolver watches the gateways' EndpointSlices. */}}
automountServiceAccountToken: {{ or .Values.serviceAccount.automountServiceAccountToken (include "tracegate.lbK8sResolver" . | eq "true") }}
{{- with .Values.podSecurityContext }}
securityContext:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .Values.priorityClassName }}
priorityClassName: {{ . | quote }}
{{- end }}
{{- if .Values.hostNetwork }}
hostNetwork: true
{{- end }}
{{- if .Values.dnsPolicy }}
dnsPolicy: {{ .Values.dnsPolicy }}
{{- else if .Values.hostNetwork }}
{{- /* The default (ClusterFirst) falls back to the node's resolver under hostNetwork: an agent
       could then not resolve its gateway's Service name. */}}
dnsPolicy: ClusterFirstWithHostNet
{{- end }}
terminationGracePeriodSeconds: {{ .Values.terminationGracePeriodSeconds }}
{{- with .Values.initContainers }}
initContainers:
  {{- toYaml . | nindent 2 }}
{{- end }}
containers:
  - name: tracegate
    {{- if .Values.image.digest }}
    image: "{{ .Values.image.repository }}@{{ .Values.image.digest }}"
    {{- else }}
    image: "{{ .Values.image.repository }}:{{ .Values.image.tag | default .Chart.AppVersion }}"
    {{- end }}
    imagePullPolicy: {{ .Values.image.pullPolicy }}
    args:
      - --config=/etc/tracegate/config.yaml
      {{- range .Values.command.extraArgs }}
      - {{ . | quote }}
      {{- end }}
    {{- with .Values.securityContext }}
    securityContext:
      {{- toYaml . | nindent 6 }}
    {{- end }}
    {{- $ports := include "tracegate.containerPorts" . }}
    {{- if $ports }}
    ports:
      {{- $ports | trim | nindent 6 }}
    {{- end }}
    env:
      - name: MY_POD_IP
        valueFrom:
          fieldRef:
            apiVersion: v1
            fieldPath: status.podIP
      {{- if and .Values.useGOMEMLIMIT (dig "limits" "memory" "" (.Values.resources | default dict)) }}
      - name: GOMEMLIMIT
        value: {{ include "tracegate.gomemlimit" .Values.resources.limits.memory | quote }}
      {{- end }}
      {{- with .Values.gogc }}
      - name: GOGC
        value: {{ . | quote }}
      {{- end }}
      {{- if $storage }}
      - name: TRACEGATE_BUFFER_DIR
        value: {{ .Values.bufferStorage.mountPath | quote }}
      {{- end }}
      {{- with include "tracegate.esEnv" . }}
      {{- . | trim | nindent 6 }}
      {{- end }}
      {{- if include "tracegate.kafkaRole" . }}
      {{- include "tracegate.kafkaEnv" . | trim | nindent 6 }}
      {{- end }}
      {{- with .Values.extraEnvs }}
      {{- toYaml . | nindent 6 }}
      {{- end }}
    {{- with .Values.extraEnvsFrom }}
    envFrom:
      {{- toYaml . | nindent 6 }}
    {{- end }}
    {{- with .Values.livenessProbe }}
    livenessProbe:
      {{- toYaml . | nindent 6 }}
    {{- end }}
    {{- with .Values.readinessProbe }}
    readinessProbe:
      {{- toYaml . | nindent 6 }}
    {{- end }}
    {{- with .Values.lifecycleHooks }}
    lifecycle:
      {{- toYaml . | nindent 6 }}
    {{- end }}
    {{- with .Values.resources }}
    resources:
      {{- toYaml . | nindent 6 }}
    {{- end }}
    volumeMounts:
      - name: config
        mountPath: /etc/tracegate
        readOnly: true
      {{- if $storage }}
      - name: {{ .Values.bufferStorage.volumeName }}
        mountPath: {{ .Values.bufferStorage.mountPath }}
      {{- end }}
      {{- with include "tracegate.kafkaTLSVolumes" (dict "Values" .Values "mounts" true) }}
      {{- . | trim | nindent 6 }}
      {{- end }}
      {{- with .Values.extraVolumeMounts }}
      {{- toYaml . | nindent 6 }}
      {{- end }}
{{- with .Values.extraContainers }}
  {{- toYaml . | nindent 2 }}
{{- end }}
volumes:
  - name: config
    configMap:
      name: {{ include "tracegate.configName" . }}
      items:
        - key: config.yaml
          path: config.yaml
  {{- with include "tracegate.kafkaTLSVolumes" (dict "Values" .Values "mounts" false) }}
  {{- . | trim | nindent 2 }}
  {{- end }}
  {{- with .Values.extraVolumes }}
  {{- toYaml . | nindent 2 }}
  {{- end }}
{{- with .Values.nodeSelector }}
nodeSelector:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .Values.affinity }}
affinity:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .Values.tolerations }}
tolerations:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .Values.topologySpreadConstraints }}
topologySpreadConstraints:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- end }}
