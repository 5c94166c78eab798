{{/* The first line of every component's template: a component renders only inside the verl-ppo chart,
     which gives it `global` and checks the release's rules. Installed alone it stops here, in one sentence. */}}
{{- define "verl-ppo.component" -}}
{{- if not (contains "verl-ppo/charts/" .Template.BasePath) -}}
{{- $problem := printf "%s is a component of the verl-ppo chart (charts/verl-ppo), not a chart to install alone:" .Chart.Name -}}
{{- $fix := cat "install charts/verl-ppo and switch off the components you do not need (e.g. --set raycluster.enabled=false);"
  "its README shows each use" -}}
{{- fail (cat $problem $fix) -}}
{{- end -}}
{{- end -}}

{{/* The release's components, as a JSON list: the umbrella's dependencies that `<name>.enabled` switches (its
     Chart.yaml, the one list of them; the generator reads it too). Call with the umbrella's context. */}}
{{- define "verl-ppo.components" -}}
{{- $names := list -}}
{{- range .Chart.Dependencies }}{{ if .Condition }}{{ $names = append $names .Name }}{{ end }}{{ end -}}
{{- toJson $names -}}
{{- end -}}
