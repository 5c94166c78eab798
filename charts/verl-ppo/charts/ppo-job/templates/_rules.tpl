{{/*
The ppo-job component's rules (called by verl-ppo.validate): veRL's own run-time rules, checked at
render time so a bad batch setting fails in seconds, not after the cluster came up.
n = GPUs in total, B = train batch, N = rollout.n.
*/}}
{{- define "ppo-job.rules" -}}
{{- include "ppo-job.rules.batch" . -}}
{{- include "ppo-job.rules.run" . -}}
{{- include "ppo-job.rules.algorithm" . -}}
{{- include "ppo-job.rules.extraArgs" . -}}
{{- include "ppo-job.rules.prepare" . -}}
{{- include "ppo-job.rules.rayJob" . -}}
{{- include "ppo-job.rules.reward" . -}}
{{- include "ppo-job.rules.rolloutMetrics" . -}}
{{- end -}}

{{/* The custom reward file: read where it is (quoted where it lands, a space is fine), but a '..' segment is
     refused: written out, the path says where it reads. */}}
{{- define "ppo-job.rules.reward" -}}
{{- $path := .Values.reward.functionPath -}}
{{- if and $path (has ".." (splitList "/" $path)) -}}
{{- $mount := include "verl-ppo.mountPath" . -}}
{{- $leaves := and (hasPrefix (printf "%s/" $mount) $path) (not (include "verl-ppo.onVolume" (dict "ctx" $ "path" $path))) -}}
{{- include "verl-ppo.rule" (dict "state" .state "field" "ppo-job.reward.functionPath" "value" $path "problem" (printf "has a '..' segment: it reads %s%s" (clean $path) (ternary (printf ", off the shared volume (%s)" $mount) "" $leaves)) "fix" (printf "write the file's own path without '..', e.g. --set ppo-job.reward.functionPath=%s/rewards/score.py" $mount)) -}}
{{- end -}}
{{- end -}}

