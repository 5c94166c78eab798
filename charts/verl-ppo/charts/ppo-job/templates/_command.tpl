{{/*
The veRL command, rendered from values as plain key=value Hydra overrides (never ++key: it hides typos).
*/}}

{{/* The overrides as a JSON list of "key=value" strings. */}}
{{- define "ppo-job.overrides" -}}
{{- $v := .Values -}}
{{- $facts := include "ppo-job.verlFacts" . | fromJson -}}
{{- $algorithm := include "ppo-job.algorithm" . | fromJson -}}
{{- $critic := $facts.criticFsdpKey -}}
{{- $usesCritic := $algorithm.critic | default false -}}
{{- $usesRef := ne (toString $algorithm.kl) "none" -}}
{{- $o := list
  (printf "data.train_files=%s" (include "verl-ppo.hydraValue" $v.data.trainFiles))
  (printf "data.val_files=%s" (include "verl-ppo.hydraValue" $v.data.valFiles))
  (printf "data.train_batch_size=%d" (int $v.data.trainBatchSize))
  (printf "data.max_prompt_length=%d" (int $v.data.maxPromptLength))
  (printf "data.max_response_length=%d" (int $v.data.maxResponseLength))
  (printf "actor_rollout_ref.model.path=%s" (include "verl-ppo.hydraValue" $v.model.path))
  (printf "actor_rollout_ref.actor.optim.lr=%v" $v.actor.lr)
  (printf "actor_rollout_ref.actor.ppo_mini_batch_size=%d" (int $v.actor.ppoMiniBatchSize))
  (printf "actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=%d" (int $v.actor.ppoMicroBatchSizePerGpu))
  (printf "actor_rollout_ref.rollout.name=%s" (include "verl-ppo.hydraValue" $v.rollout.name))
  (printf "actor_rollout_ref.rollout.n=%d" (include "ppo-job.responsesPerPrompt" . | int))
  (printf "actor_rollout_ref.rollout.log_prob_micro_batch_size_per_gpu=%d" (int $v.rollout.logProbMicroBatchSizePerGpu))
  (printf "actor_rollout_ref.rollout.tensor_model_parallel_size=%d" (int $v.rollout.tensorModelParallelSize))
  (printf "actor_rollout_ref.rollout.gpu_memory_utilization=%v" $v.rollout.gpuMemoryUtilization)
-}}
{{- if $usesRef }}{{ $o = append $o (printf "actor_rollout_ref.ref.log_prob_micro_batch_size_per_gpu=%d" (int $v.ref.logProbMicroBatchSizePerGpu)) }}{{ end -}}
{{- if $usesCritic }}
{{- $o = concat $o (list
  (printf "critic.optim.lr=%v" $v.critic.lr)
  (printf "critic.model.path=%s" (include "verl-ppo.hydraValue" (default $v.model.path $v.critic.modelPath)))
  (printf "critic.ppo_micro_batch_size_per_gpu=%d" (int $v.critic.ppoMicroBatchSizePerGpu))) }}
{{- end }}
{{- if has $algorithm.kl (list "coef" "reward") }}{{ $o = append $o (printf "algorithm.kl_ctrl.kl_coef=%v" $v.algorithm.klCoef) }}{{ end -}}
{{- $o = concat $o (list
  (printf "trainer.logger=%s" (toJson (ternary (append $v.trainer.logger "tensorboard" | uniq) $v.trainer.logger
    (include "verl-ppo.tensorboardEnabled" . | eq "true"))))
  (printf "trainer.project_name=%s" (include "verl-ppo.hydraValue" $v.trainer.projectName))
  (printf "trainer.experiment_name=%s" (include "verl-ppo.hydraValue" $v.trainer.experimentName))
  "trainer.default_hdfs_dir=null"
  (printf "trainer.default_local_dir=%s" (include "verl-ppo.hydraValue" (include "verl-ppo.checkpointDir" .)))
  (printf "trainer.resume_mode=%s" (include "verl-ppo.hydraValue" $v.trainer.resumeMode))
  (printf "trainer.n_gpus_per_node=%d" (include "verl-ppo.gpusPerNode" . | int))
  (printf "trainer.nnodes=%d" (include "verl-ppo.gpuNodes" . | int))
  (printf "trainer.save_freq=%d" (int $v.trainer.saveFreq))
  (printf "trainer.test_freq=%d" (int $v.trainer.testFreq))
  (printf "trainer.total_epochs=%d" (int $v.trainer.totalEpochs))) -}}
{{- if $v.actor.useDynamicBsz }}
{{- /* The rollout's, the reference's and the critic's use_dynamic_bsz follow the actor's in every version. */}}
{{- $o = concat $o (list
  "actor_rollout_ref.actor.use_dynamic_bsz=true"
  (printf "actor_rollout_ref.actor.ppo_max_token_len_per_gpu=%d" (int $v.actor.ppoMaxTokenLenPerGpu))
  (printf "actor_rollout_ref.rollout.log_prob_max_token_len_per_gpu=%d" (int $v.rollout.logProbMaxTokenLenPerGpu))) }}
{{- if $usesRef }}{{ $o = append $o (printf "actor_rollout_ref.ref.log_prob_max_token_len_per_gpu=%d" (int $v.ref.logProbMaxTokenLenPerGpu)) }}{{ end }}
{{- if $usesCritic }}{{ $o = concat $o (list
  (printf "critic.ppo_max_token_len_per_gpu=%d" (int $v.critic.ppoMaxTokenLenPerGpu))
  (printf "%s=%d" $facts.criticForwardBudgetKey (int $v.critic.forwardMaxTokenLenPerGpu))) }}{{ end }}
{{- end }}
{{- if not $v.model.enableGradientCheckpointing }}
{{- $o = append $o "actor_rollout_ref.model.enable_gradient_checkpointing=false" }}
{{- if $usesCritic }}{{ $o = append $o "critic.model.enable_gradient_checkpointing=false" }}{{ end }}
{{- end }}
{{- if $v.actor.paramOffload }}{{ $o = append $o "actor_rollout_ref.actor.fsdp_config.param_offload=true" }}{{ end }}
{{- if $v.actor.optimizerOffload }}{{ $o = append $o "actor_rollout_ref.actor.fsdp_config.optimizer_offload=true" }}{{ end }}
{{- if and $usesRef $v.ref.paramOffload }}{{ $o = append $o "actor_rollout_ref.ref.fsdp_config.param_offload=true" }}{{ end }}
{{- if and $usesCritic $v.critic.paramOffload }}{{ $o = append $o (printf "%s.param_offload=true" $critic) }}{{ end }}
{{- if and $usesCritic $v.critic.optimizerOffload }}{{ $o = append $o (printf "%s.optimizer_offload=true" $critic) }}{{ end }}
{{- $o = concat $o (include "ppo-job.loraOverrides" . | fromJsonArray) }}
{{- if $facts.rewardRolloutName }}{{ $o = append $o (printf "reward.reward_model.rollout.name=%s" (include "verl-ppo.hydraValue" $v.rollout.name)) }}{{ end }}
{{- with $facts.rolloutMode }}{{ $o = append $o (printf "actor_rollout_ref.rollout.mode=%s" .) }}{{ end }}
{{- with $facts.trainerModeKey }}{{ $o = append $o (printf "%s=%s" . $v.trainer.mode) }}{{ end }}
{{- if eq $v.trainer.mode "separate_async" }}{{ $o = concat $o (include "ppo-job.separateAsyncOverrides" . | fromJsonArray) }}{{ end }}
{{- $o = concat $o (include "ppo-job.replayBufferOverrides" . | fromJsonArray) }}
{{- if include "ppo-job.finalOutputOnly" . }}
{{- $o = append $o (printf "+actor_rollout_ref.rollout.agent.agent_loop_manager_class=%s.FinalOutputAgentLoopManager" (include "ppo-job.pluginsModule" .)) }}
{{- end }}
{{- $o = concat $o (include "ppo-job.rolloutMetricsOverrides" . | fromJsonArray) }}
{{- if not (kindIs "invalid" $v.trainer.maxCheckpointsToKeep) }}
{{- $o = append $o (printf "trainer.max_actor_ckpt_to_keep=%d" (int $v.trainer.maxCheckpointsToKeep)) }}
{{- if $usesCritic }}{{ $o = append $o (printf "trainer.max_critic_ckpt_to_keep=%d" (int $v.trainer.maxCheckpointsToKeep)) }}{{ end }}
{{- end }}
{{- $o = concat $o (include "ppo-job.algorithmOverrides" . | fromJsonArray) }}
{{- with $v.reward.functionPath }}
{{- $o = concat $o (list
  (printf "%s.path=%s" $facts.customRewardKey (include "verl-ppo.hydraValue" .))
  (printf "%s.name=%s" $facts.customRewardKey (include "verl-ppo.hydraValue" $v.reward.functionName))) }}
{{- end }}
{{- concat $o ($v.extraArgs | default list) | toJson -}}
{{- end -}}

