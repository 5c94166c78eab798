{{/* The submitter Job's pod template. Its text is part of the Job's name (ppo-job.jobName), so it
     holds nothing that depends on that name: the pod learns it from its job-name label.
     In RayJob mode it is the RayJob's submitterPodTemplate: KubeRay adds RAY_JOB_SUBMISSION_ID, the one
     submission id of the run on that cluster, and stops the run when the RayJob is deleted. */}}
{{- define "ppo-job.submitterPod" -}}
{{- $v := .Values -}}
{{- $inputs := include "ppo-job.inputs" . | fromJsonArray -}}
{{- $resumeCheckDir := include "ppo-job.resumeCheckDir" . -}}
{{- $ownJob := not (include "verl-ppo.rayJobMode" .) -}}
metadata:
  labels:
    {{- include "verl-ppo.podLabels" (dict "ctx" $ "component" "ppo-job") | nindent 4 }}
spec:
  restartPolicy: Never
  {{- if and $ownJob $v.submitter.stopOnJobDelete }}
  # A token that may read this one Job: on SIGTERM the submitter tells a deleted Job (stop the run) from an eviction.
  serviceAccountName: {{ include "ppo-job.serviceAccountName" . }}
  automountServiceAccountToken: true
  {{- else }}
  # The submitter talks HTTP to the Ray head only: no Kubernetes API token.
  automountServiceAccountToken: false
  {{- end }}
  {{- with include "verl-ppo.imagePullSecrets" . }}{{ . | trim | nindent 2 }}{{ end }}
  securityContext:
    {{- include "verl-ppo.restrictedPodSecurityContext" (dict) | nindent 4 }}
  containers:
    - name: submitter
      {{- include "ppo-job.image" (dict "ctx" .) | nindent 6 }}
      command: ["python3", "/etc/verl-ppo/submitter.py"]
      env:
        {{- include "ppo-job.submitterEnv" . | nindent 8 }}
        {{- if $ownJob }}
        - name: VERL_PPO_SUBMISSION_PREFIX
          valueFrom:
            fieldRef:
              fieldPath: metadata.labels['batch.kubernetes.io/job-name']
        - name: VERL_PPO_NAMESPACE
          valueFrom:
            fieldRef:
              fieldPath: metadata.namespace
        {{- end }}
        - name: VERL_PPO_WAIT_TIMEOUT_SECONDS
          value: {{ include "verl-ppo.scalar" $v.submitter.waitTimeoutSeconds | quote }}
        - name: VERL_PPO_DASHBOARD_TIMEOUT_SECONDS
          value: {{ include "verl-ppo.scalar" $v.submitter.dashboardTimeoutSeconds | quote }}
        - name: VERL_PPO_MAX_ATTEMPTS
          value: {{ include "verl-ppo.scalar" $v.submitter.maxAttempts | quote }}
        - name: VERL_PPO_INPUTS
          value: {{ toJson $inputs | quote }}
        - name: VERL_PPO_WAIT_FOR_INPUTS
          value: {{ $v.prepare.enabled | toString | quote }}
        - name: VERL_PPO_INPUTS_TIMEOUT_SECONDS
          value: {{ include "verl-ppo.scalar" $v.prepare.timeoutSeconds | quote }}
        {{- with $resumeCheckDir }}
        - name: VERL_PPO_RESUME_CHECK_DIR
          value: {{ . | quote }}
        {{- end }}
        {{- if include "ppo-job.plugins" . }}
        - name: VERL_PPO_RUN_MODULE
          value: /etc/verl-ppo/{{ include "ppo-job.pluginsModule" . }}.py
        {{- end }}
        {{- if $v.preflight.enabled }}
        - name: VERL_PPO_PREFLIGHT
          value: /etc/verl-ppo/preflight.py
        - name: VERL_PPO_PREFLIGHT_EXPECTED
          value: {{ include "ppo-job.preflightExpected" . | quote }}
        {{- end }}
      resources:
        {{- toYaml $v.submitter.resources | nindent 8 }}
      securityContext:
        {{- include "verl-ppo.restrictedContainerSecurityContext" (dict) | nindent 8 }}
      volumeMounts:
        {{- include "ppo-job.specMount" . | nindent 8 }}
        {{- if or $inputs $resumeCheckDir }}
        {{- include "ppo-job.sharedMount" (dict "ctx" . "readOnly" true) | nindent 8 }}
        {{- end }}
  volumes:
    {{- include "ppo-job.specVolume" . | nindent 4 }}
    {{- if or $inputs $resumeCheckDir }}
    {{- include "ppo-job.sharedVolume" . | nindent 4 }}
    {{- end }}
{{- end -}}

{{/* What the preflight checks on every Ray node (JSON): the shared volume's mount path, the run's inputs,
     the GPUs per training node and how many such nodes, the rollout pool's where there is one, and the NCCL variables
     the run's environment sets. */}}
{{- define "ppo-job.preflightExpected" -}}
{{- $nccl := dict -}}
{{- range $name, $value := .Values.runtimeEnv.env }}
{{- if hasPrefix "NCCL_" $name }}{{ $_ := set $nccl $name (toString $value) }}{{ end }}
{{- end }}
{{- $expected := dict "mountPath" (include "verl-ppo.mountPath" .) "inputs" (include "ppo-job.inputs" . | fromJsonArray)
  "gpusPerNode" (include "verl-ppo.gpusPerNode" . | int) "gpuNodes" (include "verl-ppo.gpuNodes" . | int) "ncclEnv" $nccl -}}
{{- if include "verl-ppo.rolloutPoolEnabled" . }}
{{- $_ := set $expected "poolNodes" (include "verl-ppo.rolloutPoolNodes" . | int) }}
{{- $_ := set $expected "poolGpusPerNode" (include "verl-ppo.rolloutPoolGpusPerNode" . | int) }}
{{- end }}
{{- toJson $expected -}}
{{- end -}}

{{/* What the submitter sends to the Ray Jobs API (JSON). entrypoint is the exact veRL command line.
     Nothing per revision in here: an unchanged run keeps its hash, its Job and its Ray job. */}}
{{- define "ppo-job.jobJson" -}}
{{- $metadata := dict "release" .Release.Name "checkpointDir" (include "verl-ppo.checkpointDir" .) -}}
{{- dict "entrypoint" (include "ppo-job.entrypoint" .) "runtime_env" (include "ppo-job.runtimeEnv" . | fromJson) "metadata" $metadata | toPrettyJson -}}
{{- end -}}
