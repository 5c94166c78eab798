{{/*
Release-wide figures, each derived once from `global` (the umbrella's; Helm copies it into each component's
values). Call with any chart context (needs .Values.global).
*/}}

{{/* GPUs of one training node (veRL trainer.n_gpus_per_node); every Ray training pod takes them all. */}}
{{- define "verl-ppo.gpusPerNode" -}}
{{- int .Values.global.gpu.perNode -}}
{{- end -}}

{{/* Training nodes (veRL trainer.nnodes): the head counts when it trains. */}}
{{- define "verl-ppo.gpuNodes" -}}
{{- int .Values.global.gpu.nodes -}}
{{- end -}}

{{/* GPUs of the whole run: veRL's batch rules divide by it, the submitter waits for it. */}}
{{- define "verl-ppo.totalGpus" -}}
{{- mul (include "verl-ppo.gpuNodes" . | int) (include "verl-ppo.gpusPerNode" . | int) -}}
{{- end -}}

{{/* "true" when the release runs a rollout pool (global.rolloutPool.enabled): a second worker group for veRL's rollout
     replicas (ppo-job.trainer.mode=separate_async); else "". */}}
{{- define "verl-ppo.rolloutPoolEnabled" -}}
{{- if (.Values.global.rolloutPool | default dict).enabled -}}true{{- end -}}
{{- end -}}

{{/* The Ray resource of each side while a rollout pool runs (JSON: training, rollout), which keeps veRL's pools apart:
     the RayCluster gives every training node (the head where it trains) and every pool node its side's, 1 a node, and
     the chart's plug-ins make veRL's training pool and each rollout replica demand theirs (files/verl_plugins.py,
     docs/operations.md). Ray's placement groups otherwise ask only for CPUs and GPUs. */}}
{{- define "verl-ppo.poolResources" -}}
{{- toJson (dict "training" "verl_ppo_training" "rollout" "verl_ppo_rollout") -}}
{{- end -}}

{{/* GPUs of one rollout pool node (veRL actor_rollout_ref.rollout.n_gpus_per_node): global.rolloutPool.perNode, or the
     training nodes' where it is null. */}}
{{- define "verl-ppo.rolloutPoolGpusPerNode" -}}
{{- $perNode := (.Values.global.rolloutPool | default dict).perNode -}}
{{- ternary (include "verl-ppo.gpusPerNode" .) $perNode (kindIs "invalid" $perNode) | int -}}
{{- end -}}

{{/* Rollout pool nodes (veRL actor_rollout_ref.rollout.nnodes); 0 without a pool. */}}
{{- define "verl-ppo.rolloutPoolNodes" -}}
{{- ternary ((.Values.global.rolloutPool | default dict).nodes | int) 0 (not (empty (include "verl-ppo.rolloutPoolEnabled" .))) -}}
{{- end -}}

{{/* GPUs of the Ray cluster: training's and the rollout pool's (what the submitter waits for, what Kueue admits). */}}
{{- define "verl-ppo.clusterGpus" -}}
{{- $pool := mul (include "verl-ppo.rolloutPoolNodes" . | int) (include "verl-ppo.rolloutPoolGpusPerNode" . | int) -}}
{{- add (include "verl-ppo.totalGpus" . | int) $pool -}}
{{- end -}}

{{/* GPU worker pods training needs: every training node but the head when the head trains.
     Call with (dict "Values" (dict "global" ...) "trainsOnHead" bool). */}}
{{- define "verl-ppo.workerReplicas" -}}
{{- sub (include "verl-ppo.gpuNodes" . | int) (ternary 1 0 .trainsOnHead) -}}
{{- end -}}

{{/* "true" when the release runs as a KubeRay RayJob (global.mode): KubeRay creates a RayCluster for the
     run, starts our submitter as the RayJob's submitter and removes the cluster after; else "". */}}
{{- define "verl-ppo.rayJobMode" -}}
{{- if eq (.Values.global.mode | default "RayCluster") "RayJob" -}}true{{- end -}}
{{- end -}}

{{/* The Secret of Ray's token (global.rayAuth.tokenSecret), its key auth_token as KubeRay reads it; "" when off. */}}
{{- define "verl-ppo.rayAuthSecret" -}}
{{- ((.Values.global.rayAuth | default dict).tokenSecret | default "") -}}
{{- end -}}

{{/* RAY_AUTH_TOKEN from that Secret (a list of one EnvVar, or nothing): what Ray's clients send as a bearer token. */}}
{{- define "verl-ppo.rayAuthEnv" -}}
{{- with include "verl-ppo.rayAuthSecret" . }}
- name: RAY_AUTH_TOKEN
  valueFrom:
    secretKeyRef:
      name: {{ . | quote }}
      key: auth_token
{{- end }}
{{- end -}}

{{/* The variables Ray and KubeRay read for Ray's token (JSON list). KubeRay sets RAY_AUTH_MODE and RAY_AUTH_TOKEN on each
     Ray container that lacks them and keeps what a container already has; Ray also reads RAY_AUTH_TOKEN_PATH (a file
     in place of the variable) and RAY_ENABLE_K8S_TOKEN_AUTH (Kubernetes tokens in place of it). With
     global.rayAuth.tokenSecret they are the chart's in every env list (the rulebook refuses them there). */}}
{{- define "verl-ppo.rayAuthEnvNames" -}}
{{- list "RAY_AUTH_MODE" "RAY_AUTH_TOKEN" "RAY_AUTH_TOKEN_PATH" "RAY_ENABLE_K8S_TOKEN_AUTH" | toJson -}}
{{- end -}}

{{- define "verl-ppo.tensorboardEnabled" -}}
{{- if .Values.global.tensorboard.enabled -}}true{{- end -}}
{{- end -}}

{{/* Every port the release's objects name (JSON): Ray's on the head and workers, TensorBoard's, the head's
     rollout Prometheus (global.rolloutMetrics; veRL's rollout.prometheus.port). */}}
{{- define "verl-ppo.ports" -}}
{{- dict "gcs" 6379 "dashboard" 8265 "client" 10001 "metrics" 8080 "autoscalerMetrics" 44217 "dashboardMetrics" 44227
  "tensorboard" 6006 "rolloutPrometheus" 9090 | toJson -}}
{{- end -}}

{{/* "true" when the rollout servers' metrics are on (global.rolloutMetrics.enabled): veRL lists its servers
     for the Prometheus sidecar on the Ray head, which the head's PodMonitor federates. */}}
{{- define "verl-ppo.rolloutMetricsEnabled" -}}
{{- if dig "rolloutMetrics" "enabled" false .Values.global -}}true{{- end -}}
{{- end -}}

{{/* The scrape configuration veRL writes on every Ray node (rollout.prometheus.file) and the head's sidecar
     reads: on the /tmp/ray volume every Ray container has, so the write succeeds on workers too (the sidecar
     mounts that volume elsewhere: raycluster.rolloutPrometheusContainer). */}}
{{- define "verl-ppo.rolloutPrometheusFile" -}}
/tmp/ray/verl-ppo/rollout-prometheus.yml
{{- end -}}

{{/* One port by name: (dict "ctx" $ "name" "dashboard"). */}}
{{- define "verl-ppo.port" -}}
{{- index (include "verl-ppo.ports" . | fromJson) .name | int -}}
{{- end -}}
