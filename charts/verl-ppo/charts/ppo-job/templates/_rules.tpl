{{/*
The ppo-job component's rules (called by verl-ppo.validate): veRL's own run-time rules, checked at
render time so a bad batch setting fails in seconds, not after the cluster came up.
n = GPUs in total, B = train batch, N = rollout.n.
*/}}
{{- define "ppo-job.rules" -}}
{{- include "ppo-job.rules.batchDivisible" . -}}
{{- include "ppo-job.rules.miniBatchOverBatch" . -}}
{{- include "ppo-job.rules.miniBatchPerGpu" . -}}
{{- include "ppo-job.rules.microBatchDivides" . -}}
{{- include "ppo-job.rules.tokenBudget" . -}}
{{- include "ppo-job.rules.tensorParallel" . -}}
{{- include "ppo-job.rules.outputsOnVolume" . -}}
{{- include "ppo-job.rules.verlVersion" . -}}
{{- include "ppo-job.rules.verlVersionImage" . -}}
{{- include "ppo-job.rules.mountHidesImageCode" . -}}
{{- include "ppo-job.rules.runtimeEnvCredential" . -}}
{{- include "ppo-job.rules.runtimeEnvRayAuth" . -}}
{{- include "ppo-job.rules.rayAuthImage" . -}}
{{- include "ppo-job.rules.algorithmInVersion" . -}}
{{- include "ppo-job.rules.responsesPerPrompt" . -}}
{{- include "ppo-job.rules.rolloutEngine" . -}}
{{- include "ppo-job.rules.hfRolloutSamplesOne" . -}}
{{- include "ppo-job.rules.trainerMode" . -}}
{{- include "ppo-job.rules.finalOutputVersion" . -}}
{{- include "ppo-job.rules.finalOutputEngine" . -}}
{{- include "ppo-job.rules.finalOutputMode" . -}}
{{- include "ppo-job.rules.trainerModeLegacy" . -}}
{{- include "ppo-job.rules.finalOutputLegacyTrainer" . -}}
{{- include "ppo-job.rules.pinnedPoolsNeedPlugins" . -}}
{{- include "ppo-job.rules.rolloutPollVersion" . -}}
{{- include "ppo-job.rules.rolloutPollLegacyTrainer" . -}}
{{- include "ppo-job.rules.separateAsyncWithoutPool" . -}}
{{- include "ppo-job.rules.poolWithoutSeparateAsync" . -}}
{{- include "ppo-job.rules.poolTooSmall" . -}}
{{- include "ppo-job.rules.parameterSyncStep" . -}}
{{- include "ppo-job.rules.hybridEngineOff" . -}}
{{- include "ppo-job.rules.extraArgs" . -}}
{{- include "ppo-job.rules.prepareWrites" . -}}
{{- include "ppo-job.rules.prepareEndpointScheme" . -}}
{{- include "ppo-job.rules.prepareEndpointDomain" . -}}
{{- include "ppo-job.rules.prepareEndpointLocal" . -}}
{{- include "ppo-job.rules.prepareLocalPath" . -}}
{{- include "ppo-job.rules.prepareDatasetFormat" . -}}
{{- include "ppo-job.rules.prepareSource" . -}}
{{- include "ppo-job.rules.rayJobTtl" . -}}
{{- include "ppo-job.rules.rayJobDeletionStrategy" . -}}
{{- include "ppo-job.rules.rayJobDashboardURL" . -}}
{{- include "ppo-job.rules.otherMode" . -}}
{{- include "ppo-job.rules.rewardPath" . -}}
{{- include "ppo-job.rules.rolloutMetrics" . -}}
{{- include "ppo-job.rules.loraInVersion" . -}}
{{- include "ppo-job.rules.loraAdapterNeedsRank" . -}}
{{- include "ppo-job.rules.loraChoicesNeedRank" . -}}
{{- include "ppo-job.rules.loraAdapterOnVolume" . -}}
{{- include "ppo-job.rules.loraModules" . -}}
{{- include "ppo-job.rules.loraExcludesEveryTarget" . -}}
{{- include "ppo-job.rules.loraRollout" . -}}
{{- include "ppo-job.rules.loraVllmRank" . -}}
{{- include "ppo-job.rules.loraActorStrategy" . -}}
{{- include "ppo-job.rules.fsdpStrategy" . -}}
{{- include "ppo-job.rules.megatronLora" . -}}
{{- include "ppo-job.rules.criticLoraUnused" . -}}
{{- include "ppo-job.rules.criticModelUnused" . -}}
{{- include "ppo-job.rules.runtimeEnvOwned" . -}}
{{- include "ppo-job.rules.klCoefInert" . -}}
{{- end -}}

{{/* FSDP splits B x N samples evenly over the n GPUs (veRL: B*N % n == 0). */}}
{{- define "ppo-job.rules.batchDivisible" -}}
{{- $gpus := include "verl-ppo.totalGpus" . | int -}}
{{- $batch := int .Values.data.trainBatchSize -}}
{{- $n := include "ppo-job.responsesPerPrompt" . | int -}}
{{- if mod (mul $batch $n) $gpus -}}
{{- $problem := printf "times rollout.n (%d) is not divisible by the %d GPUs in total (global.gpu.nodes x global.gpu.perNode)" $n $gpus -}}
{{- $fix := printf "make trainBatchSize x rollout.n a multiple of %d, e.g. --set ppo-job.data.trainBatchSize=%d"
  $gpus (mul (add (div $batch $gpus) 1) $gpus) -}}
{{- include "verl-ppo.rule" (dict "state" .state "field" "ppo-job.data.trainBatchSize" "value" $batch "problem" $problem "fix" $fix) -}}
{{- end -}}
{{- end -}}

{{/* veRL asserts B >= every ppo_mini_batch_size. */}}
{{- define "ppo-job.rules.miniBatchOverBatch" -}}
{{- $batch := int .Values.data.trainBatchSize -}}
{{- $mini := int .Values.actor.ppoMiniBatchSize -}}
{{- if gt $mini $batch -}}
{{- $problem := printf "is larger than data.trainBatchSize (%d)" $batch -}}
{{- $fix := printf "--set ppo-job.actor.ppoMiniBatchSize=<at most %d>" $batch -}}
{{- include "verl-ppo.rule" (dict "state" .state "field" "ppo-job.actor.ppoMiniBatchSize" "value" $mini "problem" $problem "fix" $fix) -}}
{{- end -}}
{{- end -}}

{{/* The per-GPU mini batch, mini x N / n (veRL 0.3 and 0.4 workers assert it is above 0). */}}
{{- define "ppo-job.perGpuMiniBatch" -}}
{{- div (mul (int .Values.actor.ppoMiniBatchSize) (include "ppo-job.responsesPerPrompt" . | int)) (include "verl-ppo.totalGpus" . | int) -}}
{{- end -}}

{{/* Every GPU gets at least one sample of each mini batch. */}}
{{- define "ppo-job.rules.miniBatchPerGpu" -}}
{{- $gpus := include "verl-ppo.totalGpus" . | int -}}
{{- $mini := int .Values.actor.ppoMiniBatchSize -}}
{{- if le (include "ppo-job.perGpuMiniBatch" . | int) 0 -}}
{{- $problem := printf "x rollout.n (%d) / %d GPUs is 0 samples per GPU" (include "ppo-job.responsesPerPrompt" . | int) $gpus -}}
{{- $fix := printf "--set ppo-job.actor.ppoMiniBatchSize=%d or more" $gpus -}}
{{- include "verl-ppo.rule" (dict "state" .state "field" "ppo-job.actor.ppoMiniBatchSize" "value" $mini "problem" $problem "fix" $fix) -}}
{{- end -}}
{{- end -}}

{{/* Without dynamic batches, each trained model's per-GPU micro batch divides the per-GPU mini batch. */}}
{{- define "ppo-job.rules.microBatchDivides" -}}
{{- $v := .Values -}}
{{- $perGpu := include "ppo-job.perGpuMiniBatch" . | int -}}
{{- if and (gt $perGpu 0) (not $v.actor.useDynamicBsz) -}}
{{- $trained := list "actor.ppoMicroBatchSizePerGpu" -}}
{{- if (include "ppo-job.algorithm" . | fromJson).critic }}{{ $trained = append $trained "critic.ppoMicroBatchSizePerGpu" }}{{ end -}}
{{- $gpus := include "verl-ppo.totalGpus" . | int -}}
{{- $n := include "ppo-job.responsesPerPrompt" . | int -}}
{{- range $field := $trained -}}
{{- $micro := int (get (get $v (first (splitList "." $field))) (last (splitList "." $field))) -}}
{{- if mod $perGpu $micro -}}
{{- $problem := printf "must divide %d (mini batch %d x n %d / %d GPUs)" $perGpu (int $v.actor.ppoMiniBatchSize) $n $gpus -}}
{{- $fix := printf "--set ppo-job.%s=<a divisor of %d>" $field $perGpu -}}
{{- include "verl-ppo.rule" (dict "state" $.state "field" (printf "ppo-job.%s" $field) "value" $micro "problem" $problem "fix" $fix) -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/* A token budget packs whole rows: one shorter than the longest row cannot hold it. */}}
{{- define "ppo-job.rules.tokenBudget" -}}
{{- $v := .Values -}}
{{- if $v.actor.useDynamicBsz -}}
{{- $longest := add (int $v.data.maxPromptLength) (int $v.data.maxResponseLength) -}}
{{- $budgets := list "actor.ppoMaxTokenLenPerGpu" "rollout.logProbMaxTokenLenPerGpu" -}}
{{- $algorithm := include "ppo-job.algorithm" . | fromJson -}}
{{- if ne (toString $algorithm.kl) "none" }}{{ $budgets = append $budgets "ref.logProbMaxTokenLenPerGpu" }}{{ end -}}
{{- if $algorithm.critic }}{{ $budgets = concat $budgets (list "critic.ppoMaxTokenLenPerGpu" "critic.forwardMaxTokenLenPerGpu") }}{{ end -}}
{{- range $field := $budgets -}}
{{- $budget := int (get (get $v (first (splitList "." $field))) (last (splitList "." $field))) -}}
{{- if lt $budget $longest -}}
{{- $problem := cat (printf "is shorter than the longest row, data.maxPromptLength + data.maxResponseLength = %d tokens," $longest)
  "which actor.useDynamicBsz packs whole" -}}
{{- $fix := printf "--set ppo-job.%s=%d or more" $field $longest -}}
{{- include "verl-ppo.rule" (dict "state" $.state "field" (printf "ppo-job.%s" $field) "value" $budget "problem" $problem "fix" $fix) -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/* A rollout replica may not span nodes. */}}
{{- define "ppo-job.rules.tensorParallel" -}}
{{- $tp := int .Values.rollout.tensorModelParallelSize -}}
{{- $onPool := include "ppo-job.rolloutOnPool" . -}}
{{- $perNode := include (ternary "verl-ppo.rolloutPoolGpusPerNode" "verl-ppo.gpusPerNode" (not (empty $onPool))) . | int -}}
{{- $gpusField := ternary "the rollout pool's GPUs per node (global.rolloutPool.perNode)" "global.gpu.perNode" (not (empty $onPool)) -}}
{{- /* A pool smaller than one replica is ppo-job.rules.poolTooSmall's. */ -}}
{{- $poolGpus := mul (include "verl-ppo.rolloutPoolNodes" . | int) $perNode -}}
{{- if and (mod $perNode $tp) (or (not $onPool) (ge $poolGpus $tp)) -}}
{{- $problem := printf "must divide %s (%d): a rollout replica may not span nodes" $gpusField $perNode -}}
{{- $fix := printf "--set ppo-job.rollout.tensorModelParallelSize=<a divisor of %d>" $perNode -}}
{{- $field := "ppo-job.rollout.tensorModelParallelSize" -}}
{{- include "verl-ppo.rule" (dict "state" .state "field" $field "value" $tp "problem" $problem "fix" $fix) -}}
{{- end -}}
{{- end -}}

