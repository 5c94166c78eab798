{{/* Shared by the submitter Job, the helm test pod and the uninstall hook: all run files/submitter.py
     from the ppo-job ConfigMap. */}}

{{- define "ppo-job.configMapName" -}}
{{- include "verl-ppo.componentName" (dict "ctx" . "suffix" "ppo-job") -}}
{{- end -}}

{{/* image and imagePullPolicy of a submitter container. */}}
{{- define "ppo-job.image" -}}
image: {{ include "verl-ppo.image" (dict "image" .Values.image "global" .Values.global) | quote }}
imagePullPolicy: {{ include "verl-ppo.imagePullPolicy" (dict "image" .Values.image "global" .Values.global) }}
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
  value: {{ include "verl-ppo.dashboardURL" . | quote }}
- name: VERL_PPO_JOB_SPEC
  value: /etc/verl-ppo/job.json
- name: VERL_PPO_SUBMISSION_PREFIX
  value: {{ printf "%s-r%d" .Release.Name (int .Release.Revision) | quote }}
- name: VERL_PPO_EXPECTED_GPUS
  value: {{ mul (int .Values.global.gpu.nodes) (int .Values.global.gpu.perNode) | quote }}
- name: PYTHONUNBUFFERED
  value: "1"
{{- end -}}

{{/* Pod Security "restricted": the submitter needs python3 and read access to its ConfigMap only. */}}
{{- define "ppo-job.podSecurityContext" -}}
runAsNonRoot: true
runAsUser: 65534
runAsGroup: 65534
seccompProfile:
  type: RuntimeDefault
{{- end -}}

{{- define "ppo-job.containerSecurityContext" -}}
allowPrivilegeEscalation: false
readOnlyRootFilesystem: true
capabilities:
  drop: ["ALL"]
{{- end -}}
