{{/* veRL's rollout-server metrics (JSON list of overrides), with global.rolloutMetrics and where the version
     has them (files/verl-versions.yaml: rolloutMetrics, the engines whose async servers record them; the
     rulebook refuses the switch elsewhere). prometheus.enable alone is refused at start-up while
     disable_log_stats keeps its default (true): the engines would record nothing. veRL then writes its servers'
     addresses into prometheus.file on every Ray node and asks the Prometheus at prometheus.port to reload: the
     head's sidecar (raycluster.rolloutPrometheusContainer). */}}
{{- define "ppo-job.rolloutMetricsOverrides" -}}
{{- $facts := include "ppo-job.verlFacts" . | fromJson -}}
{{- $o := list -}}
{{- if and (include "verl-ppo.rolloutMetricsEnabled" .) $facts.rolloutMetrics (eq (toString $facts.rolloutMode) "async")
  (has .Values.rollout.name $facts.rolloutMetrics) -}}
{{- $o = list "actor_rollout_ref.rollout.prometheus.enable=true" "actor_rollout_ref.rollout.disable_log_stats=false"
  (printf "actor_rollout_ref.rollout.prometheus.port=%d" (include "verl-ppo.port" (dict "name" "rolloutPrometheus") | int))
  (printf "actor_rollout_ref.rollout.prometheus.file=%s" (include "verl-ppo.hydraValue" (include "verl-ppo.rolloutPrometheusFile" .))) -}}
{{- end -}}
{{- toJson $o -}}
{{- end -}}

{{/* global.rolloutMetrics needs a veRL whose rollout servers have the metrics (called by ppo-job.rules). */}}
{{- define "ppo-job.rules.rolloutMetrics" -}}
{{- $facts := include "ppo-job.verlFacts" . | fromJson -}}
{{- if and (include "verl-ppo.rolloutMetricsEnabled" .) $facts (not $facts.rolloutMetrics) -}}
{{- $newest := include "ppo-job.newestVerlWith" (dict "Files" .Files "fact" "rolloutMetrics" "engine" "") -}}
{{- $problem := printf "but veRL %s's rollout servers export no metrics (veRL %s's async rollout servers do)"
  (toString .Values.verlVersion) $newest -}}
{{- $fix := printf "--set ppo-job.verlVersion=%s with an image of that veRL, or --set global.rolloutMetrics.enabled=false" $newest -}}
{{- include "verl-ppo.rule" (dict "state" .state "field" "global.rolloutMetrics.enabled" "value" true "problem" $problem "fix" $fix) -}}
{{- end -}}
{{- end -}}
