{{/* Labels that select the release's objects of one component. Call with (dict "ctx" $ "component" "x"). */}}
{{- define "verl-ppo.selectorLabels" -}}
app.kubernetes.io/name: verl-ppo
app.kubernetes.io/instance: {{ .ctx.Release.Name }}
app.kubernetes.io/component: {{ .component }}
{{- end -}}

{{/* Full label set for metadata. Call with (dict "ctx" $ "component" "x"). */}}
{{- define "verl-ppo.labels" -}}
{{ include "verl-ppo.selectorLabels" . }}
app.kubernetes.io/part-of: verl-ppo
app.kubernetes.io/version: {{ .ctx.Chart.AppVersion | default .ctx.Chart.Version | quote }}
app.kubernetes.io/managed-by: {{ .ctx.Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .ctx.Chart.Name .ctx.Chart.Version | replace "+" "_" }}
{{- with .ctx.Values.global.commonLabels }}
{{ toYaml . }}
{{- end }}
{{- end -}}

{{/* Label every pod of the release carries, used by the NetworkPolicy to admit the release's own pods. */}}
{{- define "verl-ppo.releasePodLabel" -}}
verl-ppo.io/release: {{ .Release.Name }}
{{- end -}}
