{{/*
veRL's own run-time rules, checked at render time so a bad batch setting fails in seconds, not
after the cluster came up. n = GPUs in total, B = train batch, N = rollout.n.
*/}}
{{- define "ppo-job.validate" -}}
{{- $v := .Values -}}
{{- $gpus := mul (int $v.global.gpu.nodes) (int $v.global.gpu.perNode) -}}
{{- $batch := int $v.data.trainBatchSize -}}
{{- $n := int $v.rollout.responsesPerPrompt -}}
{{- $mini := int $v.actor.ppoMiniBatchSize -}}
{{- $micro := int $v.actor.ppoMicroBatchSizePerGpu -}}
{{- $criticMicro := int $v.critic.ppoMicroBatchSizePerGpu -}}
{{- if ne (mod (mul $batch $n) $gpus) 0 -}}
{{- include "verl-ppo.validate.fail" (dict "field" "ppo-job.data.trainBatchSize" "value" $batch "problem" (printf "times rollout.n (%d) is not divisible by the %d GPUs in total (global.gpu.nodes x global.gpu.perNode)" $n $gpus) "fix" (printf "make trainBatchSize x rollout.n a multiple of %d" $gpus)) -}}
{{- end -}}
{{- if gt $mini $batch -}}
{{- include "verl-ppo.validate.fail" (dict "field" "ppo-job.actor.ppoMiniBatchSize" "value" $mini "problem" (printf "is larger than data.trainBatchSize (%d)" $batch) "fix" "make it at most the train batch size") -}}
{{- end -}}
{{- $normalized := div (mul $mini $n) $gpus -}}
{{- if le $normalized 0 -}}
{{- include "verl-ppo.validate.fail" (dict "field" "ppo-job.actor.ppoMiniBatchSize" "value" $mini "problem" (printf "x rollout.n (%d) / %d GPUs is 0 samples per GPU" $n $gpus) "fix" (printf "use at least %d" $gpus)) -}}
{{- end -}}
{{- if not $v.actor.useDynamicBsz -}}
{{- if ne (mod $normalized $micro) 0 -}}
{{- include "verl-ppo.validate.fail" (dict "field" "ppo-job.actor.ppoMicroBatchSizePerGpu" "value" $micro "problem" (printf "must divide %d (mini batch %d x n %d / %d GPUs)" $normalized $mini $n $gpus) "fix" "choose a divisor of that number") -}}
{{- end -}}
{{- if ne (mod $normalized $criticMicro) 0 -}}
{{- include "verl-ppo.validate.fail" (dict "field" "ppo-job.critic.ppoMicroBatchSizePerGpu" "value" $criticMicro "problem" (printf "must divide %d (mini batch %d x n %d / %d GPUs)" $normalized $mini $n $gpus) "fix" "choose a divisor of that number") -}}
{{- end -}}
{{- end -}}
{{- $tp := int $v.rollout.tensorModelParallelSize -}}
{{- if ne (mod (int $v.global.gpu.perNode) $tp) 0 -}}
{{- include "verl-ppo.validate.fail" (dict "field" "ppo-job.rollout.tensorModelParallelSize" "value" $tp "problem" (printf "must divide global.gpu.perNode (%d): a rollout replica may not span nodes" (int $v.global.gpu.perNode)) "fix" "use 1, 2, 4 or 8 up to the GPUs per node") -}}
{{- end -}}
{{- $checkpointDir := include "ppo-job.checkpointDir" . -}}
{{- if not (hasPrefix "/" $checkpointDir) -}}
{{- include "verl-ppo.validate.fail" (dict "field" "ppo-job.trainer.checkpointDir" "value" $checkpointDir "problem" "is relative: veRL would write checkpoints into Ray's temporary working dir, lost with the pod" "fix" (printf "use an absolute path under %s" $v.global.storage.mountPath)) -}}
{{- end -}}
{{- if eq (include "ppo-job.verlFacts" .) "{}" -}}
{{- include "verl-ppo.validate.fail" (dict "field" "ppo-job.verlVersion" "value" $v.verlVersion "problem" "is not a supported veRL version" "fix" "use 0.3.0.post1, 0.4.1 or 0.9.1") -}}
{{- end -}}
{{- include "ppo-job.validateExtraArgs" . -}}
{{- include "ppo-job.validatePrepare" . -}}
{{- end -}}