{{- define "ppo-job.rules.batch" -}}
{{- $v := .Values -}}
{{- $gpus := include "verl-ppo.totalGpus" . | int -}}
{{- $batch := int $v.data.trainBatchSize -}}
{{- $n := include "ppo-job.responsesPerPrompt" . | int -}}
{{- $mini := int $v.actor.ppoMiniBatchSize -}}
{{- if mod (mul $batch $n) $gpus -}}
{{- include "verl-ppo.rule" (dict "state" .state "field" "ppo-job.data.trainBatchSize" "value" $batch "problem" (printf "times rollout.n (%d) is not divisible by the %d GPUs in total (global.gpu.nodes x global.gpu.perNode)" $n $gpus) "fix" (printf "make trainBatchSize x rollout.n a multiple of %d, e.g. --set ppo-job.data.trainBatchSize=%d" $gpus (mul (add (div $batch $gpus) 1) $gpus))) -}}
{{- end -}}
{{- if gt $mini $batch -}}
{{- include "verl-ppo.rule" (dict "state" .state "field" "ppo-job.actor.ppoMiniBatchSize" "value" $mini "problem" (printf "is larger than data.trainBatchSize (%d)" $batch) "fix" (printf "--set ppo-job.actor.ppoMiniBatchSize=<at most %d>" $batch)) -}}
{{- end -}}
{{- $perGpu := div (mul $mini $n) $gpus -}}
{{- if le $perGpu 0 -}}
{{- include "verl-ppo.rule" (dict "state" .state "field" "ppo-job.actor.ppoMiniBatchSize" "value" $mini "problem" (printf "x rollout.n (%d) / %d GPUs is 0 samples per GPU" $n $gpus) "fix" (printf "--set ppo-job.actor.ppoMiniBatchSize=%d or more" $gpus)) -}}
{{- else if not $v.actor.useDynamicBsz -}}
{{- $trained := list "actor.ppoMicroBatchSizePerGpu" -}}
{{- if (include "ppo-job.algorithm" . | fromJson).critic }}{{ $trained = append $trained "critic.ppoMicroBatchSizePerGpu" }}{{ end -}}
{{- range $field := $trained -}}
{{- $micro := int (get (get $v (first (splitList "." $field))) (last (splitList "." $field))) -}}
{{- if mod $perGpu $micro -}}
{{- include "verl-ppo.rule" (dict "state" $.state "field" (printf "ppo-job.%s" $field) "value" $micro "problem" (printf "must divide %d (mini batch %d x n %d / %d GPUs)" $perGpu $mini $n $gpus) "fix" (printf "--set ppo-job.%s=<a divisor of %d>" $field $perGpu)) -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- if $v.actor.useDynamicBsz -}}
{{- /* A token budget packs whole rows: one shorter than the longest row cannot hold it. */ -}}
{{- $longest := add (int $v.data.maxPromptLength) (int $v.data.maxResponseLength) -}}
{{- $budgets := list "actor.ppoMaxTokenLenPerGpu" "rollout.logProbMaxTokenLenPerGpu" -}}
{{- $algorithm := include "ppo-job.algorithm" . | fromJson -}}
{{- if ne (toString $algorithm.kl) "none" }}{{ $budgets = append $budgets "ref.logProbMaxTokenLenPerGpu" }}{{ end -}}
{{- if $algorithm.critic }}{{ $budgets = concat $budgets (list "critic.ppoMaxTokenLenPerGpu" "critic.forwardMaxTokenLenPerGpu") }}{{ end -}}
{{- range $field := $budgets -}}
{{- $budget := int (get (get $v (first (splitList "." $field))) (last (splitList "." $field))) -}}
{{- if lt $budget $longest -}}
{{- include "verl-ppo.rule" (dict "state" $.state "field" (printf "ppo-job.%s" $field) "value" $budget "problem" (printf "is shorter than the longest row, data.maxPromptLength + data.maxResponseLength = %d tokens, which actor.useDynamicBsz packs whole" $longest) "fix" (printf "--set ppo-job.%s=%d or more" $field $longest)) -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- $tp := int $v.rollout.tensorModelParallelSize -}}
{{- $perNode := include "verl-ppo.gpusPerNode" . | int -}}
{{- if mod $perNode $tp -}}
{{- include "verl-ppo.rule" (dict "state" .state "field" "ppo-job.rollout.tensorModelParallelSize" "value" $tp "problem" (printf "must divide global.gpu.perNode (%d): a rollout replica may not span nodes" $perNode) "fix" (printf "--set ppo-job.rollout.tensorModelParallelSize=<a divisor of %d>" $perNode)) -}}
{{- end -}}
{{- end -}}

