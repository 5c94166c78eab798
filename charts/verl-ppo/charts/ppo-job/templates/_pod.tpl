{{/* Shared by the submitter Job, the helm test pod, the uninstall hook and the preparation Job: all
     run a program of files/ from the ppo-job ConfigMap. */}}

{{- define "ppo-job.configMapName" -}}
{{- include "verl-ppo.componentName" (dict "ctx" . "suffix" "ppo-job") -}}
{{- end -}}

{{/* image and imagePullPolicy of a container; ctx is the chart context, image an image section
     (empty fields fall back to global.image). */}}
{{- define "ppo-job.image" -}}
{{- $image := dict "image" (.image | default .ctx.Values.image) "global" .ctx.Values.global -}}
image: {{ include "verl-ppo.image" $image | quote }}
imagePullPolicy: {{ include "verl-ppo.imagePullPolicy" $image }}
{{- end -}}

{{/* The ConfigMap with job.json and submitter.py, mounted read-only at /etc/verl-ppo. */}}
{{- define "ppo-job.specMount" -}}
- name: job-spec
  mountPath: /etc/verl-ppo
  readOnly: true
{{- end -}}

{{- define "ppo-job.specVolume" -}}
- name: job-spec
  configMap:
    name: {{ include "ppo-job.configMapName" . }}
{{- end -}}

{{/* Where the submitter finds the head, the job spec, its submission ids and the GPUs to wait for. */}}
{{- define "ppo-job.submitterEnv" -}}
- name: RAY_DASHBOARD_URL
  value: {{ default (include "verl-ppo.dashboardURL" .) .Values.dashboardURL | quote }}
- name: VERL_PPO_JOB_SPEC
  value: /etc/verl-ppo/job.json
- name: VERL_PPO_SUBMISSION_FAMILY
  value: {{ include "ppo-job.configMapName" . | quote }}
- name: VERL_PPO_EXPECTED_GPUS
  value: {{ include "verl-ppo.clusterGpus" . | quote }}
- name: PYTHONUNBUFFERED
  value: "1"
{{- include "verl-ppo.rayAuthEnv" . }}
{{- end -}}

{{/* The shared volume at its usual mount path: read-only for the submitter, writable for the preparation Job. */}}
{{- define "ppo-job.sharedMount" -}}
- name: shared-data
  mountPath: {{ include "verl-ppo.mountPath" .ctx }}
  readOnly: {{ .readOnly }}
{{- end -}}

{{- define "ppo-job.sharedVolume" -}}
- name: shared-data
  persistentVolumeClaim:
    claimName: {{ include "verl-ppo.claimName" . }}
{{- end -}}

{{/* The run's inputs on the shared volume (JSON list): data files, each model's config.json (the
     critic's only where the algorithm trains one), the custom reward function's file.
     Paths outside the mount (inside the image, a remote URI) are not the submitter's to check. */}}
{{- define "ppo-job.inputs" -}}
{{- $mount := printf "%s/" (include "verl-ppo.mountPath" .) -}}
{{- $models := list .Values.model.path -}}
{{- if (include "ppo-job.algorithm" . | fromJson).critic }}{{ $models = uniq (append $models (default .Values.model.path .Values.critic.modelPath)) }}{{ end -}}
{{- $paths := list .Values.data.trainFiles .Values.data.valFiles -}}
{{- range $models }}{{ $paths = append $paths (printf "%s/config.json" (trimSuffix "/" .)) }}{{ end -}}
{{- with .Values.reward.functionPath }}{{ $paths = append $paths . }}{{ end -}}
{{- $inputs := list -}}
{{- range uniq $paths }}{{ if hasPrefix $mount . }}{{ $inputs = append $inputs . }}{{ end }}{{ end -}}
{{- toJson $inputs -}}
{{- end -}}

{{/* The checkpoint directory veRL resumes from (resume_mode auto), where the submitter can read it
     (on the shared volume): it checks that the newest checkpoint was written by as many GPUs as the
     release has. Empty: nothing to check. */}}
{{- define "ppo-job.resumeCheckDir" -}}
{{- $dir := include "verl-ppo.checkpointDir" . -}}
{{- if and (eq .Values.trainer.resumeMode "auto") (hasPrefix (printf "%s/" (include "verl-ppo.mountPath" .)) $dir) -}}
{{- $dir -}}
{{- end -}}
{{- end -}}

{{/* The Job's name carries a hash of the run (job.json) and of its pod: an upgrade that changes
     neither keeps the Job and its running Ray job; one that changes either makes a new Job (a Job's
     pod template is immutable), whose submitter supersedes the old run. */}}
{{- define "ppo-job.jobName" -}}
{{- $hash := print (include "ppo-job.jobJson" .) (include "ppo-job.submitterPod" .) | sha256sum | trunc 8 -}}
{{- printf "%s-%s" (include "ppo-job.configMapName" .) $hash -}}
{{- end -}}

{{- define "ppo-job.serviceAccountName" -}}
{{- include "ppo-job.configMapName" . -}}
{{- end -}}