{{/* Every directory the run writes is on the shared volume after normalisation: anything else is lost with the pod.
     Checkpoints, TensorBoard's TENSORBOARD_DIR, and the output directories extraArgs may set (veRL's dumps; Hydra's own
     are refused: ppo-job.rules.extraArgKey). */}}
{{- define "ppo-job.rules.outputsOnVolume" -}}
{{- $mount := include "verl-ppo.mountPath" . -}}
{{- $outputs := list (dict "field" "ppo-job.trainer.checkpointDir" "path" (include "verl-ppo.checkpointDir" .)
  "fix" (printf "--set ppo-job.trainer.checkpointDir='' for the default, or a directory under %s" $mount)) -}}
{{- with .Values.runtimeEnv.env.TENSORBOARD_DIR -}}
{{- $outputs = append $outputs (dict "field" "ppo-job.runtimeEnv.env.TENSORBOARD_DIR" "path" .
  "fix" (printf "leave it unset (global.tensorboard.enabled sets it), or a directory under %s" $mount)) -}}
{{- end -}}
{{- $outputKeys := list "trainer.rollout_data_dir" "trainer.validation_data_dir" -}}
{{- range $index, $arg := .Values.extraArgs -}}
{{- $key := regexReplaceAll "=.*$" $arg "" -}}
{{- if has $key $outputKeys -}}
{{- $path := trimAll "'\"" (trimPrefix (printf "%s=" $key) $arg) -}}
{{- if ne $path "null" -}}
{{- $outputs = append $outputs (dict "field" (printf "ppo-job.extraArgs[%d]" $index) "path" $path
  "fix" (printf "write it as %s=%s/<dir> (the shared volume)" $key $mount)) -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- range $outputs -}}
{{- if not (include "verl-ppo.onVolume" (dict "ctx" $ "path" .path)) -}}
{{- $normalised := ternary (clean .path) "a relative path" (hasPrefix "/" .path) -}}
{{- $problem := printf "is not on the shared volume (%s) once normalised (%s): what the run writes there is lost with the pod" $mount $normalised -}}
{{- include "verl-ppo.rule" (dict "state" $.state "field" .field "value" .path "problem" $problem "fix" .fix) -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/* The chart renders the command for the veRL versions it knows. */}}
{{- define "ppo-job.rules.verlVersion" -}}
{{- if eq (include "ppo-job.verlFacts" .) "{}" -}}
{{- $problem := "is not a supported veRL version" -}}
{{- $fix := printf "--set ppo-job.verlVersion=%s" (include "ppo-job.verlVersionChoices" .) -}}
{{- include "verl-ppo.rule" (dict "state" .state "field" "ppo-job.verlVersion" "value" .Values.verlVersion "problem" $problem "fix" $fix) -}}
{{- end -}}
{{- end -}}

{{/* The Ray pods' image (global.image) runs the command: on an image whose veRL the chart knows (files/images.yaml), another
     version would render keys that image's veRL refuses minutes into the run. An image the table lacks is the user's to pair. */}}
{{- define "ppo-job.rules.verlVersionImage" -}}
{{- $carries := (include "ppo-job.imageFacts" . | fromJson).verl | default "" | toString -}}
{{- $version := toString .Values.verlVersion -}}
{{- if and $carries (ne $carries $version) -}}
{{- $image := printf "%s:%s" .Values.global.image.repository (toString .Values.global.image.tag) -}}
{{- $problem := printf "cannot run on global.image %s, which carries veRL %s: that veRL refuses this version's keys" $image $carries -}}
{{- $pairs := "" -}}
{{- range (.Files.Get "files/images.yaml" | fromYamlArray) }}{{ if and (not $pairs) (eq (toString .verl) $version) }}{{ $pairs = .image }}{{ end }}{{ end -}}
{{- $fix := printf "--set ppo-job.verlVersion=%s, or an image of veRL %s" $carries $version -}}
{{- with $pairs -}}
{{- $repository := regexReplaceAll ":[^:/]*$" . "" -}}
{{- $fix = printf "%s: --set global.image.repository=%s --set global.image.tag=%s" $fix $repository (trimPrefix (printf "%s:" $repository) .) -}}
{{- else -}}
{{- $fix = printf "%s (global.image.repository and .tag)" $fix -}}
{{- end -}}
{{- include "verl-ppo.rule" (dict "state" .state "field" "ppo-job.verlVersion" "value" $version "problem" $problem "fix" $fix) -}}
{{- end -}}
{{- end -}}

{{/* The Ray pods' image runs veRL from a checkout inside it (files/images.yaml's code): the shared volume mounted at
     or above that directory would hide it, and every Ray node would start without veRL. */}}
{{- define "ppo-job.rules.mountHidesImageCode" -}}
{{- $code := (include "ppo-job.imageFacts" . | fromJson).code | default "" -}}
{{- $mount := clean .Values.global.storage.mountPath -}}
{{- if and $code (or (eq $mount "/") (eq $mount $code) (hasPrefix (printf "%s/" $mount) $code)) -}}
{{- $image := printf "%s:%s" .Values.global.image.repository (toString .Values.global.image.tag) -}}
{{- $problem := printf "hides the veRL code of global.image %s, which the image holds at %s (ppo-job's files/images.yaml)" $image $code -}}
{{- $fix := "--set global.storage.mountPath=<a directory of its own, e.g. /data>" -}}
{{- include "verl-ppo.rule" (dict "state" .state "field" "global.storage.mountPath" "value" $mount "problem" $problem "fix" $fix) -}}
{{- end -}}
{{- end -}}

{{/* The runtime env is plain text in a ConfigMap and in the Ray Jobs API: no credentials in it. */}}
{{- define "ppo-job.rules.runtimeEnvCredential" -}}
{{- $rayAuth := ternary (include "verl-ppo.rayAuthEnvNames" . | fromJsonArray) list (not (empty (include "verl-ppo.rayAuthSecret" .))) -}}
{{- range $name, $value := .Values.runtimeEnv.env -}}
{{- /* Ray's token's variables, with the token on, have their own finding (ppo-job.rules.runtimeEnvRayAuth). */ -}}
{{- $shape := include "verl-ppo.looksLikeCredentialValue" (dict "state" $.state "text" $value) -}}
{{- if and (not (has $name $rayAuth)) (or (include "verl-ppo.looksLikeCredential" (dict "state" $.state "text" $name)) $shape) -}}
{{- $what := ternary (printf "holds %s" $shape) "looks like a credential" (not (empty $shape)) -}}
{{- $problem := printf "%s: the runtime env is stored in plain text in a ConfigMap and sent to the Ray Jobs API" $what -}}
{{- $fix := cat "kubectl create secret generic <name> --from-literal=value=...;"
  (printf "then --set raycluster.extraSecretEnv.%s.secretName=<name> --set raycluster.extraSecretEnv.%s.key=value" $name $name)
  "(W&B and Hugging Face: raycluster.credentials); the Ray job inherits it from the Ray pods" -}}
{{- $field := printf "ppo-job.runtimeEnv.env.%s" $name -}}
{{- include "verl-ppo.rule" (dict "state" $.state "field" $field "value" "(hidden)" "problem" $problem "fix" $fix) -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/* With Ray's token on, its variables are the chart's: the run's driver and workers keep the Ray pods' (KubeRay's). */}}
{{- define "ppo-job.rules.runtimeEnvRayAuth" -}}
{{- if include "verl-ppo.rayAuthSecret" . -}}
{{- $names := include "verl-ppo.rayAuthEnvNames" . | fromJsonArray -}}
{{- range $name, $value := .Values.runtimeEnv.env -}}
{{- if has $name $names -}}
{{- $problem := cat "would replace Ray's token setting, which KubeRay sets on the Ray pods from global.rayAuth.tokenSecret:"
  "the run's driver would leave the token or use another one" -}}
{{- $fix := "remove it: the run inherits the Ray pods' token; to run without the token, --set global.rayAuth.tokenSecret=''" -}}
{{- $shown := ternary "(hidden)" (toString $value) (eq $name "RAY_AUTH_TOKEN") -}}
{{- include "verl-ppo.rule" (dict "state" $.state "field" (printf "ppo-job.runtimeEnv.env.%s" $name) "value" $shown "problem" $problem "fix" $fix) -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/* Ray's token needs a Ray that has it (2.52 or later) in the Ray pods' image, where the chart knows that image's Ray
     (files/images.yaml): an older Ray ignores RAY_AUTH_MODE and leaves its dashboard open, whatever raycluster.rayVersion says. */}}
{{- define "ppo-job.rules.rayAuthImage" -}}
{{- with include "verl-ppo.rayAuthSecret" . -}}
{{- $ray := (include "ppo-job.imageFacts" $ | fromJson).ray | default "" -}}
{{- $older := false -}}
{{- if hasPrefix "<" $ray }}{{ $older = semverCompare "<=2.52.0" (trimPrefix "<" $ray) }}
{{- else if $ray }}{{ $older = semverCompare "<2.52.0-0" $ray }}{{ end -}}
{{- if $older -}}
{{- $image := printf "%s:%s" $.Values.global.image.repository (toString $.Values.global.image.tag) -}}
{{- $problem := cat (printf "turns on Ray's token, but the Ray pods' image %s has Ray %s (ppo-job's files/images.yaml)," $image $ray)
  "without token authentication (Ray 2.52.0 and later):"
  "that Ray ignores the token and leaves its dashboard open, which runs any code it is sent" -}}
{{- $fix := cat "use an image with Ray 2.52.0 or later (--set global.image.repository=<repo> --set global.image.tag=<tag>)"
  "and --set raycluster.rayVersion=<its Ray>, or --set global.rayAuth.tokenSecret=''" -}}
{{- include "verl-ppo.rule" (dict "state" $.state "field" "global.rayAuth.tokenSecret" "value" . "problem" $problem "fix" $fix) -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/* The algorithm must be in the chosen veRL's main trainer. */}}
{{- define "ppo-job.rules.algorithmInVersion" -}}
{{- $version := toString .Values.verlVersion -}}
{{- $algorithm := include "ppo-job.algorithm" . | fromJson -}}
{{- if and (include "ppo-job.verlFacts" . | fromJson) $algorithm (not (has $version $algorithm.versions)) -}}
{{- $problem := printf "is not in veRL %s's main trainer (it is in veRL %s)" $version (join ", " $algorithm.versions) -}}
{{- $fix := printf "--set ppo-job.verlVersion=%s with an image of that veRL, or choose another algorithm" (last $algorithm.versions) -}}
{{- include "verl-ppo.rule" (dict "state" .state "field" "ppo-job.algorithm.name" "value" $algorithm.name "problem" $problem "fix" $fix) -}}
{{- end -}}
{{- end -}}

