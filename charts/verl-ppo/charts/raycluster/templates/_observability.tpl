{{/* What observability needs on the Ray pods: the chart's tracing hook (a ConfigMap on PYTHONPATH),
     the OTLP endpoint it exports to, Grafana / Prometheus for the dashboard's metrics tab (head only),
     and veRL's TensorBoard directory on the shared volume. */}}

{{- define "raycluster.tracingHookConfigMap" -}}
{{- include "verl-ppo.componentName" (dict "ctx" . "suffix" "tracing-hook") -}}
{{- end -}}

{{/* Where the hook module is mounted; it goes on PYTHONPATH after pythonPath, so the image's code wins a name clash. */}}
{{- define "raycluster.tracingHookDir" -}}/etc/verl-ppo/tracing{{- end -}}

{{- define "raycluster.pythonPath" -}}
{{- if .Values.tracing.startupHook.enabled -}}
{{- printf "%s:%s" .Values.pythonPath (include "raycluster.tracingHookDir" .) -}}
{{- else -}}
{{- .Values.pythonPath -}}
{{- end -}}
{{- end -}}

{{/* Environment of a Ray container. Call with (dict "ctx" $ "role" "head"|"worker"). */}}
{{- define "raycluster.observabilityEnv" -}}
{{- $values := .ctx.Values -}}
{{- $hook := $values.tracing.startupHook -}}
{{- if and $hook.enabled $hook.otlpEndpoint }}
- name: OTEL_EXPORTER_OTLP_TRACES_ENDPOINT
  value: {{ $hook.otlpEndpoint | quote }}
- name: OTEL_EXPORTER_OTLP_TRACES_PROTOCOL
  value: {{ $hook.otlpProtocol | quote }}
- name: OTEL_SERVICE_NAME
  value: {{ include "verl-ppo.clusterName" .ctx | quote }}
{{- end }}
{{- if eq .role "head" }}
{{- $metrics := $values.head.dashboardMetrics }}
{{- range $name, $value := dict "RAY_GRAFANA_HOST" $metrics.grafanaHost "RAY_GRAFANA_IFRAME_HOST" $metrics.grafanaIframeHost
  "RAY_PROMETHEUS_HOST" $metrics.prometheusHost }}
{{- with $value }}
- name: {{ $name }}
  value: {{ . | quote }}
{{- end }}
{{- end }}
{{- end }}
{{- if include "verl-ppo.tensorboardEnabled" .ctx }}
- name: TENSORBOARD_DIR
  value: {{ include "verl-ppo.tensorboardDir" .ctx | quote }}
{{- end }}
{{- end -}}

{{- define "raycluster.tracingHookMount" -}}
{{- if .Values.tracing.startupHook.enabled }}
- name: tracing-hook
  mountPath: {{ include "raycluster.tracingHookDir" . }}
  readOnly: true
{{- end }}
{{- end -}}

{{- define "raycluster.tracingHookVolume" -}}
{{- if .Values.tracing.startupHook.enabled }}
- name: tracing-hook
  configMap:
    name: {{ include "raycluster.tracingHookConfigMap" . }}
{{- end }}
{{- end -}}