{{/* separate_async's keys (veRL 0.9.1, JSON list): no rollout replicas on the training GPUs (hybrid_engine=false), so
     veRL runs them all on a pool of the rollout pool's size (global.rolloutPool); how the weights reach it (veRL refuses
     its default, naive, here) and after how many training steps. */}}
{{- define "ppo-job.separateAsyncOverrides" -}}
{{- $separate := .Values.trainer.separateAsync -}}
{{- list "actor_rollout_ref.hybrid_engine=false"
  (printf "actor_rollout_ref.rollout.nnodes=%d" (include "verl-ppo.rolloutPoolNodes" . | int))
  (printf "actor_rollout_ref.rollout.n_gpus_per_node=%d" (include "verl-ppo.rolloutPoolGpusPerNode" . | int))
  (printf "actor_rollout_ref.rollout.checkpoint_engine.backend=%s" $separate.weightSyncBackend)
  (printf "trainer.v1.separate_async.parameter_sync_step=%d" (int $separate.parameterSyncStep)) | toJson -}}
{{- end -}}

{{/* What the chosen algorithm sets beyond the values every run renders (JSON list; empty for PPO, whose
     GAE estimator and KL coefficient are veRL's defaults and the seed's run). */}}
{{- define "ppo-job.algorithmOverrides" -}}
{{- $algorithm := include "ppo-job.algorithm" . | fromJson -}}
{{- $facts := include "ppo-job.verlFacts" . | fromJson -}}
{{- $o := list -}}
{{- if ne $algorithm.name "ppo" -}}
{{- $o = append $o (printf "algorithm.adv_estimator=%s" $algorithm.estimator) -}}
{{- $o = append $o (printf "actor_rollout_ref.actor.use_kl_loss=%t" (eq $algorithm.kl "loss")) -}}
{{- if eq $algorithm.kl "loss" -}}
{{- $o = concat $o (list (printf "actor_rollout_ref.actor.kl_loss_coef=%v" .Values.algorithm.klCoef) "actor_rollout_ref.actor.kl_loss_type=low_var_kl") -}}
{{- end -}}
{{- if $facts.klInRewardKey }}{{ $o = append $o (printf "algorithm.use_kl_in_reward=%t" (eq $algorithm.kl "reward")) }}{{ end -}}
{{- end -}}
{{- concat $o ($algorithm.overrides | default list) | toJson -}}
{{- end -}}