{{/* Where the run writes, and for which veRL. */}}
{{- define "ppo-job.rules.run" -}}
{{- include "ppo-job.rules.outputs" . -}}
{{- if eq (include "ppo-job.verlFacts" .) "{}" -}}
{{- include "verl-ppo.rule" (dict "state" .state "field" "ppo-job.verlVersion" "value" .Values.verlVersion "problem" "is not a supported veRL version" "fix" (printf "--set ppo-job.verlVersion=%s" (include "ppo-job.verlVersionChoices" .))) -}}
{{- end -}}
{{- range $name, $value := .Values.runtimeEnv.env -}}
{{- if or (include "verl-ppo.looksLikeCredential" $name) (include "verl-ppo.looksLikeCredentialValue" $value) -}}
{{- include "verl-ppo.rule" (dict "state" $.state "field" (printf "ppo-job.runtimeEnv.env.%s" $name) "value" "(hidden)" "problem" "looks like a credential: the runtime env is stored in plain text in a ConfigMap and sent to the Ray Jobs API" "fix" (printf "kubectl create secret generic <name> --from-literal=value=...; then --set raycluster.extraSecretEnv.%s.secretName=<name> --set raycluster.extraSecretEnv.%s.key=value (W&B and Hugging Face: raycluster.credentials); the Ray job inherits it from the Ray pods" $name $name)) -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/* Every directory the run writes is on the shared volume after normalisation: anything else is lost with the pod.
     Checkpoints, TensorBoard's TENSORBOARD_DIR, and the output directories extraArgs may set (veRL's dumps, Hydra's own). */}}
{{- define "ppo-job.rules.outputs" -}}
{{- $mount := include "verl-ppo.mountPath" . -}}
{{- $outputs := list (dict "field" "ppo-job.trainer.checkpointDir" "path" (include "verl-ppo.checkpointDir" .) "fix" (printf "--set ppo-job.trainer.checkpointDir='' for the default, or a directory under %s" $mount)) -}}
{{- with .Values.runtimeEnv.env.TENSORBOARD_DIR -}}
{{- $outputs = append $outputs (dict "field" "ppo-job.runtimeEnv.env.TENSORBOARD_DIR" "path" . "fix" (printf "leave it unset (global.tensorboard.enabled sets it), or a directory under %s" $mount)) -}}
{{- end -}}
{{- $outputKeys := list "trainer.rollout_data_dir" "trainer.validation_data_dir" "hydra.run.dir" "hydra.sweep.dir" "hydra.searchpath" -}}
{{- range $index, $arg := .Values.extraArgs -}}
{{- $key := regexReplaceAll "=.*$" $arg "" -}}
{{- if has $key $outputKeys -}}
{{- $value := trimPrefix (printf "%s=" $key) $arg -}}
{{- $paths := list $value -}}
{{- if eq $key "hydra.searchpath" -}}
{{- $paths = list -}}
{{- range splitList "," (trimAll "[]" $value) -}}
{{- $entry := trimAll "'\" " . -}}
{{- if not (hasPrefix "pkg://" $entry) -}}{{- $paths = append $paths (trimPrefix "file://" $entry) -}}{{- end -}}
{{- end -}}
{{- end -}}
{{- range $paths -}}
{{- $path := trimAll "'\"" . -}}
{{- if not (and (eq $key "trainer.rollout_data_dir" "trainer.validation_data_dir") (eq $path "null")) -}}
{{- $outputs = append $outputs (dict "field" (printf "ppo-job.extraArgs[%d]" $index) "path" $path "fix" (printf "write it as %s=%s%s/<dir> (the shared volume)" $key (ternary "[file://" "" (eq $key "hydra.searchpath")) $mount)) -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- range $outputs -}}
{{- if not (include "verl-ppo.onVolume" (dict "ctx" $ "path" .path)) -}}
{{- include "verl-ppo.rule" (dict "state" $.state "field" .field "value" .path "problem" (printf "is not on the shared volume (%s) once normalised (%s): what the run writes there is lost with the pod" $mount (ternary (clean .path) "a relative path" (hasPrefix "/" .path))) "fix" .fix) -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/* The algorithm must be in the chosen veRL, with the responses per prompt it needs, sampled by the chosen rollout engine. */}}
{{- define "ppo-job.rules.algorithm" -}}
{{- $v := .Values -}}
{{- $version := toString $v.verlVersion -}}
{{- $facts := include "ppo-job.verlFacts" . | fromJson -}}
{{- $algorithm := include "ppo-job.algorithm" . | fromJson -}}
{{- $n := include "ppo-job.responsesPerPrompt" . | int -}}
{{- if and $facts $algorithm -}}
{{- if not (has $version $algorithm.versions) -}}
{{- include "verl-ppo.rule" (dict "state" .state "field" "ppo-job.algorithm.name" "value" $algorithm.name "problem" (printf "is not in veRL %s's main trainer (it is in veRL %s)" $version (join ", " $algorithm.versions)) "fix" (printf "--set ppo-job.verlVersion=%s with an image of that veRL, or choose another algorithm" (last $algorithm.versions))) -}}
{{- end -}}
{{- if lt $n (int $algorithm.minResponses) -}}
{{- include "verl-ppo.rule" (dict "state" .state "field" "ppo-job.rollout.responsesPerPrompt" "value" $n "problem" (printf "is below %d: %s compares the responses to one prompt, and a group of one has no baseline" (int $algorithm.minResponses) $algorithm.name) "fix" (printf "--set ppo-job.rollout.responsesPerPrompt=%d (or null for the algorithm's default)" (int $algorithm.responsesPerPrompt))) -}}
{{- end -}}
{{- end -}}
{{- if and $facts (not (has $v.rollout.name $facts.rolloutNames)) -}}
{{- include "verl-ppo.rule" (dict "state" .state "field" "ppo-job.rollout.name" "value" $v.rollout.name "problem" (printf "is not a rollout engine of veRL %s (it has %s)" $version (join ", " $facts.rolloutNames)) "fix" "--set ppo-job.rollout.name=vllm") -}}
{{- else if and $facts (eq $v.rollout.name "hf") (gt $n 1) (not $facts.hfSamplesN) -}}
{{- include "verl-ppo.rule" (dict "state" .state "field" "ppo-job.rollout.responsesPerPrompt" "value" $n "problem" (printf "is ignored by veRL %s's HF rollout, which samples one response per prompt: the first step would fail joining %d-fold prompts with single responses" $version $n) "fix" (printf "--set ppo-job.rollout.name=vllm, or --set ppo-job.verlVersion=%s" (include "ppo-job.newestVerlWith" (dict "Files" .Files "fact" "hfSamplesN" "engine" "hf")))) -}}
{{- end -}}
{{- end -}}

