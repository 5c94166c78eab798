{{/* Pod Security "restricted" for the release's pods that need no root (submitter, hooks, preparation,
     TensorBoard). Call with (dict) for nobody, or (dict "runAsUser" u "runAsGroup" g) for a user that
     must write the shared volume. */}}
{{- define "verl-ppo.restrictedPodSecurityContext" -}}
runAsNonRoot: true
runAsUser: {{ include "verl-ppo.scalar" (.runAsUser | default 65534) }}
runAsGroup: {{ include "verl-ppo.scalar" (.runAsGroup | default 65534) }}
seccompProfile:
  type: RuntimeDefault
{{- end -}}

{{- define "verl-ppo.restrictedContainerSecurityContext" -}}
allowPrivilegeEscalation: false
readOnlyRootFilesystem: true
capabilities:
  drop: ["ALL"]
{{- end -}}