{{/* "true" where the run takes its finished samples through the chart's replay buffer (files/verl_plugins.py, polled
     every trainer.rolloutPollSeconds): the version's trainer polls a replay buffer (its quickPollSampler fact) and the
     value is not null; else "". */}}
{{- define "ppo-job.quickPoll" -}}
{{- $facts := include "ppo-job.verlFacts" . | fromJson -}}
{{- if and $facts.quickPollSampler (not (kindIs "invalid" .Values.trainer.rolloutPollSeconds)) }}true{{ end -}}
{{- end -}}

{{/* "true" where the rollout asks vLLM for each sample's final output only through the chart's agent loop manager
     (files/verl_plugins.py): the value is on and the version takes the manager's class by name (its finalOutputRollouts
     fact names engines); the rulebook refuses the value elsewhere, and with another engine. Else "". */}}
{{- define "ppo-job.finalOutputOnly" -}}
{{- $facts := include "ppo-job.verlFacts" . | fromJson -}}
{{- if and $facts.finalOutputRollouts .Values.rollout.finalOutputOnly }}true{{ end -}}
{{- end -}}

{{/* "true" where the run needs the chart's plug-ins (files/verl_plugins.py): the quick-poll replay buffer or the
     final-output agent loop manager; else "". */}}
{{- define "ppo-job.plugins" -}}
{{- if or (include "ppo-job.quickPoll" .) (include "ppo-job.finalOutputOnly" .) }}true{{ end -}}
{{- end -}}

