{{/* Whether to render the PodMonitors: auto follows the cluster's API, true requires it. */}}
{{- define "observability.podMonitorEnabled" -}}
{{- $setting := .Values.podMonitor.enabled -}}
{{- $served := .Capabilities.APIVersions.Has "monitoring.coreos.com/v1/PodMonitor" -}}
{{- if and (eq (toString $setting) "true") (not $served) -}}
{{- include "verl-ppo.validate.fail" (dict "field" "observability.podMonitor.enabled" "value" true "problem" "but the cluster does not serve monitoring.coreos.com/v1 PodMonitor (no Prometheus operator CRDs)" "fix" "install the prometheus-operator CRDs, or use auto / false (with helm template, pass --api-versions monitoring.coreos.com/v1/PodMonitor)") -}}
{{- end -}}
{{- if or (eq (toString $setting) "true") (and (eq (toString $setting) "auto") $served) -}}true{{- end -}}
{{- end -}}

{{/* One scrape endpoint: port, the ray_io_cluster relabeling Ray's Grafana dashboards filter on, and the user's settings. */}}
{{- define "observability.endpoint" -}}
{{- $monitor := .ctx.Values.podMonitor -}}
- port: {{ .port }}
  {{- with $monitor.interval }}
  interval: {{ . }}
  {{- end }}
  {{- with $monitor.scrapeTimeout }}
  scrapeTimeout: {{ . }}
  {{- end }}
  relabelings:
    - action: replace
      sourceLabels:
        - __meta_kubernetes_pod_label_ray_io_cluster
      targetLabel: ray_io_cluster
    {{- with $monitor.relabelings }}
    {{- toYaml . | nindent 4 }}
    {{- end }}
  {{- with $monitor.metricRelabelings }}
  metricRelabelings:
    {{- toYaml . | nindent 4 }}
  {{- end }}
{{- end -}}
