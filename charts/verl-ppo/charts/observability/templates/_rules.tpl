{{/* The observability component's rules (called by verl-ppo.validate). */}}
{{- define "observability.rules" -}}
{{- if and (eq (toString .Values.podMonitor.enabled) "true") (not (.Capabilities.APIVersions.Has "monitoring.coreos.com/v1/PodMonitor")) -}}
{{- include "verl-ppo.rule" (dict "state" .state "field" (printf "%spodMonitor.enabled" .prefix) "value" true "problem" "but the cluster does not serve monitoring.coreos.com/v1 PodMonitor (no Prometheus operator CRDs)" "fix" (printf "install the prometheus-operator CRDs, or --set %spodMonitor.enabled=auto (with helm template, pass --api-versions monitoring.coreos.com/v1/PodMonitor)" .prefix)) -}}
{{- end -}}
{{- end -}}
