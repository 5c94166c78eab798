{{/* The preparation program's arguments (JSON list), from ppo-job.prepare and the run's paths. */}}
{{- define "ppo-job.prepareArgs" -}}
{{- $p := .Values.prepare -}}
{{- $dataset := ne $p.dataset.format "none" -}}
{{- $args := list "--source" $p.source -}}
{{- if $dataset }}{{ $args = concat $args (list "--train-file" .Values.data.trainFiles "--val-file" .Values.data.valFiles) }}{{ end }}
{{- $args = concat $args (list "--model-path" .Values.model.path) -}}
{{- $from := ternary (list "--dataset-local-path" $p.dataset.localPath "--model-local-path" $p.model.localPath)
  (list "--dataset-id" $p.dataset.id "--model-id" $p.model.id) (eq $p.source "local") -}}
{{- $args = concat $args (ternary $from (slice $from 2) $dataset) -}}
{{- /* GSM8K is prepare.py's default format: its runs keep the arguments (and the Job's name) they had before formats. */}}
{{- if not (has $p.dataset.format (list "gsm8k" "none")) }}{{ $args = concat $args (list "--dataset-format" $p.dataset.format) }}{{ end }}
{{- toJson $args -}}
{{- end -}}

{{/* Hub settings as the client libraries read them from the environment. */}}
{{- define "ppo-job.prepareEnv" -}}
{{- $p := .Values.prepare -}}
{{- $hf := eq $p.source "huggingface" -}}
- name: HOME
  value: /tmp
- name: HF_HOME
  value: /tmp/huggingface
- name: MODELSCOPE_CACHE
  value: /tmp/modelscope
- name: PYTHONUNBUFFERED
  value: "1"
{{- with $p.endpoint }}
- name: {{ ternary "HF_ENDPOINT" "MODELSCOPE_DOMAIN" $hf }}
  value: {{ . | quote }}
{{- end }}
{{- with $p.tokenSecret.name }}
- name: {{ ternary "HF_TOKEN" "MODELSCOPE_API_TOKEN" $hf }}
  valueFrom:
    secretKeyRef:
      {{- /* Both restricted by the schema (a Secret name, a Secret key): safe bare. */}}
      name: {{ . }}
      key: {{ $p.tokenSecret.key }}
{{- end }}
{{- end -}}

{{- define "ppo-job.preparePod" -}}
{{- $p := .Values.prepare -}}
metadata:
  labels:
    {{- include "verl-ppo.podLabels" (dict "ctx" $ "component" "prepare") | nindent 4 }}
spec:
  restartPolicy: Never
  automountServiceAccountToken: false
  {{- with include "verl-ppo.imagePullSecrets" . }}{{ . | trim | nindent 2 }}{{ end }}
  securityContext:
    {{- include "verl-ppo.restrictedPodSecurityContext" (dict "runAsUser" $p.runAsUser "runAsGroup" $p.runAsGroup) | nindent 4 }}
    fsGroup: {{ include "verl-ppo.scalar" $p.runAsGroup }}
  containers:
    - name: prepare
      {{- include "ppo-job.image" (dict "ctx" . "image" $p.image) | nindent 6 }}
      command: ["python3", "/etc/verl-ppo/prepare.py"]
      args:
        {{- include "ppo-job.prepareArgs" . | fromJsonArray | toYaml | nindent 8 }}
      env:
        {{- include "ppo-job.prepareEnv" . | nindent 8 }}
      resources:
        {{- toYaml $p.resources | nindent 8 }}
      securityContext:
        {{- include "verl-ppo.restrictedContainerSecurityContext" (dict) | nindent 8 }}
      volumeMounts:
        {{- include "ppo-job.specMount" . | nindent 8 }}
        {{- include "ppo-job.sharedMount" (dict "ctx" . "readOnly" false) | nindent 8 }}
        - name: scratch
          mountPath: /tmp
  volumes:
    {{- include "ppo-job.specVolume" . | nindent 4 }}
    {{- include "ppo-job.sharedVolume" . | nindent 4 }}
    - name: scratch
      emptyDir: {}
{{- end -}}