{{/* A group-baseline algorithm compares the responses to one prompt: it needs the responses per prompt it names. */}}
{{- define "ppo-job.rules.responsesPerPrompt" -}}
{{- $algorithm := include "ppo-job.algorithm" . | fromJson -}}
{{- $n := include "ppo-job.responsesPerPrompt" . | int -}}
{{- if and (include "ppo-job.verlFacts" . | fromJson) $algorithm (lt $n (int $algorithm.minResponses)) -}}
{{- $problem := printf "is below %d: %s compares the responses to one prompt, and a group of one has no baseline"
  (int $algorithm.minResponses) $algorithm.name -}}
{{- $fix := printf "--set ppo-job.rollout.responsesPerPrompt=%d (or null for the algorithm's default)" (int $algorithm.responsesPerPrompt) -}}
{{- include "verl-ppo.rule" (dict "state" .state "field" "ppo-job.rollout.responsesPerPrompt" "value" $n "problem" $problem "fix" $fix) -}}
{{- end -}}
{{- end -}}

{{/* The rollout engine must be one the chosen veRL has. */}}
{{- define "ppo-job.rules.rolloutEngine" -}}
{{- $facts := include "ppo-job.verlFacts" . | fromJson -}}
{{- if and $facts (not (has .Values.rollout.name $facts.rolloutNames)) -}}
{{- $problem := printf "is not a rollout engine of veRL %s (it has %s)" (toString .Values.verlVersion) (join ", " $facts.rolloutNames) -}}
{{- $fix := "--set ppo-job.rollout.name=vllm" -}}
{{- include "verl-ppo.rule" (dict "state" .state "field" "ppo-job.rollout.name" "value" .Values.rollout.name "problem" $problem "fix" $fix) -}}
{{- end -}}
{{- end -}}

{{/* veRL 0.3's HF rollout samples one response per prompt, whatever rollout.n says. */}}
{{- define "ppo-job.rules.hfRolloutSamplesOne" -}}
{{- $facts := include "ppo-job.verlFacts" . | fromJson -}}
{{- $n := include "ppo-job.responsesPerPrompt" . | int -}}
{{- if and $facts (has .Values.rollout.name $facts.rolloutNames) (eq .Values.rollout.name "hf") (gt $n 1) (not $facts.hfSamplesN) -}}
{{- $problem := cat (printf "is ignored by veRL %s's HF rollout, which samples one response per prompt:" (toString .Values.verlVersion))
  (printf "the first step would fail joining %d-fold prompts with single responses" $n) -}}
{{- $sampling := include "ppo-job.newestVerlWith" (dict "Files" .Files "fact" "hfSamplesN" "engine" "hf") -}}
{{- $fix := printf "--set ppo-job.rollout.name=vllm, or --set ppo-job.verlVersion=%s" $sampling -}}
{{- include "verl-ppo.rule" (dict "state" .state "field" "ppo-job.rollout.responsesPerPrompt" "value" $n "problem" $problem "fix" $fix) -}}
{{- end -}}
{{- end -}}

{{/* The trainer mode must be one the chosen veRL's trainer offers (files/verl-versions.yaml trainerModes). */}}
{{- define "ppo-job.rules.trainerMode" -}}
{{- $facts := include "ppo-job.verlFacts" . | fromJson -}}
{{- $mode := .Values.trainer.mode -}}
{{- if and $facts (not (has $mode $facts.trainerModes)) -}}
{{- $problem := printf "is not a trainer mode of veRL %s (it has %s)" (toString .Values.verlVersion) (join ", " $facts.trainerModes) -}}
{{- $offering := include "ppo-job.newestVerlOffering" (dict "Files" .Files "fact" "trainerModes" "item" $mode) -}}
{{- $fix := printf "--set ppo-job.trainer.mode=sync, or --set-string ppo-job.verlVersion=%s with an image of that veRL" $offering -}}
{{- include "verl-ppo.rule" (dict "state" .state "field" "ppo-job.trainer.mode" "value" $mode "problem" $problem "fix" $fix) -}}
{{- end -}}
{{- end -}}

{{/* rollout.finalOutputOnly works through the agent loop manager's class, which only some veRL versions take by name. */}}
{{- define "ppo-job.rules.finalOutputVersion" -}}
{{- $facts := include "ppo-job.verlFacts" . | fromJson -}}
{{- if and $facts .Values.rollout.finalOutputOnly (not $facts.finalOutputRollouts) -}}
{{- $problem := printf "needs a veRL that takes the agent loop manager's class by name; veRL %s does not" (toString .Values.verlVersion) -}}
{{- $fix := "--set ppo-job.rollout.finalOutputOnly=false, or --set-string ppo-job.verlVersion=0.9.1 with an image of that veRL" -}}
{{- include "verl-ppo.rule" (dict "state" .state "field" "ppo-job.rollout.finalOutputOnly" "value" true "problem" $problem "fix" $fix) -}}
{{- end -}}
{{- end -}}

{{/* The final output only is an engine's request setting (vLLM's output kind: finalOutputRollouts); the others refuse it. */}}
{{- define "ppo-job.rules.finalOutputEngine" -}}
{{- $engines := (include "ppo-job.verlFacts" . | fromJson).finalOutputRollouts | default list -}}
{{- if and .Values.rollout.finalOutputOnly $engines (not (has .Values.rollout.name $engines)) -}}
{{- $problem := printf "is a setting of the %s rollout only: the %s rollout would refuse the request setting it adds"
  (join ", " $engines) (toString .Values.rollout.name) -}}
{{- $fix := printf "--set ppo-job.rollout.finalOutputOnly=false, or --set ppo-job.rollout.name=%s" (first $engines) -}}
{{- include "verl-ppo.rule" (dict "state" .state "field" "ppo-job.rollout.finalOutputOnly" "value" true "problem" $problem "fix" $fix) -}}
{{- end -}}
{{- end -}}

{{/* veRL's vLLM server counts a request as admitted until its first output; the async modes' weight sync waits for
     admissions to end, which with the final output only would be the end of every sample in flight. */}}
{{- define "ppo-job.rules.finalOutputMode" -}}
{{- if and .Values.rollout.finalOutputOnly (ne .Values.trainer.mode "sync") -}}
{{- $problem := printf "with trainer.mode %s would hold every weight sync until the samples in flight end" .Values.trainer.mode -}}
{{- $fix := "--set ppo-job.rollout.finalOutputOnly=false, or --set ppo-job.trainer.mode=sync" -}}
{{- include "verl-ppo.rule" (dict "state" .state "field" "ppo-job.rollout.finalOutputOnly" "value" true "problem" $problem "fix" $fix) -}}
{{- end -}}
{{- end -}}

{{/* The pools are pinned by the chart's plug-ins, which veRL loads as the replay buffer: without it, veRL's training pool
     may land on a pool node of as many GPUs. */}}
{{- define "ppo-job.rules.pinnedPoolsNeedPlugins" -}}
{{- if and (include "ppo-job.pinsPools" .) (not (include "ppo-job.quickPoll" .)) -}}
{{- $problem := "turns off the chart's replay buffer, which pins veRL's pools to the training and rollout pool groups" -}}
{{- $fix := "--set ppo-job.trainer.rolloutPollSeconds=2 (veRL's own interval) or another number of seconds" -}}
{{- include "verl-ppo.rule" (dict "state" .state "field" "ppo-job.trainer.rolloutPollSeconds" "value" "null" "problem" $problem "fix" $fix) -}}
{{- end -}}
{{- end -}}

{{/* The default of trainer.rolloutPollSeconds, values.yaml's (tests/verl/test_trainer_mode.py holds the two equal): the
     one interval, with null, that the rules take where nothing reads it. */}}
{{- define "ppo-job.rolloutPollDefault" -}}0.05{{- end -}}

{{/* "true" where trainer.rolloutPollSeconds asks for something: neither null nor the default. The rules that refuse an
     interval nothing would read ask this one question. */}}
{{- define "ppo-job.rolloutPollChanged" -}}
{{- $seconds := .Values.trainer.rolloutPollSeconds -}}
{{- if and (not (kindIs "invalid" $seconds)) (ne (float64 $seconds) (include "ppo-job.rolloutPollDefault" . | float64)) }}true{{ end -}}
{{- end -}}

{{/* The poll interval is the chart's replay buffer's, which only a veRL whose trainer polls one takes (quickPollSampler):
     elsewhere nothing renders it, so a value other than the default (ppo-job.rolloutPollDefault) or null would do nothing. */}}
{{- define "ppo-job.rules.rolloutPollVersion" -}}
{{- $facts := include "ppo-job.verlFacts" . | fromJson -}}
{{- $seconds := .Values.trainer.rolloutPollSeconds -}}
{{- $default := include "ppo-job.rolloutPollDefault" . -}}
{{- if and $facts (not $facts.quickPollSampler) (include "ppo-job.rolloutPollChanged" .) -}}
{{- $polling := include "ppo-job.newestVerlWith" (dict "Files" .Files "fact" "quickPollSampler" "engine" "") -}}
{{- $problem := printf "is ignored by veRL %s, whose trainer polls no replay buffer (veRL %s's does)"
  (toString .Values.verlVersion) $polling -}}
{{- $fix := printf "leave ppo-job.trainer.rolloutPollSeconds at %s or null, or --set-string ppo-job.verlVersion=%s with an image of that veRL"
  $default $polling -}}
{{- include "verl-ppo.rule" (dict "state" .state "field" "ppo-job.trainer.rolloutPollSeconds" "value" $seconds "problem" $problem "fix" $fix) -}}
{{- end -}}
{{- end -}}

{{/* "true" where veRL runs the rollout on the rollout pool: ppo-job.trainer.mode=separate_async with global.rolloutPool
     on; else "". */}}
{{- define "ppo-job.rolloutOnPool" -}}
{{- if and (eq .Values.trainer.mode "separate_async") (include "verl-ppo.rolloutPoolEnabled" .) -}}true{{- end -}}
{{- end -}}

