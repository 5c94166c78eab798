{{/*
Validation helpers in the style of "what is wrong, then the exact fix".
*/}}

{{/* Fails when .value is empty. (dict "value" x "field" "a.b" "fix" "--set a.b=...") */}}
{{- define "verl-ppo.validate.required" -}}
{{- if empty .value -}}
{{- fail (printf "\n\n'%s' must not be empty: %s" .field .fix) -}}
{{- end -}}
{{- end -}}

{{/* Fails with one sentence naming the field, the value and the fix. (dict "field" "a.b" "value" x "problem" "..." "fix" "...") */}}
{{- define "verl-ppo.validate.fail" -}}
{{- fail (printf "\n\n'%s' (%v) %s: %s" .field .value .problem .fix) -}}
{{- end -}}
