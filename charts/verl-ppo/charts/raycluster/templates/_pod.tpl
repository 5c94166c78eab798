{{/*
Pod template of a Ray node. Call with (dict "ctx" $ "role" "head"|"worker" "node" .Values.head|.Values.worker "gpus" N).
Head and workers share everything but their role, resources and ports.
*/}}
{{- define "raycluster.podTemplate" -}}
{{- $ctx := .ctx -}}
{{- $values := $ctx.Values -}}
{{- $global := $values.global -}}
metadata:
  labels:
    {{- include "verl-ppo.selectorLabels" (dict "ctx" $ctx "component" (printf "ray-%s" .role)) | nindent 4 }}
    {{- include "verl-ppo.releasePodLabel" $ctx | nindent 4 }}
    {{- with .node.labels }}
    {{- toYaml . | nindent 4 }}
    {{- end }}
  {{- $annotations := deepCopy (.node.annotations | default dict) }}
  {{- if $values.tracing.apmplusInject }}
  {{- $_ := set $annotations "instrumentation.apmplus.volcengine.com/inject-python" "true" }}
  {{- end }}
  {{- with $annotations }}
  annotations:
    {{- toYaml . | nindent 4 }}
  {{- end }}
spec:
  {{- with include "verl-ppo.imagePullSecrets" $ctx }}{{ . | trim | nindent 2 }}{{ end }}
  {{- with $values.priorityClassName }}
  priorityClassName: {{ . | quote }}
  {{- end }}
  {{- with $values.podSecurityContext }}
  securityContext:
    {{- toYaml . | nindent 4 }}
  {{- end }}
  {{- with $values.nodeSelector }}
  nodeSelector:
    {{- toYaml . | nindent 4 }}
  {{- end }}
  {{- with $values.tolerations }}
  tolerations:
    {{- toYaml . | nindent 4 }}
  {{- end }}
  {{- with $values.affinity }}
  affinity:
    {{- toYaml . | nindent 4 }}
  {{- end }}
  containers:
    - name: ray-{{ .role }}
      image: {{ include "verl-ppo.image" (dict "global" $global) | quote }}
      imagePullPolicy: {{ include "verl-ppo.imagePullPolicy" (dict "global" $global) }}
      {{- $ports := include "verl-ppo.ports" $ctx | fromJson }}
      ports:
        {{- if eq .role "head" }}
        - name: gcs-server
          containerPort: {{ $ports.gcs }}
        - name: dashboard
          containerPort: {{ $ports.dashboard }}
        - name: client
          containerPort: {{ $ports.client }}
        # Autoscaler and dashboard metrics: KubeRay does not declare these, the PodMonitor scrapes them.
        - name: as-metrics
          containerPort: {{ $ports.autoscalerMetrics }}
        - name: dash-metrics
          containerPort: {{ $ports.dashboardMetrics }}
        {{- end }}
        - name: metrics
          containerPort: {{ $ports.metrics }}
      {{- $resources := dict "cpu" (toString .node.resources.cpu) "memory" (toString .node.resources.memory) }}
      {{- if gt (int .gpus) 0 }}
      {{- $_ := set $resources $global.gpu.resourceName (int .gpus) }}
      {{- end }}
      {{- if $values.rdma.enabled }}
      {{- $_ := set $resources $values.rdma.resourceName (int $values.rdma.count) }}
      {{- end }}
      # Requests equal limits: Guaranteed QoS, nothing else squeezes the training pods.
      resources:
        requests:
          {{- toYaml $resources | nindent 10 }}
        limits:
          {{- toYaml $resources | nindent 10 }}
      env:
        - name: PYTHONPATH
          value: {{ include "raycluster.pythonPath" $ctx | quote }}
        {{- include "raycluster.observabilityEnv" (dict "ctx" $ctx "role" .role) | indent 8 }}
        {{- with $values.tracing.disabledInstrumentations }}
        - name: OTEL_PYTHON_DISABLED_INSTRUMENTATIONS
          value: {{ . | quote }}
        {{- end }}
        {{- range $name, $value := $values.nccl }}
        - name: {{ $name }}
          value: {{ $value | toString | quote }}
        {{- end }}
        {{- with $values.env }}
        {{- toYaml . | nindent 8 }}
        {{- end }}
        {{- with .node.env }}
        {{- toYaml . | nindent 8 }}
        {{- end }}
      {{- $securityContext := deepCopy ($values.securityContext | default dict) }}
      {{- if and $values.rdma.enabled $values.rdma.ipcLock }}
      {{- $capabilities := $securityContext.capabilities | default dict }}
      {{- $_ := set $capabilities "add" (append ($capabilities.add | default list) "IPC_LOCK" | uniq) }}
      {{- $_ := set $securityContext "capabilities" $capabilities }}
      {{- end }}
      {{- with $securityContext }}
      securityContext:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      volumeMounts:
        - name: log-volume
          mountPath: /tmp/ray
        - name: shared-data
          mountPath: {{ include "verl-ppo.mountPath" $ctx | quote }}
        {{- include "raycluster.tracingHookMount" $ctx | indent 8 }}
        {{- if $values.shm.enabled }}
        - name: dshm
          mountPath: /dev/shm
        {{- end }}
  volumes:
    - name: log-volume
      emptyDir: {}
    - name: shared-data
      persistentVolumeClaim:
        claimName: {{ include "verl-ppo.claimName" $ctx }}
    {{- include "raycluster.tracingHookVolume" $ctx | indent 4 }}
    {{- if $values.shm.enabled }}
    - name: dshm
      emptyDir:
        medium: Memory
        {{- with $values.shm.sizeLimit }}
        sizeLimit: {{ . | quote }}
        {{- end }}
    {{- end }}
{{- end -}}