{{/* separate_async runs every rollout replica on a pool of its own (hybrid_engine=false): without one it has no GPUs. */}}
{{- define "ppo-job.rules.separateAsyncWithoutPool" -}}
{{- if and (eq .Values.trainer.mode "separate_async") (not (include "verl-ppo.rolloutPoolEnabled" .)) -}}
{{- $problem := "runs every rollout replica on a rollout pool of its own, and the release has none (global.rolloutPool.enabled)" -}}
{{- $fix := cat "--set global.rolloutPool.enabled=true (one node like the training nodes; its node type:"
  "raycluster.rolloutPool.nodeSelector), or --set ppo-job.trainer.mode=colocate_async to overlap on the training GPUs" -}}
{{- include "verl-ppo.rule" (dict "state" .state "field" "ppo-job.trainer.mode" "value" .Values.trainer.mode "problem" $problem "fix" $fix) -}}
{{- end -}}
{{- end -}}

{{/* Only separate_async uses a rollout pool: in any other mode its GPUs would sit idle, held from others. */}}
{{- define "ppo-job.rules.poolWithoutSeparateAsync" -}}
{{- if and (include "verl-ppo.rolloutPoolEnabled" .) (ne .Values.trainer.mode "separate_async") -}}
{{- $problem := printf "adds GPU nodes that no rollout uses: veRL runs the rollout on a pool only in separate_async, not %s"
  .Values.trainer.mode -}}
{{- $offering := include "ppo-job.newestVerlOffering" (dict "Files" .Files "fact" "trainerModes" "item" "separate_async") -}}
{{- $fix := printf "--set ppo-job.trainer.mode=separate_async (veRL %s), or --set global.rolloutPool.enabled=false" $offering -}}
{{- include "verl-ppo.rule" (dict "state" .state "field" "global.rolloutPool.enabled" "value" true "problem" $problem "fix" $fix) -}}
{{- end -}}
{{- end -}}

{{/* veRL makes (pool GPUs / tensor parallel size) rollout replicas on the pool: none when the pool is smaller than one. */}}
{{- define "ppo-job.rules.poolTooSmall" -}}
{{- if include "ppo-job.rolloutOnPool" . -}}
{{- $tp := int .Values.rollout.tensorModelParallelSize -}}
{{- $perNode := include "verl-ppo.rolloutPoolGpusPerNode" . | int -}}
{{- $gpus := mul (include "verl-ppo.rolloutPoolNodes" . | int) $perNode -}}
{{- if lt $gpus $tp -}}
{{- $problem := printf "gives the rollout pool %d GPUs (global.rolloutPool.nodes x perNode), fewer than one rollout replica's %d"
  $gpus $tp -}}
{{- $problem = printf "%s (ppo-job.rollout.tensorModelParallelSize): veRL would start no replica" $problem -}}
{{- $fix := printf "--set global.rolloutPool.perNode=%d (nodes of that many GPUs), or --set ppo-job.rollout.tensorModelParallelSize=%d"
  $tp $perNode -}}
{{- include "verl-ppo.rule" (dict "state" .state "field" "global.rolloutPool.perNode" "value" $perNode "problem" $problem "fix" $fix) -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/* veRL 0.9.1's separate_async trainer asserts data.train_batch_size = parameter_sync_step x ppo_mini_batch_size. */}}
{{- define "ppo-job.rules.parameterSyncStep" -}}
{{- if eq .Values.trainer.mode "separate_async" -}}
{{- $step := int .Values.trainer.separateAsync.parameterSyncStep -}}
{{- $batch := int .Values.data.trainBatchSize -}}
{{- $mini := int .Values.actor.ppoMiniBatchSize -}}
{{- if ne $batch (mul $step $mini) -}}
{{- $problem := printf "x actor.ppoMiniBatchSize (%d) is not data.trainBatchSize (%d), which veRL's separate_async trainer asserts"
  $mini $batch -}}
{{- $fix := printf "--set ppo-job.data.trainBatchSize=%d" (mul $step $mini) -}}
{{- if not (mod $batch $mini) }}{{ $fix = printf "--set ppo-job.trainer.separateAsync.parameterSyncStep=%d, or %s" (div $batch $mini) $fix }}{{ end -}}
{{- $field := "ppo-job.trainer.separateAsync.parameterSyncStep" -}}
{{- include "verl-ppo.rule" (dict "state" .state "field" $field "value" $step "problem" $problem "fix" $fix) -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/* actor_rollout_ref.hybrid_engine=false is separate_async's (which the chart renders): veRL's other trainers ignore it
     (the v1 ones) or assert it is true (the legacy one). */}}
{{- define "ppo-job.rules.hybridEngineOff" -}}
{{- range $index, $arg := .Values.extraArgs -}}
{{- $value := trimPrefix "actor_rollout_ref.hybrid_engine=" $arg -}}
{{- if and (ne $.Values.trainer.mode "separate_async") (ne $value $arg) (include "ppo-job.hydraFalse" $value) -}}
{{- $problem := printf "turns the hybrid engine off, which only separate_async uses (the trainer mode is %s)" $.Values.trainer.mode -}}
{{- $fix := printf "remove it; for a rollout on GPUs of its own: --set ppo-job.trainer.mode=separate_async --set global.rolloutPool.enabled=true" -}}
{{- $field := printf "ppo-job.extraArgs[%d]" $index -}}
{{- include "verl-ppo.rule" (dict "state" $.state "field" $field "value" $arg "problem" $problem "fix" $fix) -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/* "true" where a Hydra override's value (the text after key=) says false to veRL, which tests such switches by
     Python's truth: false in any letter case, null, a zero, an empty text, list or map (Hydra drops the spaces around
     a value); or false quoted, which Hydra keeps as text that veRL would take for true, against its writer's word
     (generator check refuses that text's type). Else "". */}}
{{- define "ppo-job.hydraFalse" -}}
{{- $false := "(?i:false|null)|[-+]?(0|0*\\.0+|0+\\.0*)([eE][-+]?[0-9]+)?|''|\"\"|\\[ *\\]|\\{ *\\}|'(?i:false)'|\"(?i:false)\"" -}}
{{- if regexMatch (printf "^ *(%s) *$" $false) . }}true{{ end -}}
{{- end -}}

{{/* The indexes of ppo-job.extraArgs that ask for veRL's legacy trainer (trainer.use_v1 false, ppo-job.hydraFalse), as
     a JSON list. */}}
{{- define "ppo-job.legacyTrainerArgs" -}}
{{- $found := list -}}
{{- range $index, $arg := .Values.extraArgs -}}
{{- $value := trimPrefix "trainer.use_v1=" $arg -}}
{{- if and (ne $value $arg) (include "ppo-job.hydraFalse" $value) }}{{ $found = append $found $index }}{{ end -}}
{{- end -}}
{{- toJson $found -}}
{{- end -}}

{{/* veRL's legacy trainer (trainer.use_v1=false) has no modes: it would run sync and ignore the one asked for. */}}
{{- define "ppo-job.rules.trainerModeLegacy" -}}
{{- $mode := .Values.trainer.mode -}}
{{- range $index := include "ppo-job.legacyTrainerArgs" . | fromJsonArray -}}
{{- if ne $mode "sync" -}}
{{- $arg := index $.Values.extraArgs (int $index) -}}
{{- $problem := printf "needs veRL's default trainer, but ppo-job.extraArgs[%d]=%s asks for its legacy one, which has only sync" (int $index) $arg -}}
{{- $fix := printf "remove ppo-job.extraArgs[%d], or --set ppo-job.trainer.mode=sync" (int $index) -}}
{{- include "verl-ppo.rule" (dict "state" $.state "field" "ppo-job.trainer.mode" "value" $mode "problem" $problem "fix" $fix) -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/* The chart's agent loop manager (rollout.finalOutputOnly) is built as the default trainer's; veRL's legacy trainer
     starts its manager with other arguments, and the run would fail as it starts. */}}
{{- define "ppo-job.rules.finalOutputLegacyTrainer" -}}
{{- range $index := include "ppo-job.legacyTrainerArgs" . | fromJsonArray -}}
{{- if $.Values.rollout.finalOutputOnly -}}
{{- $arg := index $.Values.extraArgs (int $index) -}}
{{- $problem := printf "needs veRL's default trainer; ppo-job.extraArgs[%d]=%s asks for the legacy one, whose manager differs" (int $index) $arg -}}
{{- $fix := printf "--set ppo-job.rollout.finalOutputOnly=false, or remove ppo-job.extraArgs[%d]" (int $index) -}}
{{- include "verl-ppo.rule" (dict "state" $.state "field" "ppo-job.rollout.finalOutputOnly" "value" true "problem" $problem "fix" $fix) -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/* veRL 0.9.1's legacy trainer (trainer.use_v1=false: main_ppo_v0.py's TaskRunner, ray_trainer.py's RayPPOTrainer)
     samples through data.sampler (create_rl_sampler) and never reads trainer.v1.sampler, where the chart's replay buffer
     and its interval go: only the v1 trainers do (trainer/ppo/v1/trainer_base.py). An interval other than the default
     (ppo-job.rolloutPollDefault) or null would do nothing. */}}
{{- define "ppo-job.rules.rolloutPollLegacyTrainer" -}}
{{- $seconds := .Values.trainer.rolloutPollSeconds -}}
{{- $default := include "ppo-job.rolloutPollDefault" . -}}
{{- if and (include "ppo-job.quickPoll" .) (include "ppo-job.rolloutPollChanged" .) -}}
{{- range $index := include "ppo-job.legacyTrainerArgs" . | fromJsonArray -}}
{{- $arg := index $.Values.extraArgs (int $index) -}}
{{- $problem := printf "is ignored by veRL's legacy trainer, which ppo-job.extraArgs[%d]=%s asks for: it polls no replay buffer" (int $index) $arg -}}
{{- $fix := printf "remove ppo-job.extraArgs[%d], or leave ppo-job.trainer.rolloutPollSeconds at %s or null" (int $index) $default -}}
{{- $field := "ppo-job.trainer.rolloutPollSeconds" -}}
{{- include "verl-ppo.rule" (dict "state" $.state "field" $field "value" $seconds "problem" $problem "fix" $fix) -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/* extraArgs, each on its own: one plain key=value override Hydra reads as one value (files/hydra.yaml), for a key of
     the chosen veRL's config and not Hydra's, no key the chart owns, no unsized twin of a per-GPU batch. */}}
{{- define "ppo-job.rules.extraArgs" -}}
{{- $owned := include "ppo-job.chartOwnedKeys" . | fromJson -}}
{{- $hydra := .Files.Get "files/hydra.yaml" | fromYaml -}}
{{- $facts := include "ppo-job.verlFacts" . | fromJson -}}
{{- range $index, $arg := .Values.extraArgs -}}
{{- $override := regexMatch $hydra.overridePattern $arg -}}
{{- $key := regexReplaceAll "=(.|\n)*$" $arg "" -}}
{{- $item := dict "state" $.state "field" (printf "ppo-job.extraArgs[%d]" $index) "arg" $arg "key" $key "hydra" $hydra "facts" $facts
  "override" $override "rendered" (hasKey $owned $key) "value" (ternary (trimPrefix (printf "%s=" $key) $arg) "" $override)
  "version" (toString $.Values.verlVersion) "owned" $owned -}}
{{- include "ppo-job.rules.extraArgAddsKey" $item -}}
{{- include "ppo-job.rules.extraArgNotOverride" $item -}}
{{- include "ppo-job.rules.extraArgKey" $item -}}
{{- include "ppo-job.rules.extraArgValue" $item -}}
{{- include "ppo-job.rules.extraArgRendered" $item -}}
{{- include "ppo-job.rules.extraArgTwin" $item -}}
{{- include "ppo-job.rules.extraArgSection" $item -}}
{{- include "ppo-job.rules.extraArgSwitch" $item -}}
{{- end -}}
{{- end -}}