{{/* The plug-ins' module name on the Ray nodes: its file's name in the ConfigMap, which the submitter ships to the run
     as a Ray py_modules package of that name (VERL_PPO_RUN_MODULE), and veRL imports by that name. */}}
{{- define "ppo-job.pluginsModule" -}}verl_ppo_plugins{{- end -}}

{{/* The chart's replay buffer in veRL's keys (JSON list; empty where ppo-job.quickPoll is off): veRL loads it through
     custom_sampler and hands it sampler_kwargs, which its YAML leaves empty (so each is added, +). It passes a custom
     sampler none of what it gives its own: the algorithm's replayBufferKwargs (files/algorithms.yaml) hand them on. */}}
{{- define "ppo-job.replayBufferOverrides" -}}
{{- $o := list -}}
{{- if include "ppo-job.quickPoll" . -}}
{{- $algorithm := include "ppo-job.algorithm" . | fromJson -}}
{{- $kwargs := list (printf "poll_interval_s=%v" .Values.trainer.rolloutPollSeconds) -}}
{{- if include "ppo-job.pinsPools" . -}}
{{- range $side, $name := include "verl-ppo.poolResources" . | fromJson -}}
{{- $kwargs = append $kwargs (printf "%s_resource=%s" $side $name) -}}
{{- end -}}
{{- end -}}
{{- with $algorithm.replayBufferKwargs }}
{{- $kwargs = concat $kwargs . (list (printf "train_batch_size=%d" (int $.Values.data.trainBatchSize))) -}}
{{- end }}
{{- $o = list (printf "trainer.v1.sampler.custom_sampler.path=pkg://%s" (include "ppo-job.pluginsModule" .))
  "trainer.v1.sampler.custom_sampler.name=quick_poll_replay_buffer" -}}
{{- range $kwargs }}{{ $o = append $o (printf "+trainer.v1.sampler.sampler_kwargs.%s" .) }}{{ end -}}
{{- end -}}
{{- toJson $o -}}
{{- end -}}

{{/* "true" where the chart's plug-ins pin veRL's pools to this release's groups (verl-ppo.poolResources): the rollout on
     the pool (separate_async) of this release's RayCluster (not another cluster's, ppo-job.dashboardURL, whose nodes
     have no such resources). */}}
{{- define "ppo-job.pinsPools" -}}
{{- if and (include "ppo-job.rolloutOnPool" .) (not .Values.dashboardURL) }}true{{ end -}}
{{- end -}}

{{/* The trained models with LoRA on (rank above 0), each as {lora, model (its Hydra prefix), fsdp (its FSDP settings' key)}:
     the actor's, and the critic's where the algorithm trains one. A JSON list. */}}
{{- define "ppo-job.loraModels" -}}
{{- $facts := include "ppo-job.verlFacts" . | fromJson -}}
{{- $models := list -}}
{{- if gt (int .Values.model.lora.rank) 0 }}
{{- $models = append $models (dict "field" "ppo-job.model.lora" "lora" .Values.model.lora "path" .Values.model.path
  "model" "actor_rollout_ref.model" "fsdp" "actor_rollout_ref.actor.fsdp_config") }}
{{- end }}
{{- if and ((include "ppo-job.algorithm" . | fromJson).critic | default false) (gt (int .Values.critic.lora.rank) 0) }}
{{- $models = append $models (dict "field" "ppo-job.critic.lora" "lora" .Values.critic.lora
  "path" (default .Values.model.path .Values.critic.modelPath) "model" "critic.model" "fsdp" $facts.criticFsdpKey) }}
{{- end }}
{{- toJson $models -}}
{{- end -}}

{{/* A target module list as Hydra reads it: all-linear as it is, a list as [a,b] (the schema admits module names only). */}}
{{- define "ppo-job.loraModules" -}}
{{- if kindIs "string" . }}{{ . }}{{ else }}[{{ join "," . }}]{{ end -}}
{{- end -}}

