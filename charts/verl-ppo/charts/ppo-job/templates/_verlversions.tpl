{{/* The supported veRL versions: files/verl-versions.yaml (the table the generator reads too), read here only.
     Each helper takes a context with this chart's .Files (the umbrella passes (index .Subcharts "ppo-job").Files). */}}

{{/* The table's versions, oldest first, as a JSON list. */}}
{{- define "ppo-job.verlVersionNames" -}}
{{- $names := list -}}
{{- range (.Files.Get "files/verl-versions.yaml" | fromYamlArray) }}{{ $names = append $names (toString .version) }}{{ end -}}
{{- toJson $names -}}
{{- end -}}

{{/* What the chosen version (.Values.verlVersion) renders differently: its entry of the table, as JSON; {} for a
     version the table lacks (the schema and the rulebook refuse it). */}}
{{- define "ppo-job.verlFacts" -}}
{{- $version := toString .Values.verlVersion -}}
{{- $facts := dict -}}
{{- range (.Files.Get "files/verl-versions.yaml" | fromYamlArray) }}{{ if eq (toString .version) $version }}{{ $facts = . }}{{ end }}{{ end -}}
{{- toJson $facts -}}
{{- end -}}

{{/* The versions a fix may offer, as words: "a, b or c". */}}
{{- define "ppo-job.verlVersionChoices" -}}
{{- $names := include "ppo-job.verlVersionNames" . | fromJsonArray -}}
{{- if gt (len $names) 1 }}{{ join ", " (initial $names) }} or {{ end }}{{ last $names -}}
{{- end -}}

{{/* The newest version whose fact is set (true, or a list with an entry), and which has the rollout engine where
     one is named: (dict "Files" .Files "fact" <key> "engine" <name or "">). */}}
{{- define "ppo-job.newestVerlWith" -}}
{{- $found := "" -}}
{{- range (.Files.Get "files/verl-versions.yaml" | fromYamlArray) -}}
{{- if and (get . $.fact) (or (not $.engine) (has $.engine .rolloutNames)) }}{{ $found = toString .version }}{{ end -}}
{{- end -}}
{{- $found -}}
{{- end -}}

{{/* The newest version whose list fact holds an item, "" where none does: (dict "Files" .Files "fact" <key> "item" <x>). */}}
{{- define "ppo-job.newestVerlOffering" -}}
{{- $found := "" -}}
{{- range (.Files.Get "files/verl-versions.yaml" | fromYamlArray) -}}
{{- if has $.item (get . $.fact | default list) }}{{ $found = toString .version }}{{ end -}}
{{- end -}}
{{- $found -}}
{{- end -}}

{{/* What the chart knows of the Ray pods' image (global.image): its entry of files/images.yaml as JSON, {} for an image
     the table lacks. The repository as the container runtime reads it: Docker Hub's own names (docker.io/verlai/verl,
     docker.io/library/x) are the table's short ones. */}}
{{- define "ppo-job.imageFacts" -}}
{{- $repository := .Values.global.image.repository -}}
{{- if regexMatch "^(docker\\.io|index\\.docker\\.io|registry-1\\.docker\\.io)/" $repository -}}
{{- $repository = regexReplaceAll "^[^/]+/(library/)?" $repository "" -}}
{{- end -}}
{{- $image := printf "%s:%s" $repository (toString .Values.global.image.tag) -}}
{{- $facts := dict -}}
{{- range (.Files.Get "files/images.yaml" | fromYamlArray) }}{{ if eq .image $image }}{{ $facts = . }}{{ end }}{{ end -}}
{{- toJson $facts -}}
{{- end -}}
