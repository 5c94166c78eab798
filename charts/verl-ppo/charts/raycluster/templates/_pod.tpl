{{/*
Pod template of a Ray node. Call with (dict "ctx" $ "role" "head"|"worker" "node" .Values.head|.Values.worker "gpus" N),
and "place" (nodeSelector, tolerations, rdma, nccl) for the rollout pool's pods; else raycluster's own.
Head and workers share everything but their role, resources and ports.
*/}}
{{- define "raycluster.podTemplate" -}}
{{- $ctx := .ctx -}}
{{- $values := $ctx.Values -}}
{{- $global := $values.global -}}
{{- $place := .place | default (pick $values "nodeSelector" "tolerations" "rdma" "nccl") -}}
metadata:
  labels:
    {{- $extra := ternary (include "verl-ppo.rayPodSelector" $ctx) "" (not (empty (include "verl-ppo.rayJobMode" $ctx))) }}
    {{- include "verl-ppo.podLabels" (dict "ctx" $ctx "component" (printf "ray-%s" .role) "extra" $extra "user" .node.labels) | nindent 4 }}
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
  # SIGTERM: Ray drains its node (RAY_GRACEFUL_SHUTDOWN_DRAIN_TIMEOUT_S, below), then stops its processes within this.
  terminationGracePeriodSeconds: {{ int $values.terminationGracePeriodSeconds }}
  {{- with include "raycluster.serviceAccount" (dict "ctx" $ctx "role" .role) }}{{ . | nindent 2 }}{{ end }}
  securityContext:
    {{- mergeOverwrite (dict "seccompProfile" (dict "type" "RuntimeDefault")) (deepCopy ($values.podSecurityContext | default dict)) | toYaml | nindent 4 }}
  {{- with $place.nodeSelector }}
  nodeSelector:
    {{- toYaml . | nindent 4 }}
  {{- end }}
  {{- with $place.tolerations }}
  tolerations:
    {{- toYaml . | nindent 4 }}
  {{- end }}
  {{- with $values.affinity }}
  affinity:
    {{- toYaml . | nindent 4 }}
  {{- end }}
  {{- if and (include "raycluster.elasticQueue" $ctx) (not (include "verl-ppo.rayJobMode" $ctx)) }}
  # Kueue's gate of an elastic RayCluster (its webhook adds it only at creation): rendered, so an upgrade keeps it. A
  # RayJob's cluster gets it from Kueue when KubeRay creates it (the RayJob's spec stays without).
  schedulingGates:
    - name: kueue.x-k8s.io/elastic-job
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
      {{- /* Every quantity a string, as the operator's Go types write it back (its finalizer Update under GCS
      fault tolerance): a number here would differ from the stored "2" and helm 4's server-side apply would refuse
      the next upgrade as a conflict with the kuberay-operator field manager. */}}
      {{- $resources := dict "cpu" (include "verl-ppo.scalar" .node.resources.cpu) "memory" (include "verl-ppo.scalar" .node.resources.memory) }}
      {{- if gt (int .gpus) 0 }}
      {{- $_ := set $resources $global.gpu.resourceName (int .gpus | toString) }}
      {{- end }}
      {{- if $place.rdma.enabled }}
      {{- $_ := set $resources $place.rdma.resourceName (int $place.rdma.count | toString) }}
      {{- end }}
      # Requests equal limits: Guaranteed QoS, nothing else squeezes the training pods.
      resources:
        requests:
          {{- toYaml $resources | nindent 10 }}
        limits:
          {{- toYaml $resources | nindent 10 }}
      env:
        {{- include "verl-ppo.mergedEnv" (dict "chart" (include "raycluster.chartEnv" (dict "ctx" $ctx "role" .role "nccl" $place.nccl))
          "user" (concat ($values.env | default list) (.node.env | default list))) | nindent 8 }}
      securityContext:
        {{- include "raycluster.containerSecurityContext" (dict "Values" (dict "securityContext" $values.securityContext "rdma" $place.rdma)) | nindent 8 }}
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
    {{- if and (eq .role "head") (include "verl-ppo.rolloutMetricsEnabled" $ctx) }}
    {{- include "raycluster.rolloutPrometheusContainer" $ctx | nindent 4 }}
    {{- end }}
  volumes:
    - name: log-volume
      emptyDir: {}
    {{- if and (eq .role "head") (include "verl-ppo.rolloutMetricsEnabled" $ctx) }}
    {{- include "raycluster.rolloutPrometheusVolume" $ctx | nindent 4 }}
    {{- end }}
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

{{/* The environment the chart sets on a Ray container (YAML list): the image's code and the tracing hook on
     PYTHONPATH, observability, NCCL (.nccl: raycluster.nccl, or the rollout pool's), credentials from Secrets.
     Call with (dict "ctx" $ "role" r "nccl" map). */}}
{{- define "raycluster.chartEnv" -}}
{{- $values := .ctx.Values -}}
- name: PYTHONPATH
  value: {{ include "raycluster.pythonPath" .ctx | quote }}
- name: RAY_GRACEFUL_SHUTDOWN_DRAIN_TIMEOUT_S
  value: {{ include "raycluster.rayDrainSeconds" .ctx | quote }}
{{- include "raycluster.observabilityEnv" . }}
{{- with $values.tracing.disabledInstrumentations }}
- name: OTEL_PYTHON_DISABLED_INSTRUMENTATIONS
  value: {{ . | quote }}
{{- end }}
{{- range $name, $value := .nccl }}
- name: {{ $name }}
  value: {{ include "verl-ppo.scalar" $value | quote }}
{{- end }}
{{- with include "raycluster.secretEnv" .ctx }}{{ . | trim | nindent 0 }}{{ end }}
{{- end -}}