{{/* A section set at once: Hydra merges a {...} value into the section and puts any other value in its place, over keys
     the chart renders (ppo-job.chartOwnedKeys) or its rules read in extraArgs, which then neither sees: an extraArgs
     item sets those one key each. Call with ppo-job.rules.extraArgs's item. */}}
{{- define "ppo-job.rules.extraArgSection" -}}
{{- if .override -}}
{{- $whole := hasPrefix "{" .value -}}
{{- $sets := list .key -}}
{{- if $whole -}}
{{- $sets = list -}}
{{- range regexFindAll "(^\\{|,) *[A-Za-z0-9_.-]+ *:" (regexReplaceAll "'[^']*'|\"[^\"]*\"" .value "''") -1 -}}
{{- $sets = append $sets (printf "%s.%s" $.key (regexReplaceAll "^[{,] *|[ :]+$" . "")) -}}
{{- end -}}
{{- end -}}
{{- /* The keys the other extraArgs rules read: the trainer, the engines, the Megatron LoRA, the outputs, the twins. */}}
{{- $read := list "trainer.use_v1" "actor_rollout_ref.hybrid_engine" "actor_rollout_ref.actor.strategy" "actor_rollout_ref.ref.strategy"
  "critic.strategy" "actor_rollout_ref.model.lora" "critic.model.lora" "trainer.rollout_data_dir" "trainer.validation_data_dir"
  "actor_rollout_ref.actor.ppo_micro_batch_size" "actor_rollout_ref.rollout.log_prob_micro_batch_size"
  "actor_rollout_ref.ref.log_prob_micro_batch_size" "critic.ppo_micro_batch_size" -}}
{{- $hit := list -}}
{{- range $key := concat (keys .owned | sortAlpha) $read -}}
{{- range $set := $sets -}}
{{- if or (hasPrefix (printf "%s." $set) $key) (and $whole (eq $set $key)) }}{{ $hit = append $hit $key }}{{ end -}}
{{- end -}}
{{- end -}}
{{- $hit = uniq $hit -}}
{{- if $hit -}}
{{- $shown := join ", " (slice $hit 0 (min 3 (len $hit))) -}}
{{- if gt (len $hit) 3 }}{{ $shown = printf "%s and %d more" $shown (sub (len $hit) 3) }}{{ end -}}
{{- $problem := printf "sets the section %s at once: Hydra %s, over %s, which the chart renders from values or checks in extraArgs" .key
  (ternary "merges a {...} value into it" "puts this value in its place" $whole) $shown -}}
{{- $fix := printf "write each key as an item of its own, e.g. %s=<value>, for a key the chart does not render"
  (ternary (first $sets) (printf "%s.<key>" .key) $whole) -}}
{{- include "verl-ppo.rule" (dict "state" .state "field" .field "value" .arg "problem" $problem "fix" $fix) -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/* A switch veRL tests by Python's truth and the rules read (trainer.use_v1, actor_rollout_ref.hybrid_engine) set plainly:
     true in any letter case or a number in digits Hydra reads as non-zero (no underflow to 0.0: a non-zero digit in the
     first 200 decimals, an exponent not below -99), or false as ppo-job.hydraFalse reads it. Hydra keeps 00, '0', no or
     off as text, which veRL takes for true against its writer's likely word; nan, inf, a list or a map are no switch
     either. Call with ppo-job.rules.extraArgs's item (a value Hydra reads as one; a key the chart renders is refused). */}}
{{- define "ppo-job.rules.extraArgSwitch" -}}
{{- $valuePattern := replace "SCALAR" .hydra.scalarPattern .hydra.valuePattern -}}
{{- $switch := and .override (not .rendered) (has .key (list "trainer.use_v1" "actor_rollout_ref.hybrid_engine")) -}}
{{- $number := "[-+]?([1-9](_?[0-9])*(\\.([0-9](_?[0-9])*)?)?|0?\\.(0_?){0,199}[1-9](_?[0-9])*)([eE](\\+?[0-9](_?[0-9])*|-[0-9]{1,2}))?" -}}
{{- $true := regexMatch (printf "^ *((?i:true)|%s) *$" $number) .value -}}
{{- if and $switch (regexMatch $valuePattern .value) (not $true) (not (include "ppo-job.hydraFalse" .value)) -}}
{{- $problem := printf "is not plainly true or false: veRL tests %s by Python's truth, which takes a text Hydra keeps (no, off, 00, '0') for true"
  .key -}}
{{- $fix := printf "write %s=true or %s=false" .key .key -}}
{{- include "verl-ppo.rule" (dict "state" .state "field" .field "value" .arg "problem" $problem "fix" $fix) -}}
{{- end -}}
{{- end -}}

{{/* The keys the chart owns (JSON: key -> true), whether or not the current values render them: every key the command
     renders for the chosen veRL with each of its algorithms and every switch on (dynamic batches, gradient checkpointing
     off, offloads, a kept-checkpoint bound, a reward function, rollout metrics, the quick-poll replay buffer, the final-output manager; keys the
     command adds with + count without it), less other algorithms' preset
     overrides (files/algorithms.yaml: the chosen one's stay). Derived from ppo-job.overrides, the one place they are made. */}}
{{- define "ppo-job.chartOwnedKeys" -}}
{{- $facts := include "ppo-job.verlFacts" . | fromJson -}}
{{- $chosen := include "ppo-job.algorithm" . | fromJson -}}
{{- $owned := dict -}}
{{- $values := deepCopy .Values -}}
{{- $_ := set $values "extraArgs" list -}}
{{- $_ := set $values.actor "useDynamicBsz" true -}}
{{- $_ := set $values.model "enableGradientCheckpointing" false -}}
{{- range $section := list "actor" "ref" "critic" }}{{ $_ := set (get $values $section) "paramOffload" true }}{{ end -}}
{{- range $section := list "actor" "critic" }}{{ $_ := set (get $values $section) "optimizerOffload" true }}{{ end -}}
{{- $_ := set $values.trainer "maxCheckpointsToKeep" 1 -}}
{{- if hasKey $values.trainer "rolloutPollSeconds" -}}
{{- $_ := set $values.trainer "rolloutPollSeconds" (include "ppo-job.rolloutPollDefault" . | float64) -}}
{{- end -}}
{{- $_ := set $values.rollout "finalOutputOnly" true -}}
{{- $_ := set $values.reward "functionPath" "/reward.py" -}}
{{- $lora := dict "rank" 8 "alpha" 16 "targetModules" "all-linear" "excludeModules" (list "o_proj") "adapterPath" "/adapter" -}}
{{- $_ := set $values.model "lora" (set (deepCopy $lora) "layeredSummon" true) -}}
{{- $_ := set $values.critic "lora" $lora -}}
{{- $_ := set $values "global" (set (deepCopy $values.global) "rolloutMetrics" (dict "enabled" true)) -}}
{{- with $facts.rolloutMetrics }}{{ if not (has $values.rollout.name .) }}{{ $_ := set $values.rollout "name" (first .) }}{{ end }}{{ end -}}
{{- range $name, $algorithm := .Files.Get "files/algorithms.yaml" | fromYaml -}}
{{- $_ := set $values.algorithm "name" $name -}}
{{- $context := dict "Values" $values "Release" $.Release "Files" $.Files -}}
{{- if has (toString $.Values.verlVersion) ((include "ppo-job.algorithm" $context | fromJson).versions | default list) -}}
{{- $presets := list -}}
{{- if ne $name $chosen.name -}}
{{- range ($algorithm.overrides | default list) }}{{ $presets = append $presets (regexReplaceAll "=.*$" . "") }}{{ end -}}
{{- end -}}
{{- range (include "ppo-job.overrides" $context | fromJsonArray) -}}
{{- $key := regexReplaceAll "=.*$" . "" | trimPrefix "+" -}}
{{- if not (has $key $presets) }}{{ $_ := set $owned $key true }}{{ end -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- /* Rendered only with LoRA: a run without it may choose its engine (ppo-job.rules.loraActorStrategy). */}}
{{- with $facts.loraActorStrategy }}{{ $_ := unset $owned (include "ppo-job.actorStrategyKey" $) }}{{ end -}}
{{- toJson $owned -}}
{{- end -}}

{{/* A key of the chosen veRL's config, and not Hydra's own (files/hydra.yaml keyRefusals). Call with ppo-job.rules.extraArgs's item. */}}
{{- define "ppo-job.rules.extraArgKey" -}}
{{- if .override -}}
{{- $refusal := dict -}}
{{- range .hydra.keyRefusals }}{{ if and (not $refusal) (regexMatch .pattern $.key) }}{{ $refusal = . }}{{ end }}{{ end -}}
{{- $sections := .facts.configSections | default list -}}
{{- if and (not $refusal) $sections (not (has (first (splitList "." .key)) $sections)) -}}
{{- $refusal = dict "problem" (printf "is not a key of veRL %s's config (its sections: %s)" .version (join ", " $sections))
  "fix" "write a key of veRL's trainer/config/ppo_trainer.yaml, e.g. trainer.val_before_train=False" -}}
{{- end -}}
{{- with $refusal -}}
{{- include "verl-ppo.rule" (dict "state" $.state "field" $.field "value" $.arg "problem" .problem "fix" .fix) -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/* A value Hydra's parser reads as one value (files/hydra.yaml valuePattern), else its likeliest slip named
     (valueRefusals): a command substitution, two overrides, a stray quote, a sweep. Call with ppo-job.rules.extraArgs's item. */}}
{{- define "ppo-job.rules.extraArgValue" -}}
{{- if and .override (not (regexMatch (replace "SCALAR" .hydra.scalarPattern .hydra.valuePattern) .value)) -}}
{{- $refusal := dict "problem" .hydra.valueProblem "fix" .hydra.valueFix -}}
{{- $found := false -}}
{{- range .hydra.valueRefusals }}{{ if and (not $found) (regexMatch .pattern $.value) }}{{ $refusal = . }}{{ $found = true }}{{ end }}{{ end -}}
{{- $shown := ternary (toJson .arg) .arg (regexMatch "[\\x00-\\x1f]" .arg) -}}
{{- include "verl-ppo.rule" (dict "state" .state "field" .field "value" $shown "problem" $refusal.problem "fix" $refusal.fix) -}}
{{- end -}}
{{- end -}}

