{{/*
The ppo-job component's rules (called by verl-ppo.validate): veRL's own run-time rules, checked at
render time so a bad batch setting fails in seconds, not after the cluster came up.
n = GPUs in total, B = train batch, N = rollout.n.
*/}}
{{- define "ppo-job.rules" -}}
{{- include "ppo-job.rules.batch" . -}}
{{- include "ppo-job.rules.run" . -}}
{{- include "ppo-job.rules.extraArgs" . -}}
{{- include "ppo-job.rules.prepare" . -}}
{{- end -}}

{{- define "ppo-job.rules.batch" -}}
{{- $p := .prefix -}}
{{- $v := .Values -}}
{{- $gpus := include "verl-ppo.totalGpus" . | int -}}
{{- $batch := int $v.data.trainBatchSize -}}
{{- $n := int $v.rollout.responsesPerPrompt -}}
{{- $mini := int $v.actor.ppoMiniBatchSize -}}
{{- if mod (mul $batch $n) $gpus -}}
{{- include "verl-ppo.rule" (dict "state" .state "field" (printf "%sdata.trainBatchSize" $p) "value" $batch "problem" (printf "times rollout.n (%d) is not divisible by the %d GPUs in total (global.gpu.nodes x global.gpu.perNode)" $n $gpus) "fix" (printf "make trainBatchSize x rollout.n a multiple of %d, e.g. --set %sdata.trainBatchSize=%d" $gpus $p (mul (add (div $batch $gpus) 1) $gpus))) -}}
{{- end -}}
{{- if gt $mini $batch -}}
{{- include "verl-ppo.rule" (dict "state" .state "field" (printf "%sactor.ppoMiniBatchSize" $p) "value" $mini "problem" (printf "is larger than data.trainBatchSize (%d)" $batch) "fix" (printf "--set %sactor.ppoMiniBatchSize=<at most %d>" $p $batch)) -}}
{{- end -}}
{{- $perGpu := div (mul $mini $n) $gpus -}}
{{- if le $perGpu 0 -}}
{{- include "verl-ppo.rule" (dict "state" .state "field" (printf "%sactor.ppoMiniBatchSize" $p) "value" $mini "problem" (printf "x rollout.n (%d) / %d GPUs is 0 samples per GPU" $n $gpus) "fix" (printf "--set %sactor.ppoMiniBatchSize=%d or more" $p $gpus)) -}}
{{- else if not $v.actor.useDynamicBsz -}}
{{- range $field := list "actor.ppoMicroBatchSizePerGpu" "critic.ppoMicroBatchSizePerGpu" -}}
{{- $micro := int (get (get $v (first (splitList "." $field))) (last (splitList "." $field))) -}}
{{- if mod $perGpu $micro -}}
{{- include "verl-ppo.rule" (dict "state" $.state "field" (printf "%s%s" $p $field) "value" $micro "problem" (printf "must divide %d (mini batch %d x n %d / %d GPUs)" $perGpu $mini $n $gpus) "fix" (printf "--set %s%s=<a divisor of %d>" $p $field $perGpu)) -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- $tp := int $v.rollout.tensorModelParallelSize -}}
{{- $perNode := include "verl-ppo.gpusPerNode" . | int -}}
{{- if mod $perNode $tp -}}
{{- include "verl-ppo.rule" (dict "state" .state "field" (printf "%srollout.tensorModelParallelSize" $p) "value" $tp "problem" (printf "must divide global.gpu.perNode (%d): a rollout replica may not span nodes" $perNode) "fix" (printf "--set %srollout.tensorModelParallelSize=<a divisor of %d>" $p $perNode)) -}}
{{- end -}}
{{- end -}}

{{/* Where the run writes, and for which veRL. */}}
{{- define "ppo-job.rules.run" -}}
{{- $p := .prefix -}}
{{- $checkpointDir := include "verl-ppo.checkpointDir" . -}}
{{- if not (hasPrefix "/" $checkpointDir) -}}
{{- include "verl-ppo.rule" (dict "state" .state "field" (printf "%strainer.checkpointDir" $p) "value" $checkpointDir "problem" "is relative: veRL would write checkpoints into Ray's temporary working dir, lost with the pod" "fix" (printf "use an absolute path under %s, or --set %strainer.checkpointDir='' for the default" (include "verl-ppo.mountPath" .) $p)) -}}
{{- end -}}
{{- if eq (include "ppo-job.verlFacts" .) "{}" -}}
{{- include "verl-ppo.rule" (dict "state" .state "field" (printf "%sverlVersion" $p) "value" .Values.verlVersion "problem" "is not a supported veRL version" "fix" (printf "--set %sverlVersion=0.3.0.post1, 0.4.1 or 0.9.1" $p)) -}}
{{- end -}}
{{- end -}}

