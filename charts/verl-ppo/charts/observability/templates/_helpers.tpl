{{/* Whether to render the PodMonitors: auto follows the cluster's API, true requires it (observability.rules). */}}
{{- define "observability.podMonitorEnabled" -}}
{{- $setting := .Values.podMonitor.enabled -}}
{{- $served := .Capabilities.APIVersions.Has "monitoring.coreos.com/v1/PodMonitor" -}}
{{- if or (eq (toString $setting) "true") (and (eq (toString $setting) "auto") $served) -}}true{{- end -}}
{{- end -}}

{{/* One scrape endpoint: port, the ray_io_cluster relabeling Ray's Grafana dashboards filter on, and the user's settings. */}}
{{- define "observability.endpoint" -}}
{{- $monitor := .ctx.Values.podMonitor -}}
- port: {{ .port }}
  {{- if eq .port "rollout-prom" }}
  {{- /* The head's rollout Prometheus (raycluster.rolloutPrometheusContainer): the rollout servers' series as
         it scraped them, their job and instance kept. */}}
  path: /federate
  params:
    match[]:
      - '{job="rollout"}'
  honorLabels: true
  {{- end }}
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