{{/* No '+' (add) or '~' (delete): a misspelled key would pass unseen. Call with ppo-job.rules.extraArgs's item. */}}
{{- define "ppo-job.rules.extraArgAddsKey" -}}
{{- if or (hasPrefix "+" .arg) (hasPrefix "~" .arg) -}}
{{- $problem := "adds or deletes a config key; that hides typos in key names" -}}
{{- $fix := "write plain key=value for a key veRL's config has" -}}
{{- include "verl-ppo.rule" (dict "state" .state "field" .field "value" .arg "problem" $problem "fix" $fix) -}}
{{- end -}}
{{- end -}}

{{/* The chart passes each as one Hydra key=value override. */}}
{{- define "ppo-job.rules.extraArgNotOverride" -}}
{{- if not (or .override (hasPrefix "+" .arg) (hasPrefix "~" .arg)) -}}
{{- $problem := "is not a Hydra key=value override" -}}
{{- $fix := "write it as section.key=value" -}}
{{- include "verl-ppo.rule" (dict "state" .state "field" .field "value" .arg "problem" $problem "fix" $fix) -}}
{{- end -}}
{{- end -}}

{{/* A key the chart owns is set there, once (ppo-job.chartOwnedKeys: rendered now or under other values). */}}
{{- define "ppo-job.rules.extraArgRendered" -}}
{{- if and .override .rendered -}}
{{- $problem := "sets a key the chart renders from values (for this veRL, whatever the current values render)" -}}
{{- $fix := "set the matching ppo-job value instead (see the ppo-job README)" -}}
{{- include "verl-ppo.rule" (dict "state" .state "field" .field "value" .arg "problem" $problem "fix" $fix) -}}
{{- end -}}
{{- end -}}

{{/* veRL accepts only one of a micro batch and its _per_gpu twin, which the chart sets. */}}
{{- define "ppo-job.rules.extraArgTwin" -}}
{{- $twins := list "actor_rollout_ref.actor.ppo_micro_batch_size" "actor_rollout_ref.rollout.log_prob_micro_batch_size"
  "actor_rollout_ref.ref.log_prob_micro_batch_size" "critic.ppo_micro_batch_size" -}}
{{- if and .override (not .rendered) (has .key $twins) -}}
{{- $problem := printf "conflicts with %s_per_gpu, which the chart sets: veRL accepts only one of the two" .key -}}
{{- $fix := "set the per-GPU value in ppo-job instead" -}}
{{- include "verl-ppo.rule" (dict "state" .state "field" .field "value" .arg "problem" $problem "fix" $fix) -}}
{{- end -}}
{{- end -}}

{{/* The parts the preparation Job writes (JSON list): the model, and the dataset unless its format is none. */}}
{{- define "ppo-job.prepareParts" -}}
{{- ternary (list "model") (list "dataset" "model") (eq .Values.prepare.dataset.format "none") | toJson -}}
{{- end -}}

{{/* The preparation Job writes the run's inputs where the run reads them: on the shared volume. */}}
{{- define "ppo-job.rules.prepareWrites" -}}
{{- $v := .Values -}}
{{- if $v.prepare.enabled -}}
{{- $mount := printf "%s/" (include "verl-ppo.mountPath" .) -}}
{{- $writes := dict "model.path" $v.model.path -}}
{{- if ne $v.prepare.dataset.format "none" -}}
{{- $writes = merge $writes (dict "data.trainFiles" $v.data.trainFiles "data.valFiles" $v.data.valFiles) -}}
{{- end -}}
{{- range $field, $path := $writes -}}
{{- if not (include "verl-ppo.onVolume" (dict "ctx" $ "path" $path)) -}}
{{- $problem := printf "is not on the shared volume (%s) once normalised (%s): the preparation Job could not write it where the run reads it"
  $mount (ternary (clean $path) "not a path" (hasPrefix "/" $path)) -}}
{{- $fix := printf "put it under %s, or --set ppo-job.prepare.enabled=false" $mount -}}
{{- include "verl-ppo.rule" (dict "state" $.state "field" (printf "ppo-job.%s" $field) "value" $path "problem" $problem "fix" $fix) -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/* Hugging Face's client reads HF_ENDPOINT as a URL. */}}
{{- define "ppo-job.rules.prepareEndpointScheme" -}}
{{- $prepare := .Values.prepare -}}
{{- with and $prepare.enabled (eq $prepare.source "huggingface") $prepare.endpoint -}}
{{- if not (regexMatch "^https?://" .) -}}
{{- $problem := "has no scheme: Hugging Face's client reads HF_ENDPOINT as a URL" -}}
{{- $fix := printf "--set ppo-job.prepare.endpoint=https://%s" . -}}
{{- include "verl-ppo.rule" (dict "state" $.state "field" "ppo-job.prepare.endpoint" "value" . "problem" $problem "fix" $fix) -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/* ModelScope's client reads MODELSCOPE_DOMAIN as a domain and adds the scheme itself. */}}
{{- define "ppo-job.rules.prepareEndpointDomain" -}}
{{- $prepare := .Values.prepare -}}
{{- with and $prepare.enabled (eq $prepare.source "modelscope") $prepare.endpoint -}}
{{- if regexMatch "^https?://" . -}}
{{- $problem := "is a URL: ModelScope's client reads MODELSCOPE_DOMAIN as a domain and adds the scheme itself" -}}
{{- $fix := printf "--set ppo-job.prepare.endpoint=%s" (regexReplaceAll "^https?://([^/]+).*$" . "${1}") -}}
{{- include "verl-ppo.rule" (dict "state" $.state "field" "ppo-job.prepare.endpoint" "value" . "problem" $problem "fix" $fix) -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/* A hub mirror means nothing to a preparation that reads the shared volume only. */}}
{{- define "ppo-job.rules.prepareEndpointLocal" -}}
{{- $prepare := .Values.prepare -}}
{{- with and $prepare.enabled (eq $prepare.source "local") $prepare.endpoint -}}
{{- $problem := "names a hub mirror, but prepare.source local reads the shared volume only" -}}
{{- $fix := "--set ppo-job.prepare.endpoint='', or --set ppo-job.prepare.source=huggingface (or modelscope)" -}}
{{- include "verl-ppo.rule" (dict "state" $.state "field" "ppo-job.prepare.endpoint" "value" . "problem" $problem "fix" $fix) -}}
{{- end -}}
{{- end -}}

{{/* A local preparation mounts only the shared volume: what it copies must be there. */}}
{{- define "ppo-job.rules.prepareLocalPath" -}}
{{- $prepare := .Values.prepare -}}
{{- if and $prepare.enabled (eq $prepare.source "local") -}}
{{- $mount := include "verl-ppo.mountPath" . -}}
{{- range $part := include "ppo-job.prepareParts" . | fromJsonArray -}}
{{- $path := (get $prepare $part).localPath -}}
{{- if and $path (not (include "verl-ppo.onVolume" (dict "ctx" $ "path" $path))) -}}
{{- $problem := printf "is not on the shared volume (%s) once normalised: the preparation Job mounts only that volume" $mount -}}
{{- $fix := printf "copy it onto the volume and --set ppo-job.prepare.%s.localPath=%s/<directory>" $part $mount -}}
{{- $field := printf "ppo-job.prepare.%s.localPath" $part -}}
{{- include "verl-ppo.rule" (dict "state" $.state "field" $field "value" $path "problem" $problem "fix" $fix) -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/* A dataset's records have its format's fields: veRL would score another format with the wrong reward. */}}
{{- define "ppo-job.rules.prepareDatasetFormat" -}}
{{- $prepare := .Values.prepare -}}
{{- if and $prepare.enabled (ne $prepare.source "local") (has $prepare.dataset.format (list "gsm8k" "math")) -}}
{{- $name := lower (last (splitList "/" $prepare.dataset.id)) -}}
{{- $looksLike := ternary "gsm8k" (ternary "math" "" (contains "math" $name)) (contains "gsm8k" $name) -}}
{{- if and $looksLike (ne $looksLike $prepare.dataset.format) -}}
{{- $problem := cat (printf "does not fit prepare.dataset.id %s, a %s dataset:" $prepare.dataset.id $looksLike)
  "its records have other fields and veRL would score them with the wrong reward" -}}
{{- $fix := printf "--set ppo-job.prepare.dataset.format=%s, or name a %s dataset in prepare.dataset.id" $looksLike $prepare.dataset.format -}}
{{- $field := "ppo-job.prepare.dataset.format" -}}
{{- include "verl-ppo.rule" (dict "state" .state "field" $field "value" $prepare.dataset.format "problem" $problem "fix" $fix) -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/* Each part the preparation writes names its source: a hub id, or a local path. */}}
{{- define "ppo-job.rules.prepareSource" -}}
{{- $prepare := .Values.prepare -}}
{{- if $prepare.enabled -}}
{{- $sourceKey := ternary "localPath" "id" (eq $prepare.source "local") -}}
{{- range $part := include "ppo-job.prepareParts" . | fromJsonArray -}}
{{- $field := printf "ppo-job.prepare.%s.%s" $part $sourceKey -}}
{{- if not (get (get $prepare $part) $sourceKey) -}}
{{- $problem := printf "must not be empty with prepare.source %s" $prepare.source -}}
{{- $fix := printf "--set %s=..." $field -}}
{{- include "verl-ppo.rule" (dict "state" $.state "field" $field "value" "" "problem" $problem "fix" $fix) -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/* RayJob mode, KubeRay's constraint: a TTL delays a cluster deletion, which shutdownAfterJobFinishes makes. */}}
{{- define "ppo-job.rules.rayJobTtl" -}}
{{- $r := .Values.rayJob -}}
{{- if and (include "verl-ppo.rayJobMode" .) (gt (int $r.ttlSecondsAfterFinished) 0) (not $r.shutdownAfterJobFinishes) -}}
{{- $problem := "delays a cluster deletion that shutdownAfterJobFinishes=false never makes (KubeRay refuses the RayJob)" -}}
{{- $fix := "--set ppo-job.rayJob.shutdownAfterJobFinishes=true, or --set ppo-job.rayJob.ttlSecondsAfterFinished=0" -}}
{{- $field := "ppo-job.rayJob.ttlSecondsAfterFinished" -}}
{{- include "verl-ppo.rule" (dict "state" .state "field" $field "value" $r.ttlSecondsAfterFinished "problem" $problem "fix" $fix) -}}
{{- end -}}
{{- end -}}

