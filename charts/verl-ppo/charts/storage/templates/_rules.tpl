{{/* The storage component's rules (called by verl-ppo.validate): a static volume needs its address and credentials. */}}
{{- define "storage.rules" -}}
{{- $v := .Values -}}
{{- if eq $v.type "tos" -}}
{{- range $key := list "bucket" "region" "endpoint" -}}
{{- if not (get $v.tos $key) -}}
{{- include "verl-ppo.rule" (dict "state" $.state "field" (printf "storage.tos.%s" $key) "value" "" "problem" "must not be empty for a TOS volume" "fix" (printf "--set storage.tos.%s=..." $key)) -}}
{{- end -}}
{{- end -}}
{{- if not $v.tos.secretName -}}
{{- include "verl-ppo.rule" (dict "state" .state "field" "storage.tos.secretName" "value" "" "problem" "must name the Secret with the TOS credentials (credentials never go in values)" "fix" "kubectl create secret generic tos-credentials --from-literal=AccessKeyId=... --from-literal=SecretAccessKey=... and --set storage.tos.secretName=tos-credentials") -}}
{{- end -}}
{{- else if and (eq $v.type "nas") (not $v.nas.server) -}}
{{- include "verl-ppo.rule" (dict "state" .state "field" "storage.nas.server" "value" "" "problem" "must not be empty for a NAS volume" "fix" "--set storage.nas.server=<NAS mount target address>") -}}
{{- end -}}
{{- end -}}