{{/* The preparation Job writes the run's inputs: they must be on the shared volume, its sources named. */}}
{{- define "ppo-job.validatePrepare" -}}
{{- $v := .Values -}}
{{- $p := $v.prepare -}}
{{- if $p.enabled -}}
{{- $mount := printf "%s/" (include "verl-ppo.mountPath" .) -}}
{{- range $field, $path := dict "ppo-job.data.trainFiles" $v.data.trainFiles "ppo-job.data.valFiles" $v.data.valFiles "ppo-job.model.path" $v.model.path -}}
{{- if not (hasPrefix $mount $path) -}}
{{- include "verl-ppo.validate.fail" (dict "field" $field "value" $path "problem" (printf "is not on the shared volume (%s): the preparation Job could not write it where the run reads it" $mount) "fix" (printf "put it under %s or set ppo-job.prepare.enabled=false" $mount)) -}}
{{- end -}}
{{- end -}}
{{- $sourceKey := ternary "localPath" "id" (eq $p.source "local") -}}
{{- range $part := list "dataset" "model" -}}
{{- $field := printf "ppo-job.prepare.%s.%s" $part $sourceKey -}}
{{- include "verl-ppo.validate.required" (dict "field" $field "value" (get (get $p $part) $sourceKey) "fix" (printf "ppo-job.prepare.source is %s, please add --set %s=..." $p.source $field)) -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/* extraArgs: plain key=value, no key the chart already renders, no unsized twin of a per-GPU batch. */}}
{{- define "ppo-job.validateExtraArgs" -}}
{{- $rendered := dict -}}
{{- range (include "ppo-job.overrides" (dict "Values" (set (deepCopy .Values) "extraArgs" (list)) "Release" .Release) | fromJsonArray) -}}
{{- $_ := set $rendered (regexReplaceAll "=.*$" . "") true -}}
{{- end -}}
{{- $twins := list "actor_rollout_ref.actor.ppo_micro_batch_size" "actor_rollout_ref.rollout.log_prob_micro_batch_size" "actor_rollout_ref.ref.log_prob_micro_batch_size" "critic.ppo_micro_batch_size" -}}
{{- range $index, $arg := .Values.extraArgs -}}
{{- $field := printf "ppo-job.extraArgs[%d]" $index -}}
{{- $key := regexReplaceAll "=.*$" $arg "" -}}
{{- if or (hasPrefix "+" $arg) (hasPrefix "~" $arg) -}}
{{- include "verl-ppo.validate.fail" (dict "field" $field "value" $arg "problem" "adds or deletes a config key; that hides typos in key names" "fix" "write plain key=value for a key veRL's config has") -}}
{{- end -}}
{{- if not (regexMatch "^[A-Za-z_][A-Za-z0-9_]*(\\.[A-Za-z0-9_]+)*=" $arg) -}}
{{- include "verl-ppo.validate.fail" (dict "field" $field "value" $arg "problem" "is not a Hydra key=value override" "fix" "write it as section.key=value") -}}
{{- end -}}
{{- if hasKey $rendered $key -}}
{{- include "verl-ppo.validate.fail" (dict "field" $field "value" $arg "problem" "sets a key the chart already renders from values" "fix" "set the matching ppo-job value instead (see values.yaml)") -}}
{{- end -}}
{{- if has $key $twins -}}
{{- include "verl-ppo.validate.fail" (dict "field" $field "value" $arg "problem" (printf "conflicts with %s_per_gpu, which the chart sets: veRL accepts only one of the two" $key) "fix" "set the per-GPU value in ppo-job instead") -}}
{{- end -}}
{{- end -}}
{{- end -}}
