{{/* veRL's rollout-server metrics (JSON list of overrides): where the version has them (0.9's async vLLM and
     SGLang servers), rollout.metrics turns them on. prometheus.enable alone is refused at start-up while
     disable_log_stats keeps its default (true): the engine would record no statistics to serve. */}}
{{- define "ppo-job.rolloutMetricsOverrides" -}}
{{- $facts := include "ppo-job.verlFacts" . | fromJson -}}
{{- $o := list -}}
{{- if and .Values.rollout.metrics $facts.rolloutMetrics (eq (toString $facts.rolloutMode) "async") (has .Values.rollout.name (list "vllm" "sglang")) -}}
{{- $o = list "actor_rollout_ref.rollout.prometheus.enable=true" "actor_rollout_ref.rollout.disable_log_stats=false" -}}
{{- end -}}
{{- toJson $o -}}
{{- end -}}
