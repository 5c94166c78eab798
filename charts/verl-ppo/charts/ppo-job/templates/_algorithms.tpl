{{/* The chosen algorithm's entry of files/algorithms.yaml (the table the generator reads too), as JSON with its
     name and its versions (the veRL versions of files/verl-versions.yaml from its `since` on); {} for an
     unknown name (the schema rejects it). */}}
{{- define "ppo-job.algorithm" -}}
{{- $name := .Values.algorithm.name | default "ppo" -}}
{{- $entry := get (.Files.Get "files/algorithms.yaml" | fromYaml) $name -}}
{{- if $entry -}}
{{- $names := include "ppo-job.verlVersionNames" . | fromJsonArray -}}
{{- $since := toString $entry.since -}}
{{- $versions := list -}}
{{- range $names }}{{ if or $versions (eq . $since) }}{{ $versions = append $versions . }}{{ end }}{{ end -}}
{{- set (set $entry "name" $name) "versions" $versions | toJson -}}
{{- else }}{}{{ end -}}
{{- end -}}

{{/* rollout.n: the value, else the algorithm's default. */}}
{{- define "ppo-job.responsesPerPrompt" -}}
{{- $n := .Values.rollout.responsesPerPrompt -}}
{{- if kindIs "invalid" $n }}{{ $n = (include "ppo-job.algorithm" . | fromJson).responsesPerPrompt | default 1 }}{{ end -}}
{{- int $n -}}
{{- end -}}
