{{/*
The RayCluster's spec (head group, GPU worker group), built once: the RayCluster of RayCluster mode
and the rayClusterSpec of the RayJob (global.mode=RayJob) are both this. Call with the raycluster
component's context (its values, with global, and .Release).
*/}}
{{- define "raycluster.clusterSpec" -}}
{{- $workers := include "verl-ppo.workerReplicas" (dict "Values" .Values "trainsOnHead" .Values.head.trainsOnHead) | int -}}
{{- $sides := include "raycluster.sideResources" . | fromJson -}}
{{- $workerParams := deepCopy (.Values.worker.rayStartParams | default dict) -}}
{{- $poolParams := deepCopy (.Values.rolloutPool.rayStartParams | default dict) -}}
{{- with $sides }}
{{- $_ := set $workerParams "resources" .training }}
{{- $_ := set $poolParams "resources" .rollout }}
{{- end }}
{{- $autoscaling := .Values.worker.autoscaling -}}
{{- $gpusPerNode := include "verl-ppo.gpusPerNode" . | int -}}
{{- with .Values.rayVersion }}
rayVersion: {{ . | quote }}
{{- end }}
{{- if $autoscaling.enabled }}
enableInTreeAutoscaling: true
{{- end }}
{{- include "raycluster.gcsFaultTolerance" .Values.gcsFaultTolerance }}
{{- with include "verl-ppo.rayAuthSecret" . }}
# Ray's token authentication: KubeRay sets RAY_AUTH_MODE and RAY_AUTH_TOKEN (from the Secret) on every Ray
# container and its own submitter, and reads the token for its dashboard calls (a RayJob's status).
authOptions:
  mode: token
  secretName: {{ . | quote }}
{{- end }}
headGroupSpec:
  serviceType: {{ .Values.head.serviceType }}
  {{- /* Keys are option names (the schema); each value is one shell word of KubeRay's `ray start` line (verl-ppo.shellWord). */}}
  rayStartParams:
    {{- $params := dict "dashboard-host" "0.0.0.0" }}
    {{- if .Values.tracing.startupHook.enabled }}
    {{- $_ := set $params "tracing-startup-hook" .Values.tracing.startupHook.hook }}
    {{- end }}
    {{- $params = mergeOverwrite $params (.Values.head.rayStartParams | default dict) }}
    {{- if and $sides .Values.head.trainsOnHead }}
    {{- $_ := set $params "resources" $sides.training }}
    {{- end }}
    {{- range $key, $value := $params }}
    {{ $key }}: {{ include "verl-ppo.shellWord" $value | quote }}
    {{- end }}
  template:
    {{- include "raycluster.podTemplate" (dict "ctx" $ "role" "head" "node" .Values.head
      "gpus" (ternary $gpusPerNode 0 .Values.head.trainsOnHead)) | nindent 4 }}
workerGroupSpecs:
  - groupName: {{ .Values.worker.groupName }}
    replicas: {{ $workers }}
    minReplicas: {{ ternary $autoscaling.minReplicas $workers $autoscaling.enabled }}
    maxReplicas: {{ ternary $autoscaling.maxReplicas $workers $autoscaling.enabled }}
    # The tracing hook is a head option: Ray hands it to every worker through the GCS.
    rayStartParams:
      {{- range $key, $value := $workerParams }}
      {{ $key }}: {{ include "verl-ppo.shellWord" $value | quote }}
      {{- else }} {}
      {{- end }}
    # As the operator's Go types write it back (an empty struct is never omitted): the worker groups are one
    # atomic list, so any field it writes otherwise would make the operator their manager and Helm 4's
    # server-side apply refuse the next upgrade (see the GPU counts in raycluster.podTemplate).
    scaleStrategy: {}
    template:
      {{- include "raycluster.podTemplate" (dict "ctx" $ "role" "worker" "node" .Values.worker "gpus" $gpusPerNode) | nindent 6 }}
  {{- if include "verl-ppo.rolloutPoolEnabled" . }}
  {{- $pool := .Values.rolloutPool }}
  {{- $poolNodes := include "verl-ppo.rolloutPoolNodes" . | int }}
  # The rollout pool (global.rolloutPool): veRL's rollout replicas, on nodes of their own (docs/operations.md).
  - groupName: {{ $pool.groupName }}
    replicas: {{ $poolNodes }}
    minReplicas: {{ $poolNodes }}
    maxReplicas: {{ $poolNodes }}
    rayStartParams:
      {{- range $key, $value := $poolParams }}
      {{ $key }}: {{ include "verl-ppo.shellWord" $value | quote }}
      {{- else }} {}
      {{- end }}
    scaleStrategy: {}
    template:
      {{- $node := dict "resources" (ternary .Values.worker.resources $pool.resources (kindIs "invalid" $pool.resources))
        "annotations" $pool.annotations "labels" $pool.labels "env" $pool.env }}
      {{- include "raycluster.podTemplate" (dict "ctx" $ "role" "worker" "node" $node
        "gpus" (include "verl-ppo.rolloutPoolGpusPerNode" . | int) "place" (include "raycluster.rolloutPoolPlacement" . | fromJson)) | nindent 6 }}
  {{- end }}
{{- end -}}

