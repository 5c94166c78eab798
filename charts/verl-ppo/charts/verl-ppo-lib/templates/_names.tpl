{{/*
Names shared by every component. They depend on .Release and .Values.global only, so the
umbrella chart and each subchart compute the same names.
*/}}

{{/* Release-wide base name: global.fullnameOverride, else the release name. Never truncated:
     verl-ppo.rules.nameLength fails instead, because a silently shortened name breaks the links
     between the RayCluster, its Service and the submitter. */}}
{{- define "verl-ppo.fullname" -}}
{{- $global := .Values.global | default dict -}}
{{- default .Release.Name $global.fullnameOverride -}}
{{- end -}}

{{/* RayCluster name (in RayJob mode the RayJob's); KubeRay derives the head Service and pod names from it. */}}
{{- define "verl-ppo.clusterName" -}}
{{- include "verl-ppo.fullname" . -}}
{{- end -}}

{{/* Label a RayJob's Ray pods carry (their cluster's name is KubeRay's, <RayJob>-<random>): its value is the RayJob's name. */}}
{{- define "verl-ppo.rayJobPodLabel" -}}verl-ppo.io/ray-job{{- end -}}

{{/* Labels that select the release's Ray pods (YAML map): by their RayCluster's name, or in RayJob mode by the RayJob's. */}}
{{- define "verl-ppo.rayPodSelector" -}}
{{- if include "verl-ppo.rayJobMode" . -}}
{{ include "verl-ppo.rayJobPodLabel" . }}: {{ include "verl-ppo.clusterName" . }}
{{- else -}}
ray.io/cluster: {{ include "verl-ppo.clusterName" . }}
{{- end -}}
{{- end -}}

{{/* The head's Service: KubeRay's for the RayCluster (<cluster>-head-svc); in RayJob mode the chart's own
     (raycluster's head-service.yaml), as KubeRay's <RayJob>-head-svc selects by a label the chart's pods do not
     carry. Its suffix has a '-' within KubeRay's 5 random characters, so no name KubeRay derives is the same. */}}
{{- define "verl-ppo.headServiceName" -}}
{{- if include "verl-ppo.rayJobMode" . -}}
{{- include "verl-ppo.componentName" (dict "ctx" . "suffix" "ray-head") -}}
{{- else -}}
{{- printf "%s-head-svc" (include "verl-ppo.clusterName" .) -}}
{{- end -}}
{{- end -}}

{{/* The release's own Ray dashboard / Jobs API address inside the cluster. */}}
{{- define "verl-ppo.dashboardURL" -}}
{{- printf "http://%s.%s.svc:%d" (include "verl-ppo.headServiceName" .) .Release.Namespace (include "verl-ppo.port" (dict "name" "dashboard") | int) -}}
{{- end -}}

{{/* The shared ReadWriteMany claim: an existing one, or the one the storage component creates. */}}
{{- define "verl-ppo.claimName" -}}
{{- $storage := .Values.global.storage -}}
{{- default (printf "%s-data" (include "verl-ppo.fullname" .)) $storage.existingClaim -}}
{{- end -}}

{{/* Name of a component's object: <fullname>-<suffix>. */}}
{{- define "verl-ppo.componentName" -}}
{{- printf "%s-%s" (include "verl-ppo.fullname" .ctx) .suffix -}}
{{- end -}}

{{/* The release's TensorBoard directory on the shared volume: TensorBoard's logdir and the Ray nodes' TENSORBOARD_DIR.
     The PPO run's own TENSORBOARD_DIR (ppo-job.runtimeEnv) is <this>/<project>/<experiment>, a run of its own in TensorBoard. */}}
{{- define "verl-ppo.tensorboardDir" -}}
{{- printf "%s/tensorboard/%s" (include "verl-ppo.mountPath" .) (include "verl-ppo.fullname" .) -}}
{{- end -}}

{{/* TensorBoard's Service (observability), also a backend of the dashboard Ingress (raycluster). */}}
{{- define "verl-ppo.tensorboardServiceName" -}}
{{- include "verl-ppo.componentName" (dict "ctx" . "suffix" "tensorboard") -}}
{{- end -}}

{{/* Absolute checkpoint directory on the shared volume: veRL's default is relative and vanishes with Ray's
     temp dir. Call with the ppo-job component's context (its values: trainer.checkpointDir, experimentName). */}}
{{- define "verl-ppo.checkpointDir" -}}
{{- $trainer := .Values.trainer -}}
{{- default (printf "%s/checkpoints/%s/%s" (include "verl-ppo.mountPath" .) .Release.Name $trainer.experimentName) $trainer.checkpointDir -}}
{{- end -}}

{{/* Where every pod mounts the shared volume, without a trailing slash (paths under it are built on it). */}}
{{- define "verl-ppo.mountPath" -}}
{{- trimSuffix "/" .Values.global.storage.mountPath -}}
{{- end -}}

{{/* "true" when a path the run writes is on the shared volume once normalised (/data/../tmp is not):
     (dict "ctx" <chart context> "path" p). */}}
{{- define "verl-ppo.onVolume" -}}
{{- $mount := include "verl-ppo.mountPath" .ctx -}}
{{- $path := clean (toString .path) -}}
{{- if and (hasPrefix "/" (toString .path)) (or (eq $path $mount) (hasPrefix (printf "%s/" $mount) $path)) -}}true{{- end -}}
{{- end -}}
