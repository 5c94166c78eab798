{{/*
The algorithms ppo-job.algorithm.name chooses from (JSON), one entry each:
  estimator           veRL's algorithm.adv_estimator
  critic              whether veRL trains a critic (only the GAE estimator has one)
  kl                  where the KL term to the reference model goes: "coef" (algorithm.kl_ctrl.kl_coef
                      only, as the seed's PPO run renders it), "reward" (a penalty in the reward),
                      "loss" (actor.use_kl_loss, low_var_kl), "none" (no KL term: no reference model)
  responsesPerPrompt  rollout.n when ppo-job.rollout.responsesPerPrompt is null
  minResponses        the smallest rollout.n the estimator works with (a group needs two to have a baseline)
  versions            the veRL versions whose main trainer has it
  overrides           fixed Hydra settings of the preset
No library helper is used here: generator/algorithms.py renders this table alone to size the runs.
*/}}
{{- define "ppo-job.algorithms" -}}
{{- $all := list "0.3.0.post1" "0.4.1" "0.9.1" -}}
{{- dict
  "ppo" (dict "estimator" "gae" "critic" true "kl" "coef" "responsesPerPrompt" 1 "minResponses" 1 "versions" $all "overrides" list)
  "grpo" (dict "estimator" "grpo" "critic" false "kl" "loss" "responsesPerPrompt" 5 "minResponses" 2 "versions" $all "overrides" list)
  "rloo" (dict "estimator" "rloo" "critic" false "kl" "reward" "responsesPerPrompt" 5 "minResponses" 2 "versions" $all "overrides" list)
  "reinforce++" (dict "estimator" "reinforce_plus_plus" "critic" false "kl" "reward" "responsesPerPrompt" 4 "minResponses" 1 "versions" $all "overrides" list)
  "dapo" (dict "estimator" "grpo" "critic" false "kl" "none" "responsesPerPrompt" 16 "minResponses" 2 "versions" (list "0.9.1") "overrides" (list
    "actor_rollout_ref.actor.clip_ratio_low=0.2"
    "actor_rollout_ref.actor.clip_ratio_high=0.28"
    "actor_rollout_ref.actor.loss_agg_mode=token-mean"
    "algorithm.filter_groups.enable=true"
    "algorithm.filter_groups.metric=reward"
    "reward.reward_manager.name=dapo"))
  | toJson -}}
{{- end -}}

{{/* The chosen algorithm's entry (JSON, with its name); {} for an unknown name (the schema rejects it). */}}
{{- define "ppo-job.algorithm" -}}
{{- $name := .Values.algorithm.name | default "ppo" -}}
{{- $entry := get (include "ppo-job.algorithms" . | fromJson) $name -}}
{{- if $entry }}{{ set $entry "name" $name | toJson }}{{ else }}{}{{ end -}}
{{- end -}}

{{/* rollout.n: the value, else the algorithm's default. */}}
{{- define "ppo-job.responsesPerPrompt" -}}
{{- $n := .Values.rollout.responsesPerPrompt -}}
{{- if kindIs "invalid" $n }}{{ $n = (include "ppo-job.algorithm" . | fromJson).responsesPerPrompt | default 1 }}{{ end -}}
{{- int $n -}}
{{- end -}}