{{/* The preparation Job writes the run's inputs: they must be on the shared volume, its sources named. */}}
{{- define "ppo-job.rules.prepare" -}}
{{- $v := .Values -}}
{{- $prepare := $v.prepare -}}
{{- if $prepare.enabled -}}
{{- $mount := printf "%s/" (include "verl-ppo.mountPath" .) -}}
{{- $writes := dict "model.path" $v.model.path -}}
{{- $parts := list "model" -}}
{{- if ne $prepare.dataset.format "none" -}}
{{- $writes = merge $writes (dict "data.trainFiles" $v.data.trainFiles "data.valFiles" $v.data.valFiles) -}}
{{- $parts = prepend $parts "dataset" -}}
{{- end -}}
{{- range $field, $path := $writes -}}
{{- if not (hasPrefix $mount $path) -}}
{{- include "verl-ppo.rule" (dict "state" $.state "field" (printf "ppo-job.%s" $field) "value" $path "problem" (printf "is not on the shared volume (%s): the preparation Job could not write it where the run reads it" $mount) "fix" (printf "put it under %s, or --set ppo-job.prepare.enabled=false" $mount)) -}}
{{- end -}}
{{- end -}}
{{- with $prepare.endpoint -}}
{{- $url := regexMatch "^https?://" . -}}
{{- if and (eq $prepare.source "huggingface") (not $url) -}}
{{- include "verl-ppo.rule" (dict "state" $.state "field" "ppo-job.prepare.endpoint" "value" . "problem" "has no scheme: Hugging Face's client reads HF_ENDPOINT as a URL" "fix" (printf "--set ppo-job.prepare.endpoint=https://%s" .)) -}}
{{- else if and (eq $prepare.source "modelscope") $url -}}
{{- include "verl-ppo.rule" (dict "state" $.state "field" "ppo-job.prepare.endpoint" "value" . "problem" "is a URL: ModelScope's client reads MODELSCOPE_DOMAIN as a domain and adds the scheme itself" "fix" (printf "--set ppo-job.prepare.endpoint=%s" (regexReplaceAll "^https?://([^/]+).*$" . "${1}"))) -}}
{{- else if eq $prepare.source "local" -}}
{{- include "verl-ppo.rule" (dict "state" $.state "field" "ppo-job.prepare.endpoint" "value" . "problem" "names a hub mirror, but prepare.source local reads the shared volume only" "fix" "--set ppo-job.prepare.endpoint='', or --set ppo-job.prepare.source=huggingface (or modelscope)") -}}
{{- end -}}
{{- end -}}
{{- if eq $prepare.source "local" -}}
{{- range $part := $parts -}}
{{- $path := (get $prepare $part).localPath -}}
{{- if and $path (not (include "verl-ppo.onVolume" (dict "ctx" $ "path" $path))) -}}
{{- include "verl-ppo.rule" (dict "state" $.state "field" (printf "ppo-job.prepare.%s.localPath" $part) "value" $path "problem" (printf "is not on the shared volume (%s) once normalised: the preparation Job mounts only that volume" (include "verl-ppo.mountPath" $)) "fix" (printf "copy it onto the volume and --set ppo-job.prepare.%s.localPath=%s<directory>" $part $mount)) -}}
{{- end -}}
{{- end -}}
{{- else if has $prepare.dataset.format (list "gsm8k" "math") -}}
{{- $name := lower (last (splitList "/" $prepare.dataset.id)) -}}
{{- $looksLike := ternary "gsm8k" (ternary "math" "" (contains "math" $name)) (contains "gsm8k" $name) -}}
{{- if and $looksLike (ne $looksLike $prepare.dataset.format) -}}
{{- include "verl-ppo.rule" (dict "state" $.state "field" "ppo-job.prepare.dataset.format" "value" $prepare.dataset.format "problem" (printf "does not fit prepare.dataset.id %s, a %s dataset: its records have other fields and veRL would score them with the wrong reward" $prepare.dataset.id $looksLike) "fix" (printf "--set ppo-job.prepare.dataset.format=%s, or name a %s dataset in prepare.dataset.id" $looksLike $prepare.dataset.format)) -}}
{{- end -}}
{{- end -}}
{{- $sourceKey := ternary "localPath" "id" (eq $prepare.source "local") -}}
{{- range $part := $parts -}}
{{- $field := printf "ppo-job.prepare.%s.%s" $part $sourceKey -}}
{{- if not (get (get $prepare $part) $sourceKey) -}}
{{- include "verl-ppo.rule" (dict "state" $.state "field" $field "value" "" "problem" (printf "must not be empty with prepare.source %s" $prepare.source) "fix" (printf "--set %s=..." $field)) -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/* extraArgs: plain key=value, no key the chart already renders, no unsized twin of a per-GPU batch. */}}
{{- define "ppo-job.rules.extraArgs" -}}
{{- $rendered := dict -}}
{{- range (include "ppo-job.overrides" (dict "Values" (set (deepCopy .Values) "extraArgs" (list)) "Release" .Release "Files" .Files) | fromJsonArray) -}}
{{- $_ := set $rendered (regexReplaceAll "=.*$" . "") true -}}
{{- end -}}
{{- $twins := list "actor_rollout_ref.actor.ppo_micro_batch_size" "actor_rollout_ref.rollout.log_prob_micro_batch_size" "actor_rollout_ref.ref.log_prob_micro_batch_size" "critic.ppo_micro_batch_size" -}}
{{- range $index, $arg := .Values.extraArgs -}}
{{- $field := printf "ppo-job.extraArgs[%d]" $index -}}
{{- $key := regexReplaceAll "=.*$" $arg "" -}}
{{- if or (hasPrefix "+" $arg) (hasPrefix "~" $arg) -}}
{{- include "verl-ppo.rule" (dict "state" $.state "field" $field "value" $arg "problem" "adds or deletes a config key; that hides typos in key names" "fix" "write plain key=value for a key veRL's config has") -}}
{{- else if not (regexMatch (include "ppo-job.overridePattern" $) $arg) -}}
{{- include "verl-ppo.rule" (dict "state" $.state "field" $field "value" $arg "problem" "is not a Hydra key=value override" "fix" "write it as section.key=value") -}}
{{- else if hasKey $rendered $key -}}
{{- include "verl-ppo.rule" (dict "state" $.state "field" $field "value" $arg "problem" "sets a key the chart already renders from values" "fix" "set the matching ppo-job value instead (see the ppo-job README)") -}}
{{- else if has $key $twins -}}
{{- include "verl-ppo.rule" (dict "state" $.state "field" $field "value" $arg "problem" (printf "conflicts with %s_per_gpu, which the chart sets: veRL accepts only one of the two" $key) "fix" "set the per-GPU value in ppo-job instead") -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/* RayJob mode: KubeRay's own constraints on its deletion settings, and the submitter meets the RayJob's cluster. */}}
{{- define "ppo-job.rules.rayJob" -}}
{{- if include "verl-ppo.rayJobMode" . -}}
{{- $r := .Values.rayJob -}}
{{- if and (gt (int $r.ttlSecondsAfterFinished) 0) (not $r.shutdownAfterJobFinishes) -}}
{{- include "verl-ppo.rule" (dict "state" .state "field" "ppo-job.rayJob.ttlSecondsAfterFinished" "value" $r.ttlSecondsAfterFinished "problem" "delays a cluster deletion that shutdownAfterJobFinishes=false never makes (KubeRay refuses the RayJob)" "fix" "--set ppo-job.rayJob.shutdownAfterJobFinishes=true, or --set ppo-job.rayJob.ttlSecondsAfterFinished=0") -}}
{{- end -}}
{{- if and $r.deletionStrategy $r.shutdownAfterJobFinishes -}}
{{- include "verl-ppo.rule" (dict "state" .state "field" "ppo-job.rayJob.deletionStrategy" "value" (toJson $r.deletionStrategy) "problem" "replaces shutdownAfterJobFinishes, which is true: KubeRay accepts only one of the two" "fix" "--set ppo-job.rayJob.shutdownAfterJobFinishes=false, or --set ppo-job.rayJob.deletionStrategy=null") -}}
{{- end -}}
{{- with .Values.dashboardURL -}}
{{- include "verl-ppo.rule" (dict "state" $.state "field" "ppo-job.dashboardURL" "value" . "problem" "names another cluster, but a RayJob's submitter submits to the cluster KubeRay creates for it" "fix" "--set ppo-job.dashboardURL='' in RayJob mode, or --set global.mode=RayCluster to submit to that cluster") -}}
{{- end -}}
{{- end -}}
{{- include "ppo-job.rules.otherMode" . -}}
{{- end -}}