{{/* Names of the variables the chart may set on a Ray container, each with the value that sets it (JSON; Ray's token's
     with global.rayAuth.tokenSecret, which KubeRay sets from it): the
     rulebook refuses them in raycluster.env, head.env, worker.env and extraSecretEnv (verl-ppo.mergedEnv also
     drops them there). */}}
{{- define "raycluster.ownedEnv" -}}
{{- $owned := dict "PYTHONPATH" "raycluster.pythonPath" "TENSORBOARD_DIR" "global.tensorboard.enabled"
  "RAY_GRACEFUL_SHUTDOWN_DRAIN_TIMEOUT_S" "raycluster.terminationGracePeriodSeconds"
  "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT" "raycluster.tracing.startupHook.otlpEndpoint"
  "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL" "raycluster.tracing.startupHook.otlpProtocol"
  "OTEL_SERVICE_NAME" "global.fullnameOverride"
  "OTEL_PYTHON_DISABLED_INSTRUMENTATIONS" "raycluster.tracing.disabledInstrumentations"
  "RAY_GRAFANA_HOST" "raycluster.head.dashboardMetrics.grafanaHost"
  "RAY_GRAFANA_IFRAME_HOST" "raycluster.head.dashboardMetrics.grafanaIframeHost"
  "RAY_PROMETHEUS_HOST" "raycluster.head.dashboardMetrics.prometheusHost" -}}
{{- range $name, $_ := .Values.nccl }}{{ $_ := set $owned $name (printf "raycluster.nccl.%s" $name) }}{{ end -}}
{{- if include "verl-ppo.rayAuthSecret" . -}}
{{- range $name := include "verl-ppo.rayAuthEnvNames" . | fromJsonArray }}{{ $_ := set $owned $name "global.rayAuth.tokenSecret" }}{{ end -}}
{{- end -}}
{{- range $name, $ref := dict "WANDB_API_KEY" .Values.credentials.wandb "HF_TOKEN" .Values.credentials.huggingface -}}
{{- if $ref.secretName }}{{ $_ := set $owned $name (printf "raycluster.credentials.%s" (ternary "wandb" "huggingface" (eq $name "WANDB_API_KEY"))) }}{{ end -}}
{{- end -}}
{{- toJson $owned -}}
{{- end -}}

{{/* The Ray container's security context: the user's, with every capability dropped and only what the chosen
     features need added back (IPC_LOCK to pin memory for RDMA; the user's capabilities.add, e.g. SYS_PTRACE for
     CUDA memory handles exchanged with pidfd_getfd, see docs/security.md). */}}
{{- define "raycluster.containerSecurityContext" -}}
{{- $securityContext := deepCopy (.Values.securityContext | default dict) -}}
{{- $capabilities := $securityContext.capabilities | default dict -}}
{{- $add := $capabilities.add | default list -}}
{{- if and .Values.rdma.enabled .Values.rdma.ipcLock -}}
{{- $add = append $add "IPC_LOCK" | uniq -}}
{{- end -}}
{{- $_ := set $capabilities "drop" (list "ALL") -}}
{{- if $add -}}{{- $_ := set $capabilities "add" $add -}}{{- end -}}
{{- $_ := set $securityContext "capabilities" $capabilities -}}
{{- toYaml $securityContext -}}
{{- end -}}

{{/* The Ray pods' account: their own, without an API token (Ray needs no Kubernetes API). With the autoscaler on,
     the head is left to the account KubeRay creates and binds for its autoscaler sidecar, token included.
     Call with (dict "ctx" $ "role" "head"|"worker"). */}}
{{- define "raycluster.serviceAccount" -}}
{{- if not (and (eq .role "head") .ctx.Values.worker.autoscaling.enabled) -}}
serviceAccountName: {{ include "raycluster.serviceAccountName" .ctx }}
automountServiceAccountToken: false
{{- end -}}
{{- end -}}

{{- define "raycluster.serviceAccountName" -}}
{{- include "verl-ppo.componentName" (dict "ctx" . "suffix" "ray") -}}
{{- end -}}

{{/* Credentials as environment variables from existing Secrets (never values): W&B, Hugging Face and
     extraSecretEnv. Ray's processes, the PPO run's driver among them, inherit the pod's environment. */}}
{{- define "raycluster.secretEnv" -}}
{{- $refs := dict -}}
{{- range $name, $ref := dict "WANDB_API_KEY" .Values.credentials.wandb "HF_TOKEN" .Values.credentials.huggingface -}}
{{- if $ref.secretName -}}{{- $_ := set $refs $name $ref -}}{{- end -}}
{{- end -}}
{{- $extra := deepCopy (.Values.extraSecretEnv | default dict) -}}
{{- range $name, $_ := include "raycluster.ownedEnv" . | fromJson }}{{ $_ := unset $extra $name }}{{ end -}}
{{- $refs = merge $extra $refs -}}
{{- range $name, $ref := $refs }}
- name: {{ $name | quote }}
  valueFrom:
    secretKeyRef:
      name: {{ $ref.secretName | quote }}
      key: {{ $ref.key | quote }}
{{- end }}
{{- end -}}

{{/* Seconds Ray 2.60's SIGTERM handler drains its node before it stops its processes: the pod's grace period less
     the teardown's 15 s (Ray gives each of its processes, raylet first, up to 1 s after a SIGTERM, one after another;
     a head runs about ten, and a loaded node is slower). Ray's own default is 30 s, sized for Ray Serve's requests. */}}
{{- define "raycluster.rayDrainSeconds" -}}
{{- sub (int .Values.terminationGracePeriodSeconds) 15 -}}
{{- end -}}