{{/* The actor's FSDP engine's key (files/verl-versions.yaml loraActorStrategy): rendered with LoRA, the user's else. */}}
{{- define "ppo-job.actorStrategyKey" -}}actor_rollout_ref.actor.strategy{{- end -}}

{{/* LoRA to the keys the chosen veRL reads (files/verl-versions.yaml loraKeys; the rulebook refuses what it lacks), the
     frozen base in bf16 where the version can say so, and what veRL's LoRA guide requires of the rollout: vLLM loads
     the base from the model's safetensors (its default, dummy weights, would never receive them: only the adapter is
     synced), and the actor's FSDP engine where the version's default cannot sync the adapter (loraActorStrategy).
     A JSON list. */}}
{{- define "ppo-job.loraOverrides" -}}
{{- $facts := include "ppo-job.verlFacts" . | fromJson -}}
{{- $keys := $facts.loraKeys | default list -}}
{{- $o := list -}}
{{- range (include "ppo-job.loraModels" . | fromJsonArray) }}
{{- if has "rank" $keys }}
{{- $o = concat $o (list (printf "%s.lora_rank=%d" .model (int .lora.rank)) (printf "%s.lora_alpha=%d" .model (int .lora.alpha))
  (printf "%s.target_modules=%s" .model (include "ppo-job.loraModules" .lora.targetModules))) }}
{{- if and .lora.excludeModules (has "excludeModules" $keys) }}
{{- /* veRL 0.9.1 declares text (peft: a regular expression the whole module name matches), not a list. */}}
{{- $pattern := printf ".*[.](%s)" (join "|" .lora.excludeModules) -}}
{{- $o = append $o (printf "%s.exclude_modules=%s" .model (include "verl-ppo.hydraValue" $pattern)) }}
{{- end }}
{{- if and .lora.adapterPath (has "adapterPath" $keys) }}
{{- $o = append $o (printf "%s.lora_adapter_path=%s" .model (include "verl-ppo.hydraValue" .lora.adapterPath)) }}
{{- end }}
{{- if $facts.loraBaseDtype }}{{ $o = append $o (printf "%s.model_dtype=bf16" .fsdp) }}{{ end }}
{{- end }}
{{- end }}
{{- if and (gt (int .Values.model.lora.rank) 0) (has "rank" $keys) }}
{{- $o = append $o "actor_rollout_ref.rollout.load_format=safetensors" }}
{{- with $facts.loraActorStrategy }}{{ $o = append $o (printf "%s=%s" (include "ppo-job.actorStrategyKey" $) .) }}{{ end }}
{{- if .Values.model.lora.layeredSummon }}{{ $o = append $o "actor_rollout_ref.rollout.layered_summon=true" }}{{ end }}
{{- end }}
{{- toJson $o -}}
{{- end -}}

{{/* The Ray job's entrypoint: one shell line, every override quoted as one word. */}}
{{- define "ppo-job.entrypoint" -}}
{{- $words := list "python3" "-m" .Values.entrypointModule -}}
{{- range (include "ppo-job.overrides" . | fromJsonArray) }}
{{- $words = append $words (include "verl-ppo.shellQuote" .) }}
{{- end }}
{{- join " " $words -}}
{{- end -}}

{{/* Ray runtime_env: environment variables, and a working_dir only when asked for (the code is in the image). */}}
{{- define "ppo-job.runtimeEnv" -}}
{{- $env := dict -}}
{{- range $name, $value := .Values.runtimeEnv.env }}
{{- $_ := set $env $name (include "verl-ppo.scalar" $value) }}
{{- end }}
{{- if and (include "verl-ppo.tensorboardEnabled" .) (not (hasKey $env "TENSORBOARD_DIR")) }}
{{- /* One directory per experiment under the release's: TensorBoard shows each as a run of its own. */}}
{{- $_ := set $env "TENSORBOARD_DIR" (printf "%s/%s/%s" (include "verl-ppo.tensorboardDir" .) .Values.trainer.projectName .Values.trainer.experimentName) }}
{{- end }}
{{- $runtimeEnv := dict "env_vars" $env -}}
{{- with .Values.runtimeEnv.workingDir }}
{{- $_ := set $runtimeEnv "working_dir" . }}
{{- end }}
{{- toJson $runtimeEnv -}}
{{- end -}}