{{/* RayJob mode, KubeRay's constraint: a deletion strategy replaces shutdownAfterJobFinishes. */}}
{{- define "ppo-job.rules.rayJobDeletionStrategy" -}}
{{- $r := .Values.rayJob -}}
{{- if and (include "verl-ppo.rayJobMode" .) $r.deletionStrategy $r.shutdownAfterJobFinishes -}}
{{- $problem := "replaces shutdownAfterJobFinishes, which is true: KubeRay accepts only one of the two" -}}
{{- $fix := "--set ppo-job.rayJob.shutdownAfterJobFinishes=false, or --set ppo-job.rayJob.deletionStrategy=null" -}}
{{- $field := "ppo-job.rayJob.deletionStrategy" -}}
{{- include "verl-ppo.rule" (dict "state" .state "field" $field "value" (toJson $r.deletionStrategy) "problem" $problem "fix" $fix) -}}
{{- end -}}
{{- end -}}

{{/* RayJob mode: the submitter meets the cluster KubeRay creates for the RayJob, no other. */}}
{{- define "ppo-job.rules.rayJobDashboardURL" -}}
{{- with and (include "verl-ppo.rayJobMode" .) .Values.dashboardURL -}}
{{- $problem := "names another cluster, but a RayJob's submitter submits to the cluster KubeRay creates for it" -}}
{{- $fix := "--set ppo-job.dashboardURL='' in RayJob mode, or --set global.mode=RayCluster to submit to that cluster" -}}
{{- include "verl-ppo.rule" (dict "state" $.state "field" "ppo-job.dashboardURL" "value" . "problem" $problem "fix" $fix) -}}
{{- end -}}
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
{{- $problem := printf "is read in %s mode only; with global.mode=%s it would be ignored" $other $mode -}}
{{- $fix := printf "remove it, or --set global.mode=%s" $other -}}
{{- $shown := ternary (toJson $value) (include "verl-ppo.scalar" $value) (kindIs "map" $value) -}}
{{- include "verl-ppo.rule" (dict "state" $.state "field" (printf "ppo-job.%s" $path) "value" $shown "problem" $problem "fix" $fix) -}}
{{- end -}}
{{- end -}}

{{/* The custom reward file: read where it is (quoted where it lands, a space is fine), but a '..' segment is
     refused: written out, the path says where it reads. */}}
{{- define "ppo-job.rules.rewardPath" -}}
{{- $path := .Values.reward.functionPath -}}
{{- if and $path (has ".." (splitList "/" $path)) -}}
{{- $mount := include "verl-ppo.mountPath" . -}}
{{- $leaves := and (hasPrefix (printf "%s/" $mount) $path) (not (include "verl-ppo.onVolume" (dict "ctx" $ "path" $path))) -}}
{{- $problem := printf "has a '..' segment: it reads %s%s" (clean $path) (ternary (printf ", off the shared volume (%s)" $mount) "" $leaves) -}}
{{- $fix := printf "write the file's own path without '..', e.g. --set ppo-job.reward.functionPath=%s/rewards/score.py" $mount -}}
{{- include "verl-ppo.rule" (dict "state" .state "field" "ppo-job.reward.functionPath" "value" $path "problem" $problem "fix" $fix) -}}
{{- end -}}
{{- end -}}

{{/* Excluded modules that cover every target leave peft nothing to adapt: it fails once the cluster is up. The targets
     are the list given, or for all-linear the linear modules of the model's family where files/lora-modules.yaml knows it. */}}
{{- define "ppo-job.rules.loraExcludesEveryTarget" -}}
{{- $keys := (include "ppo-job.verlFacts" . | fromJson).loraKeys | default list -}}
{{- range $model := include "ppo-job.loraModels" . | fromJsonArray -}}
{{- $targets := .lora.targetModules -}}
{{- $name := lower (base (trimSuffix "/" .path)) -}}
{{- if not (kindIs "slice" $targets) -}}
{{- $targets = list -}}
{{- range ($.Files.Get "files/lora-modules.yaml" | fromYamlArray) }}{{ if regexMatch .match $name }}{{ $targets = .modules }}{{ end }}{{ end -}}
{{- end -}}
{{- $kept := list -}}
{{- range $targets }}{{ if not (has . ($model.lora.excludeModules | default list)) }}{{ $kept = append $kept . }}{{ end }}{{ end -}}
{{- if and $targets (empty $kept) (has "excludeModules" $keys) -}}
{{- $problem := printf "excludes every module the adapters target (%s): peft would find nothing to adapt" (join ", " $targets) -}}
{{- $fix := printf "remove some of them from %s.excludeModules, or --set %s.rank=0 to train the whole model" .field .field -}}
{{- include "verl-ppo.rule" (dict "state" $.state "field" (printf "%s.excludeModules" .field) "value" (toJson .lora.excludeModules)
  "problem" $problem "fix" $fix) -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/* The actor's adapters reach the rollout only in the engines the version's workers sync them to (loraRollouts). */}}
{{- define "ppo-job.rules.loraRollout" -}}
{{- $facts := include "ppo-job.verlFacts" . | fromJson -}}
{{- $rollouts := $facts.loraRollouts | default list -}}
{{- $name := .Values.rollout.name -}}
{{- if and (gt (int .Values.model.lora.rank) 0) (has "rank" ($facts.loraKeys | default list)) (not (has $name $rollouts)) -}}
{{- $problem := printf "cannot serve LoRA adapters in veRL %s (its rollouts that do: %s): its workers would hand %s the adapted weights,"
  (toString .Values.verlVersion) (join ", " $rollouts) $name -}}
{{- $problem = cat $problem "which it cannot load" -}}
{{- $fix := printf "--set ppo-job.rollout.name=%s, or --set ppo-job.model.lora.rank=0" (first $rollouts) -}}
{{- with include "ppo-job.newestVerlOffering" (dict "Files" .Files "fact" "loraRollouts" "item" $name) -}}
{{- $fix = printf "%s, or --set-string ppo-job.verlVersion=%s with an image of that veRL (its %s rollout serves them)" $fix . $name -}}
{{- end -}}
{{- include "verl-ppo.rule" (dict "state" .state "field" "ppo-job.rollout.name" "value" $name "problem" $problem "fix" $fix) -}}
{{- end -}}
{{- end -}}

{{/* A vLLM rollout that takes the LoRA rank as its max_lora_rank starts only with one of vLLM's ranks (loraVllmRanks). */}}
{{- define "ppo-job.rules.loraVllmRank" -}}
{{- $facts := include "ppo-job.verlFacts" . | fromJson -}}
{{- $ranks := list -}}
{{- range ($facts.loraVllmRanks | default list) }}{{ $ranks = append $ranks (int .) }}{{ end -}}
{{- $rank := int .Values.model.lora.rank -}}
{{- if and $ranks (gt $rank 0) (eq .Values.rollout.name "vllm") (not (has $rank $ranks)) -}}
{{- $above := list -}}
{{- range $ranks }}{{ if gt . $rank }}{{ $above = append $above . }}{{ end }}{{ end -}}
{{- $newest := include "ppo-job.newestVerlWith" (dict "Files" .Files "fact" "loraKeys" "engine" "") -}}
{{- $problem := printf "is not a rank veRL %s's vLLM rollout starts with: it passes it on as max_lora_rank, one of %s"
  (toString .Values.verlVersion) (join ", " $ranks) -}}
{{- $fix := printf "--set ppo-job.model.lora.rank=%v, or --set-string ppo-job.verlVersion=%s with an image of that veRL (it rounds up)"
  (ternary (first $above) (last $ranks) (not (empty $above))) $newest -}}
{{- include "verl-ppo.rule" (dict "state" .state "field" "ppo-job.model.lora.rank" "value" $rank "problem" $problem "fix" $fix) -}}
{{- end -}}
{{- end -}}

{{/* With LoRA the chart sets the actor's engine where the version's default cannot sync the adapter (loraActorStrategy). */}}
{{- define "ppo-job.rules.loraActorStrategy" -}}
{{- $strategy := (include "ppo-job.verlFacts" . | fromJson).loraActorStrategy -}}
{{- if and $strategy (gt (int .Values.model.lora.rank) 0) -}}
{{- range $index, $arg := .Values.extraArgs -}}
{{- if hasPrefix (printf "%s=" (include "ppo-job.actorStrategyKey" $)) $arg -}}
{{- $problem := printf "sets the actor's engine, which the chart sets to %s with LoRA: veRL %s's default (fsdp) syncs an empty adapter to vLLM"
  $strategy (toString $.Values.verlVersion) -}}
{{- $fix := "remove it from ppo-job.extraArgs (docs/sizing.md, the 7B LoRA run)" -}}
{{- include "verl-ppo.rule" (dict "state" $.state "field" (printf "ppo-job.extraArgs[%d]" $index) "value" $arg "problem" $problem "fix" $fix) -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/* The chart composes veRL's FSDP config (ppo_trainer): an engine it lacks (megatron, ...) would read sections that
     config has not, and fail as the workers start (files/verl-versions.yaml fsdpStrategies). */}}
{{- define "ppo-job.rules.fsdpStrategy" -}}
{{- $strategies := (include "ppo-job.verlFacts" . | fromJson).fsdpStrategies | default list -}}
{{- range $index, $arg := .Values.extraArgs -}}
{{- $found := regexFindAll "^(actor_rollout_ref\\.(actor|ref)|critic)\\.strategy=" $arg 1 -}}
{{- $value := trimPrefix (first ($found | default (list ""))) $arg | trim | trimAll "'\"" -}}
{{- if and $strategies $found (not (has $value $strategies)) (not (hasPrefix "${" $value)) -}}
{{- $problem := printf "is not an engine of veRL %s's FSDP config, which the chart composes (it takes %s)"
  (toString $.Values.verlVersion) (join ", " $strategies) -}}
{{- $fix := printf "write %s%s, or remove it from ppo-job.extraArgs" (first $found) (last $strategies) -}}
{{- include "verl-ppo.rule" (dict "state" $.state "field" (printf "ppo-job.extraArgs[%d]" $index) "value" $arg "problem" $problem "fix" $fix) -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/* model.lora.* (nested) is the Megatron engine's LoRA; the chart's FSDP workers read lora_rank (ppo-job.model.lora).
     veRL's trainer still takes a nested rank as LoRA on: the reference would be an actor without adapters (itself),
     and vLLM would wait for adapters that never come. Its merge switch alone is the FSDP engine's too. */}}
{{- define "ppo-job.rules.megatronLora" -}}
{{- range $index, $arg := .Values.extraArgs -}}
{{- $found := regexFindAll "^(actor_rollout_ref|critic)\\.model\\.lora(\\.(rank|adapter_path))?=" $arg 1 -}}
{{- if $found -}}
{{- $values := ternary "ppo-job.critic.lora" "ppo-job.model.lora" (hasPrefix "critic." $arg) -}}
{{- $problem := cat "sets the Megatron engine's LoRA (nested model.lora), which the chart's FSDP workers do not read:"
  "a rank there turns veRL's LoRA paths on with no adapters, an adapter path is ignored" -}}
{{- $fix := printf "remove it from ppo-job.extraArgs; for LoRA: --set %s.rank=<rank, e.g. 32> (and %s.adapterPath)" $values $values -}}
{{- include "verl-ppo.rule" (dict "state" $.state "field" (printf "ppo-job.extraArgs[%d]" $index) "value" $arg "problem" $problem "fix" $fix) -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/* Only the GAE estimator trains a critic: LoRA of the critic given to a critic-free algorithm would be dropped. */}}
{{- define "ppo-job.rules.criticLoraUnused" -}}
{{- $algorithm := include "ppo-job.algorithm" . | fromJson -}}
{{- if and $algorithm (not $algorithm.critic) (gt (int .Values.critic.lora.rank) 0) -}}
{{- $problem := printf "gives the critic LoRA, but %s trains no critic (only the GAE estimator, algorithm ppo, does): it would be ignored"
  $algorithm.name -}}
{{- $fix := "--set ppo-job.critic.lora.rank=0 (LoRA of the actor: ppo-job.model.lora), or --set ppo-job.algorithm.name=ppo" -}}
{{- include "verl-ppo.rule" (dict "state" .state "field" "ppo-job.critic.lora.rank" "value" (int .Values.critic.lora.rank)
  "problem" $problem "fix" $fix) -}}
{{- end -}}
{{- end -}}

