{{/* Labels that select the release's objects of one component. Call with (dict "ctx" $ "component" "x"). */}}
{{- define "verl-ppo.selectorLabels" -}}
app.kubernetes.io/name: verl-ppo
app.kubernetes.io/instance: {{ .ctx.Release.Name }}
app.kubernetes.io/component: {{ .component }}
{{- end -}}

{{/* Full label set for metadata: the chart's (and `extra`, YAML text: the chart's too), then global.commonLabels
     and `user` (a map from values), which cannot replace them. Call with (dict "ctx" $ "component" "x" ["extra"
     <YAML>] ["user" <map>]). */}}
{{- define "verl-ppo.labels" -}}
{{- $chart := include "verl-ppo.chartLabels" . -}}
{{- with .extra }}{{ $chart = printf "%s\n%s" $chart (trim .) }}{{ end -}}
{{- include "verl-ppo.mergedLabels" (dict "chart" $chart "user" (list .ctx.Values.global.commonLabels .user)) -}}
{{- end -}}

{{- define "verl-ppo.chartLabels" -}}
{{ include "verl-ppo.selectorLabels" . }}
{{ include "verl-ppo.releaseLabels" . }}
{{- end -}}

{{/* The labels that say which chart and release made an object (no selector reads them). */}}
{{- define "verl-ppo.releaseLabels" -}}
app.kubernetes.io/part-of: verl-ppo
app.kubernetes.io/version: {{ .ctx.Chart.AppVersion | default .ctx.Chart.Version | quote }}
app.kubernetes.io/managed-by: {{ .ctx.Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .ctx.Chart.Name .ctx.Chart.Version | replace "+" "_" }}
{{- end -}}

{{/* Labels of a pod the chart renders: its selector labels, the release's pod label, `extra` (YAML text, the
     chart's too), then global.commonLabels and the pod's own labels from values (`user`, a map), which cannot
     replace any of the chart's. Call with (dict "ctx" $ "component" "x" ["extra" <YAML>] ["user" <map>]). */}}
{{- define "verl-ppo.podLabels" -}}
{{- $chart := list (include "verl-ppo.selectorLabels" .) (include "verl-ppo.releasePodLabel" .ctx) -}}
{{- with .extra }}{{ $chart = append $chart . }}{{ end -}}
{{- include "verl-ppo.mergedLabels" (dict "chart" (join "\n" $chart) "user" (list .ctx.Values.global.commonLabels .user)) -}}
{{- end -}}

{{/* The one place labels from values meet the chart's: `chart` (YAML text) as it is, then each map of `user`
     (a list, later maps over earlier ones) less every key the chart sets, so a user label can never move a pod
     out of a selector or a NetworkPolicy. The chart's text comes first and unchanged: a pod's text (hashed into
     Job names) stays the same where no user label is given. */}}
{{- define "verl-ppo.mergedLabels" -}}
{{- $owned := fromYaml .chart -}}
{{- $user := dict -}}
{{- range .user }}{{ $user = mergeOverwrite $user (deepCopy (. | default dict)) }}{{ end -}}
{{- range $key := keys $owned }}{{ $_ := unset $user $key }}{{ end -}}
{{ .chart }}
{{- with $user }}
{{ toYaml . }}
{{- end }}
{{- end -}}

{{/* Label every pod of the release carries, used by the NetworkPolicy to admit the release's own pods. */}}
{{- define "verl-ppo.releasePodLabel" -}}
verl-ppo.io/release: {{ .Release.Name }}
{{- end -}}

{{/* A container's environment: `chart` (YAML list text) as it is, then `user` (a list of env entries) less
     every name the chart sets, so a value from values can never replace a variable the chart owns (the
     rulebook refuses such a name with its fix; this keeps the chart's even past the rules). The chart's come
     first, as user entries may refer to them with $(NAME). */}}
{{- define "verl-ppo.mergedEnv" -}}
{{- $owned := list -}}
{{- range (fromYamlArray .chart) }}{{ $owned = append $owned .name }}{{ end -}}
{{- $user := list -}}
{{- range .user }}{{ if not (has .name $owned) }}{{ $user = append $user . }}{{ end }}{{ end -}}
{{ .chart | trim }}
{{- with $user }}
{{ toYaml . }}
{{- end }}
{{- end -}}