{{/* Each side's Ray resource as ray start's --resources (JSON: training, rollout; {} without a rollout pool): 1 of
     verl-ppo.poolResources' on every node of that side. */}}
{{- define "raycluster.sideResources" -}}
{{- $sides := dict -}}
{{- if include "verl-ppo.rolloutPoolEnabled" . -}}
{{- range $side, $name := include "verl-ppo.poolResources" . | fromJson -}}
{{- $_ := set $sides $side (toJson (dict $name 1)) -}}
{{- end -}}
{{- end -}}
{{- toJson $sides -}}
{{- end -}}

{{/* Where the rollout pool's pods go and how they talk (JSON: nodeSelector, tolerations, rdma, nccl): each of
     raycluster.rolloutPool's, or the training pods' where it is null. */}}
{{- define "raycluster.rolloutPoolPlacement" -}}
{{- $place := dict -}}
{{- range $key := list "nodeSelector" "tolerations" "rdma" "nccl" -}}
{{- $own := index $.Values.rolloutPool $key -}}
{{- $_ := set $place $key (ternary (index $.Values $key) $own (kindIs "invalid" $own)) -}}
{{- end -}}
{{- /* The pool's RDMA settings it leaves out are the training pods' (its own device count, their resource name); set
     key by key, as merge would take a false of its own for unset. */ -}}
{{- $rdma := deepCopy $.Values.rdma -}}
{{- range $key, $value := $place.rdma }}{{ $_ := set $rdma $key $value }}{{ end -}}
{{- $_ := set $place "rdma" $rdma -}}
{{- toJson $place -}}
{{- end -}}

{{/* KubeRay's gcsFaultToleranceOptions: the GCS in an external Redis, its password only from a Secret. */}}
{{- define "raycluster.gcsFaultTolerance" -}}
{{- if .enabled }}
gcsFaultToleranceOptions:
  redisAddress: {{ .redisAddress | quote }}
  {{- with .passwordSecret.secretName }}
  redisPassword:
    valueFrom:
      secretKeyRef:
        name: {{ . | quote }}
        key: {{ $.passwordSecret.key | quote }}
  {{- end }}
  {{- with .externalStorageNamespace }}
  externalStorageNamespace: {{ . | quote }}
  {{- end }}
{{- end }}
{{- end -}}

{{/* "true" when Kueue admits the autoscaling cluster elastically (raycluster.queue.elastic), else "": the RayCluster,
     or in RayJob mode the RayJob (Kueue's RayJob webhook admits its autoscaling with workload slices). */}}
{{- define "raycluster.elasticQueue" -}}
{{- $q := .Values.queue -}}
{{- if and $q.elastic $q.kueue .Values.worker.autoscaling.enabled -}}true{{- end -}}
{{- end -}}

{{/* Queue labels of the object Kueue or Volcano schedules (the RayCluster, or the RayJob in RayJob mode). */}}
{{- define "raycluster.queueLabels" -}}
{{- with .Values.queue.kueue }}
kueue.x-k8s.io/queue-name: {{ . | quote }}
{{- end }}
{{- with .Values.queue.workloadPriorityClass }}
kueue.x-k8s.io/priority-class: {{ . | quote }}
{{- end }}
{{- with .Values.queue.volcano }}
# KubeRay's volcano batch scheduler gang-schedules head and workers as one PodGroup.
ray.io/scheduler-name: volcano
volcano.sh/queue-name: {{ . | quote }}
{{- end }}
{{- end -}}