{{/* The preparation Job writes the run's inputs: they must be on the shared volume, its sources named. */}}
{{- define "ppo-job.rules.prepare" -}}
{{- $p := .prefix -}}
{{- $v := .Values -}}
{{- $prepare := $v.prepare -}}
{{- if $prepare.enabled -}}
{{- $mount := printf "%s/" (include "verl-ppo.mountPath" .) -}}
{{- range $field, $path := dict "data.trainFiles" $v.data.trainFiles "data.valFiles" $v.data.valFiles "model.path" $v.model.path -}}
{{- if not (hasPrefix $mount $path) -}}
{{- include "verl-ppo.rule" (dict "state" $.state "field" (printf "%s%s" $p $field) "value" $path "problem" (printf "is not on the shared volume (%s): the preparation Job could not write it where the run reads it" $mount) "fix" (printf "put it under %s, or --set %sprepare.enabled=false" $mount $p)) -}}
{{- end -}}
{{- end -}}
{{- $sourceKey := ternary "localPath" "id" (eq $prepare.source "local") -}}
{{- range $part := list "dataset" "model" -}}
{{- $field := printf "%sprepare.%s.%s" $p $part $sourceKey -}}
{{- if not (get (get $prepare $part) $sourceKey) -}}
{{- include "verl-ppo.rule" (dict "state" $.state "field" $field "value" "" "problem" (printf "must not be empty with prepare.source %s" $prepare.source) "fix" (printf "--set %s=..." $field)) -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/* extraArgs: plain key=value, no key the chart already renders, no unsized twin of a per-GPU batch. */}}
{{- define "ppo-job.rules.extraArgs" -}}
{{- $rendered := dict -}}
{{- range (include "ppo-job.overrides" (dict "Values" (set (deepCopy .Values) "extraArgs" (list)) "Release" .Release) | fromJsonArray) -}}
{{- $_ := set $rendered (regexReplaceAll "=.*$" . "") true -}}
{{- end -}}
{{- $twins := list "actor_rollout_ref.actor.ppo_micro_batch_size" "actor_rollout_ref.rollout.log_prob_micro_batch_size" "actor_rollout_ref.ref.log_prob_micro_batch_size" "critic.ppo_micro_batch_size" -}}
{{- range $index, $arg := .Values.extraArgs -}}
{{- $field := printf "%sextraArgs[%d]" $.prefix $index -}}
{{- $key := regexReplaceAll "=.*$" $arg "" -}}
{{- if or (hasPrefix "+" $arg) (hasPrefix "~" $arg) -}}
{{- include "verl-ppo.rule" (dict "state" $.state "field" $field "value" $arg "problem" "adds or deletes a config key; that hides typos in key names" "fix" "write plain key=value for a key veRL's config has") -}}
{{- else if not (regexMatch "^[A-Za-z_][A-Za-z0-9_]*(\\.[A-Za-z0-9_]+)*=" $arg) -}}
{{- include "verl-ppo.rule" (dict "state" $.state "field" $field "value" $arg "problem" "is not a Hydra key=value override" "fix" "write it as section.key=value") -}}
{{- else if hasKey $rendered $key -}}
{{- include "verl-ppo.rule" (dict "state" $.state "field" $field "value" $arg "problem" "sets a key the chart already renders from values" "fix" (printf "set the matching %s value instead (see the ppo-job README)" (trimSuffix "." (default "ppo-job" $.prefix)))) -}}
{{- else if has $key $twins -}}
{{- include "verl-ppo.rule" (dict "state" $.state "field" $field "value" $arg "problem" (printf "conflicts with %s_per_gpu, which the chart sets: veRL accepts only one of the two" $key) "fix" "set the per-GPU value in ppo-job instead") -}}
{{- end -}}
{{- end -}}
{{- end -}}
