{{/* The chosen algorithm's entry of files/algorithms.yaml (the table the generator reads too), as JSON with its
     name; {} for an unknown name (the schema rejects it). */}}
{{- define "ppo-job.algorithm" -}}
{{- $name := .Values.algorithm.name | default "ppo" -}}
{{- $entry := get (.Files.Get "files/algorithms.yaml" | fromYaml) $name -}}
{{- if $entry }}{{ set $entry "name" $name | toJson }}{{ else }}{}{{ end -}}
{{- end -}}

{{/* rollout.n: the value, else the algorithm's default. */}}
{{- define "ppo-job.responsesPerPrompt" -}}
{{- $n := .Values.rollout.responsesPerPrompt -}}
{{- if kindIs "invalid" $n }}{{ $n = (include "ppo-job.algorithm" . | fromJson).responsesPerPrompt | default 1 }}{{ end -}}
{{- int $n -}}
{{- end -}}
