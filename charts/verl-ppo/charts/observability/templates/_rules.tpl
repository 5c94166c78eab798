{{/* The observability component's rules (called by verl-ppo.validate). */}}
{{- define "observability.rules" -}}
{{- include "observability.rules.podMonitorApi" . -}}
{{- include "observability.rules.scrapeTimeout" . -}}
{{- include "observability.rules.tensorboardService" . -}}
{{- include "observability.rules.podMonitorNamespace" . -}}
{{- include "observability.rules.rolloutDashboardEmpty" . -}}
{{- end -}}

{{/* podMonitor.enabled=true (not auto) needs the cluster to serve the PodMonitor API. */}}
{{- define "observability.rules.podMonitorApi" -}}
{{- $served := .Capabilities.APIVersions.Has "monitoring.coreos.com/v1/PodMonitor" -}}
{{- if and (eq (toString .Values.podMonitor.enabled) "true") (not $served) -}}
{{- $problem := "but the cluster does not serve monitoring.coreos.com/v1 PodMonitor (no Prometheus operator CRDs)" -}}
{{- $fix := cat "install the prometheus-operator CRDs, or --set observability.podMonitor.enabled=auto"
  "(with helm template, pass --api-versions monitoring.coreos.com/v1/PodMonitor)" -}}
{{- include "verl-ppo.rule" (dict "state" .state "field" "observability.podMonitor.enabled" "value" true "problem" $problem "fix" $fix) -}}
{{- end -}}
{{- end -}}

{{/* Prometheus refuses a scrape timeout longer than the scrape interval. */}}
{{- define "observability.rules.scrapeTimeout" -}}
{{- $monitor := .Values.podMonitor -}}
{{- if and $monitor.interval $monitor.scrapeTimeout -}}
{{- if gt (include "observability.seconds" $monitor.scrapeTimeout | float64) (include "observability.seconds" $monitor.interval | float64) -}}
{{- $problem := printf "is longer than podMonitor.interval (%s): Prometheus refuses such a scrape config" $monitor.interval -}}
{{- $fix := printf "--set observability.podMonitor.scrapeTimeout=<at most %s>" $monitor.interval -}}
{{- $field := "observability.podMonitor.scrapeTimeout" -}}
{{- include "verl-ppo.rule" (dict "state" .state "field" $field "value" $monitor.scrapeTimeout "problem" $problem "fix" $fix) -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/* TensorBoard has no access control of its own: outside the cluster only with the opt-in. */}}
{{- define "observability.rules.tensorboardService" -}}
{{- $board := .Values.global.tensorboard -}}
{{- if and $board.enabled (ne $board.serviceType "ClusterIP") (not $board.allowUnauthenticatedService) -}}
{{- $problem := "publishes TensorBoard outside the cluster without an access control" -}}
{{- $fix := cat "keep ClusterIP and use global.tensorboard.ingressPath on the dashboard's Ingress (with its access control),"
  "or accept the risk with --set global.tensorboard.allowUnauthenticatedService=true" -}}
{{- include "verl-ppo.rule" (dict "state" .state "field" "global.tensorboard.serviceType" "value" $board.serviceType "problem" $problem "fix" $fix) -}}
{{- end -}}
{{- end -}}

{{/* A Prometheus duration of this schema (1h30m, 500ms, 30s) in seconds. */}}
{{- define "observability.seconds" -}}
{{- $perUnit := dict "ms" 0.001 "s" 1.0 "m" 60.0 "h" 3600.0 -}}
{{- $total := 0.0 -}}
{{- range regexFindAll "[0-9]+(ms|s|m|h)" (toString .) -1 -}}
{{- $unit := regexFind "(ms|s|m|h)$" . -}}
{{- $total = addf $total (mulf (trimSuffix $unit . | float64) (get $perUnit $unit)) -}}
{{- end -}}
{{- $total -}}
{{- end -}}

{{/* This release's Ray pods run in its namespace: PodMonitors looking elsewhere find none of them. (With
     rayClusterName, another release's cluster, any namespace may be right.) */}}
{{- define "observability.rules.podMonitorNamespace" -}}
{{- $selector := .Values.podMonitor.namespaceSelector | default dict -}}
{{- $namespace := .Release.Namespace -}}
{{- if and (not .Values.rayClusterName) (not $selector.any) $selector.matchNames (not (has $namespace $selector.matchNames)) -}}
{{- $problem := printf "does not name the release's namespace %s, where its Ray pods run: the PodMonitors would scrape none of them" $namespace -}}
{{- $fix := printf "--set observability.podMonitor.namespaceSelector=null (the release's namespace), or add %s to matchNames" $namespace -}}
{{- $field := "observability.podMonitor.namespaceSelector.matchNames" -}}
{{- include "verl-ppo.rule" (dict "state" .state "field" $field "value" (join "," $selector.matchNames) "problem" $problem "fix" $fix) -}}
{{- end -}}
{{- end -}}

{{/* The rollout dashboard reads the rollout servers' metrics only: without global.rolloutMetrics it ships empty. */}}
{{- define "observability.rules.rolloutDashboardEmpty" -}}
{{- $dashboards := .Values.dashboards -}}
{{- if and $dashboards.enabled (has "rollout" $dashboards.include) (not (include "verl-ppo.rolloutMetricsEnabled" .)) -}}
{{- $problem := "lists the rollout dashboard, whose panels read the rollout servers' metrics, which global.rolloutMetrics.enabled=false leaves off" -}}
{{- $fix := "--set global.rolloutMetrics.enabled=true (veRL 0.9.1 or later), or drop rollout from observability.dashboards.include" -}}
{{- $field := "observability.dashboards.include" -}}
{{- include "verl-ppo.rule" (dict "state" .state "field" $field "value" (join "," $dashboards.include) "problem" $problem "fix" $fix) -}}
{{- end -}}
{{- end -}}