{{/* Values one mode reads, set in the other to anything but their neutral value (what the other mode does
     anyway): they would be ignored without a word. */}}
{{- define "ppo-job.rules.otherMode" -}}
{{- $r := .Values.rayJob -}}
{{- $set := dict -}}
{{- if include "verl-ppo.rayJobMode" . -}}
{{- if not .Values.submitter.stopOnJobDelete }}{{ $_ := set $set "submitter.stopOnJobDelete" false }}{{ end -}}
{{- else -}}
{{- if not $r.shutdownAfterJobFinishes }}{{ $_ := set $set "rayJob.shutdownAfterJobFinishes" false }}{{ end -}}
{{- range $key := list "ttlSecondsAfterFinished" "activeDeadlineSeconds" "preRunningDeadlineSeconds" "deletionStrategy" -}}
{{- with get $r $key }}{{ $_ := set $set (printf "rayJob.%s" $key) . }}{{ end -}}
{{- end -}}
{{- end -}}
{{- $mode := ternary "RayJob" "RayCluster" (not (empty (include "verl-ppo.rayJobMode" .))) -}}
{{- $other := ternary "RayCluster" "RayJob" (eq $mode "RayJob") -}}
{{- range $path, $value := $set -}}
{{- include "verl-ppo.rule" (dict "state" $.state "field" (printf "ppo-job.%s" $path) "value" (ternary (toJson $value) (include "verl-ppo.scalar" $value) (kindIs "map" $value)) "problem" (printf "is read in %s mode only; with global.mode=%s it would be ignored" $other $mode) "fix" (printf "remove it, or --set global.mode=%s" $other)) -}}
{{- end -}}
{{- end -}}
