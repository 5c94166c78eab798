{{/* The storage component's rules (called by verl-ppo.validate): a static volume needs its address and credentials. */}}
{{- define "storage.rules" -}}
{{- include "storage.rules.tosAddress" . -}}
{{- include "storage.rules.tosSecret" . -}}
{{- include "storage.rules.nasServer" . -}}
{{- include "storage.rules.otherBackend" . -}}
{{- include "storage.rules.sizeUnit" . -}}
{{- end -}}

{{/* A TOS volume is mounted from its bucket, region and endpoint. */}}
{{- define "storage.rules.tosAddress" -}}
{{- if eq .Values.type "tos" -}}
{{- range $key := list "bucket" "region" "endpoint" -}}
{{- if not (get $.Values.tos $key) -}}
{{- $problem := "must not be empty for a TOS volume" -}}
{{- $fix := printf "--set storage.tos.%s=..." $key -}}
{{- include "verl-ppo.rule" (dict "state" $.state "field" (printf "storage.tos.%s" $key) "value" "" "problem" $problem "fix" $fix) -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/* A TOS volume's credentials come from a Secret, never from values. */}}
{{- define "storage.rules.tosSecret" -}}
{{- if and (eq .Values.type "tos") (not .Values.tos.secretName) -}}
{{- $problem := "must name the Secret with the TOS credentials (credentials never go in values)" -}}
{{- $fix := cat "kubectl create secret generic tos-credentials --from-literal=AccessKeyId=... --from-literal=SecretAccessKey=..."
  "and --set storage.tos.secretName=tos-credentials" -}}
{{- include "verl-ppo.rule" (dict "state" .state "field" "storage.tos.secretName" "value" "" "problem" $problem "fix" $fix) -}}
{{- end -}}
{{- end -}}

{{/* A NAS volume is mounted from its server. */}}
{{- define "storage.rules.nasServer" -}}
{{- if and (eq .Values.type "nas") (not .Values.nas.server) -}}
{{- $problem := "must not be empty for a NAS volume" -}}
{{- $fix := "--set storage.nas.server=<NAS mount target address>" -}}
{{- include "verl-ppo.rule" (dict "state" .state "field" "storage.nas.server" "value" "" "problem" $problem "fix" $fix) -}}
{{- end -}}
{{- end -}}

{{/* The settings of a backend storage.type does not choose, set to anything but their neutral value ("" and the path /,
     as values.yaml has them; nas.mountOptions are options only): they would be ignored without a word. */}}
{{- define "storage.rules.otherBackend" -}}
{{- $chosen := .Values.type -}}
{{- $backends := dict "dynamic" (list "storageClassName") "tos" (list "bucket" "path" "region" "endpoint" "secretName" "secretNamespace")
  "nas" (list "server" "path") -}}
{{- range $backend := keys $backends | sortAlpha -}}
{{- if ne $backend $chosen -}}
{{- $settings := get $.Values $backend | default dict -}}
{{- range $key := get $backends $backend -}}
{{- $value := get $settings $key | default "" -}}
{{- if not (has $value (ternary (list "" "/") (list "") (eq $key "path"))) -}}
{{- $problem := printf "is a setting of a %s volume, but storage.type is %s: it would be ignored" $backend $chosen -}}
{{- $fix := printf "--set storage.type=%s for a %s volume, or remove storage.%s.%s" $backend $backend $backend $key -}}
{{- include "verl-ppo.rule" (dict "state" $.state "field" (printf "storage.%s.%s" $backend $key) "value" $value "problem" $problem "fix" $fix) -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/* A bare number is bytes: no one sizes a volume of data, models and checkpoints in bytes. */}}
{{- define "storage.rules.sizeUnit" -}}
{{- $size := include "verl-ppo.scalar" .Values.size -}}
{{- if regexMatch "^[0-9.]+([eE][0-9]+)?$" $size -}}
{{- $problem := printf "is a bare number, which Kubernetes reads as %s bytes" $size -}}
{{- $fix := "write the size with its unit, e.g. --set storage.size=200Gi (binary: Gi, Ti; decimal: G, T)" -}}
{{- include "verl-ppo.rule" (dict "state" .state "field" "storage.size" "value" $size "problem" $problem "fix" $fix) -}}
{{- end -}}
{{- end -}}