{{/* Only the GAE estimator trains a critic: a critic model given to a critic-free algorithm would be dropped. */}}
{{- define "ppo-job.rules.criticModelUnused" -}}
{{- $algorithm := include "ppo-job.algorithm" . | fromJson -}}
{{- with and $algorithm (not $algorithm.critic) .Values.critic.modelPath -}}
{{- $problem := printf "is a critic model, but %s trains no critic (only the GAE estimator, algorithm ppo, does): it would be ignored" $algorithm.name -}}
{{- $fix := "--set ppo-job.critic.modelPath='', or --set ppo-job.algorithm.name=ppo" -}}
{{- include "verl-ppo.rule" (dict "state" $.state "field" "ppo-job.critic.modelPath" "value" . "problem" $problem "fix" $fix) -}}
{{- end -}}
{{- end -}}

{{/* The runtime env replaces the Ray pods' variables for the run: those the chart sets on them (raycluster.ownedEnv,
     PYTHONPATH with the image's veRL and the tracing hook) stay the chart's. TENSORBOARD_DIR is the run's own
     (ppo-job.rules.outputsOnVolume keeps it on the volume). */}}
{{- define "ppo-job.rules.runtimeEnvOwned" -}}
{{- $owned := dict "PYTHONPATH" "raycluster.pythonPath" -}}
{{- with get .present "raycluster" }}{{ $owned = merge (include "raycluster.ownedEnv" (dict "Values" .) | fromJson) $owned }}{{ end -}}
{{- $_ := unset $owned "TENSORBOARD_DIR" -}}
{{- range $name, $_ := .Values.runtimeEnv.env -}}
{{- if hasKey $owned $name -}}
{{- $problem := printf "would replace, for the run, the %s the chart sets on the Ray pods (from %s)" $name (get $owned $name) -}}
{{- $fix := printf "remove it and set %s instead" (get $owned $name) -}}
{{- if eq $name "PYTHONPATH" }}{{ $fix = "remove it and --set raycluster.pythonPath=<your directories, colon-separated> instead" }}{{ end -}}
{{- include "verl-ppo.rule" (dict "state" $.state "field" (printf "ppo-job.runtimeEnv.env.%s" $name) "value" $name "problem" $problem "fix" $fix) -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/* PPO's KL coefficient (algorithm.kl_ctrl.kl_coef) is read by veRLs that have use_kl_in_reward (klInRewardKey) only when
     it or use_kl_loss is on, which PPO leaves off: a coefficient other than the default (0.001, values.yaml; veRL's too)
     would do nothing. */}}
{{- define "ppo-job.rules.klCoefInert" -}}
{{- $algorithm := include "ppo-job.algorithm" . | fromJson -}}
{{- $facts := include "ppo-job.verlFacts" . | fromJson -}}
{{- $coef := .Values.algorithm.klCoef -}}
{{- if and $facts (eq (toString $algorithm.kl) "coef") $facts.klInRewardKey (ne (float64 $coef) 0.001) -}}
{{- $problem := cat (printf "is ignored by veRL %s's PPO, which applies a KL term only with use_kl_in_reward or use_kl_loss," (toString .Values.verlVersion))
  "both off for algorithm ppo" -}}
{{- $fix := "--set ppo-job.algorithm.name=rloo or reinforce++ (KL in the reward) or grpo (KL in the loss), or leave ppo-job.algorithm.klCoef at 0.001" -}}
{{- include "verl-ppo.rule" (dict "state" .state "field" "ppo-job.algorithm.klCoef" "value" $coef "problem" $problem "fix" $fix) -}}
{{- end -}}
{{- end -}}

{{/* LoRA needs a veRL whose workers read it (files/verl-versions.yaml loraKeys): each LoRA value set, for the actor and
     the critic, against the version's keys. */}}
{{- define "ppo-job.rules.loraInVersion" -}}
{{- $facts := include "ppo-job.verlFacts" . | fromJson -}}
{{- if $facts -}}
{{- $keys := $facts.loraKeys | default list -}}
{{- $newest := include "ppo-job.newestVerlWith" (dict "Files" .Files "fact" "loraKeys" "engine" "") -}}
{{- range $model := include "ppo-job.loraModels" . | fromJsonArray -}}
{{- $set := dict "rank" .lora.rank "excludeModules" .lora.excludeModules "adapterPath" .lora.adapterPath -}}
{{- range $name := list "rank" "excludeModules" "adapterPath" -}}
{{- $value := get $set $name -}}
{{- if and $value (not (has $name $keys)) -}}
{{- $problem := printf "is a LoRA setting veRL %s does not read (%s)" (toString $.Values.verlVersion)
  (ternary "it has no LoRA" (printf "it reads %s" (join ", " $keys)) (empty $keys)) -}}
{{- $fix := printf "--set ppo-job.verlVersion=%s with an image of that veRL, or remove it" $newest -}}
{{- $shown := ternary (toJson $value) (toString $value) (kindIs "slice" $value) -}}
{{- include "verl-ppo.rule" (dict "state" $.state "field" (printf "%s.%s" $model.field $name) "value" $shown "problem" $problem "fix" $fix) -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/* An adapter to start from needs LoRA on: veRL would load it (and use the actor without it as the reference) while
     the rank says the whole model trains. */}}
{{- define "ppo-job.rules.loraAdapterNeedsRank" -}}
{{- range $field, $lora := dict "ppo-job.model.lora" .Values.model.lora "ppo-job.critic.lora" .Values.critic.lora -}}
{{- if and $lora.adapterPath (eq (int $lora.rank) 0) -}}
{{- $problem := "is set while the rank is 0 (no LoRA: the whole model trains)" -}}
{{- $fix := printf "--set %s.rank=<the adapter's rank, its adapter_config.json r>, or --set %s.adapterPath=''" $field $field -}}
{{- include "verl-ppo.rule" (dict "state" $.state "field" (printf "%s.adapterPath" $field) "value" $lora.adapterPath
  "problem" $problem "fix" $fix) -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/* LoRA choices made while the rank is 0 would be dropped without a word: modules listed to adapt or to leave out, the
     layered sync (the adapter path has its own rule above). */}}
{{- define "ppo-job.rules.loraChoicesNeedRank" -}}
{{- range $field, $lora := dict "ppo-job.model.lora" .Values.model.lora "ppo-job.critic.lora" .Values.critic.lora -}}
{{- if eq (int $lora.rank) 0 -}}
{{- $made := dict "targetModules" (kindIs "slice" $lora.targetModules) "excludeModules" (not (empty $lora.excludeModules))
  "layeredSummon" (eq (toString $lora.layeredSummon) "true") -}}
{{- range $key := list "targetModules" "excludeModules" "layeredSummon" -}}
{{- if get $made $key -}}
{{- $value := get $lora $key -}}
{{- $problem := "is set while the rank is 0 (no LoRA: the whole model trains), so it would be ignored" -}}
{{- $fix := printf "--set %s.rank=<the adapters' rank, e.g. 32> for LoRA, or remove %s.%s" $field $field $key -}}
{{- include "verl-ppo.rule" (dict "state" $.state "field" (printf "%s.%s" $field $key)
  "value" (ternary (toJson $value) (toString $value) (kindIs "slice" $value)) "problem" $problem "fix" $fix) -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/* The adapter to start from is read on every Ray node: on the shared volume, as the run's outputs are. */}}
{{- define "ppo-job.rules.loraAdapterOnVolume" -}}
{{- $mount := include "verl-ppo.mountPath" . -}}
{{- range $field, $lora := dict "ppo-job.model.lora" .Values.model.lora "ppo-job.critic.lora" .Values.critic.lora -}}
{{- $path := $lora.adapterPath -}}
{{- if and $path (not (include "verl-ppo.onVolume" (dict "ctx" $ "path" $path))) -}}
{{- $problem := printf "is not on the shared volume (%s) once normalised (%s): the Ray nodes cannot read it" $mount (clean $path) -}}
{{- $fix := printf "--set %s.adapterPath=%s/checkpoints/<release>/<experiment>/lora_adapter (a saved adapter: docs/algorithms.md)"
  $field $mount -}}
{{- include "verl-ppo.rule" (dict "state" $.state "field" (printf "%s.adapterPath" $field) "value" $path "problem" $problem "fix" $fix) -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/* Target and excluded modules the model has, where its family is known from its path's last segment
     (files/lora-modules.yaml): peft fails on a module name the model lacks only after the cluster came up. */}}
{{- define "ppo-job.rules.loraModules" -}}
{{- range (include "ppo-job.loraModels" . | fromJsonArray) -}}
{{- $model := . -}}
{{- $name := lower (base (trimSuffix "/" .path)) -}}
{{- range ($.Files.Get "files/lora-modules.yaml" | fromYamlArray) -}}
{{- $family := . -}}
{{- if regexMatch $family.match $name -}}
{{- range $key := list "targetModules" "excludeModules" -}}
{{- $modules := get $model.lora $key -}}
{{- if kindIs "slice" $modules -}}
{{- $unknown := list -}}
{{- range $modules }}{{ if not (has . $family.modules) }}{{ $unknown = append $unknown . }}{{ end }}{{ end -}}
{{- if $unknown -}}
{{- $problem := printf "names %s, which %s models (%s) do not have: they have %s" (join ", " $unknown) $family.family
  $model.path (join ", " $family.modules) -}}
{{- $fix := printf "--set %s.%s=all-linear, or list modules of those above" $model.field $key -}}
{{- include "verl-ppo.rule" (dict "state" $.state "field" (printf "%s.%s" $model.field $key) "value" (toJson $modules)
  "problem" $problem "fix" $fix) -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- end -}}
