{{/*
The veRL command, rendered from values as plain key=value Hydra overrides (never ++key: it hides typos).
*/}}

{{/* What differs between the supported veRL versions (JSON): where the critic's FSDP settings live,
     and whether the reward model's rollout engine is a mandatory value (??? since 0.9). */}}
{{- define "ppo-job.verlFacts" -}}
{{- $byVersion := dict
  "0.3.0.post1" (dict "criticFsdpKey" "critic.model.fsdp_config" "rewardRolloutName" false)
  "0.4.1" (dict "criticFsdpKey" "critic.model.fsdp_config" "rewardRolloutName" false)
  "0.9.1" (dict "criticFsdpKey" "critic.fsdp" "rewardRolloutName" true) -}}
{{- get $byVersion (toString .Values.verlVersion) | default dict | toJson -}}
{{- end -}}

{{/* The overrides as a JSON list of "key=value" strings. */}}
{{- define "ppo-job.overrides" -}}
{{- $v := .Values -}}
{{- $facts := include "ppo-job.verlFacts" . | fromJson -}}
{{- $critic := $facts.criticFsdpKey -}}
{{- $o := list
  (printf "data.train_files=%s" $v.data.trainFiles)
  (printf "data.val_files=%s" $v.data.valFiles)
  (printf "data.train_batch_size=%d" (int $v.data.trainBatchSize))
  (printf "data.max_prompt_length=%d" (int $v.data.maxPromptLength))
  (printf "data.max_response_length=%d" (int $v.data.maxResponseLength))
  (printf "actor_rollout_ref.model.path=%s" $v.model.path)
  (printf "actor_rollout_ref.actor.optim.lr=%v" $v.actor.lr)
  (printf "actor_rollout_ref.actor.ppo_mini_batch_size=%d" (int $v.actor.ppoMiniBatchSize))
  (printf "actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=%d" (int $v.actor.ppoMicroBatchSizePerGpu))
  (printf "actor_rollout_ref.rollout.name=%s" $v.rollout.name)
  (printf "actor_rollout_ref.rollout.n=%d" (int $v.rollout.responsesPerPrompt))
  (printf "actor_rollout_ref.rollout.log_prob_micro_batch_size_per_gpu=%d" (int $v.rollout.logProbMicroBatchSizePerGpu))
  (printf "actor_rollout_ref.rollout.tensor_model_parallel_size=%d" (int $v.rollout.tensorModelParallelSize))
  (printf "actor_rollout_ref.rollout.gpu_memory_utilization=%v" $v.rollout.gpuMemoryUtilization)
  (printf "actor_rollout_ref.ref.log_prob_micro_batch_size_per_gpu=%d" (int $v.ref.logProbMicroBatchSizePerGpu))
  (printf "critic.optim.lr=%v" $v.critic.lr)
  (printf "critic.model.path=%s" (default $v.model.path $v.critic.modelPath))
  (printf "critic.ppo_micro_batch_size_per_gpu=%d" (int $v.critic.ppoMicroBatchSizePerGpu))
  (printf "algorithm.kl_ctrl.kl_coef=%v" $v.algorithm.klCoef)
  (printf "trainer.logger=%s" (toJson (ternary (append $v.trainer.logger "tensorboard" | uniq) $v.trainer.logger (include "verl-ppo.tensorboardEnabled" . | eq "true"))))
  (printf "trainer.project_name=%s" $v.trainer.projectName)
  (printf "trainer.experiment_name=%s" $v.trainer.experimentName)
  "trainer.default_hdfs_dir=null"
  (printf "trainer.default_local_dir=%s" (include "verl-ppo.checkpointDir" .))
  (printf "trainer.resume_mode=%s" $v.trainer.resumeMode)
  (printf "trainer.n_gpus_per_node=%d" (include "verl-ppo.gpusPerNode" . | int))
  (printf "trainer.nnodes=%d" (include "verl-ppo.gpuNodes" . | int))
  (printf "trainer.save_freq=%d" (int $v.trainer.saveFreq))
  (printf "trainer.test_freq=%d" (int $v.trainer.testFreq))
  (printf "trainer.total_epochs=%d" (int $v.trainer.totalEpochs))
-}}
{{- if $v.actor.useDynamicBsz }}
{{- $o = concat $o (list
  "actor_rollout_ref.actor.use_dynamic_bsz=true"
  (printf "actor_rollout_ref.actor.ppo_max_token_len_per_gpu=%d" (int $v.actor.ppoMaxTokenLenPerGpu))
  (printf "critic.ppo_max_token_len_per_gpu=%d" (int $v.critic.ppoMaxTokenLenPerGpu))) }}
{{- end }}
{{- if $v.actor.paramOffload }}{{ $o = append $o "actor_rollout_ref.actor.fsdp_config.param_offload=true" }}{{ end }}
{{- if $v.actor.optimizerOffload }}{{ $o = append $o "actor_rollout_ref.actor.fsdp_config.optimizer_offload=true" }}{{ end }}
{{- if $v.ref.paramOffload }}{{ $o = append $o "actor_rollout_ref.ref.fsdp_config.param_offload=true" }}{{ end }}
{{- if $v.critic.paramOffload }}{{ $o = append $o (printf "%s.param_offload=true" $critic) }}{{ end }}
{{- if $v.critic.optimizerOffload }}{{ $o = append $o (printf "%s.optimizer_offload=true" $critic) }}{{ end }}
{{- if $facts.rewardRolloutName }}{{ $o = append $o (printf "reward.reward_model.rollout.name=%s" $v.rollout.name) }}{{ end }}
{{- if not (kindIs "invalid" $v.trainer.maxCheckpointsToKeep) }}
{{- $o = concat $o (list
  (printf "trainer.max_actor_ckpt_to_keep=%d" (int $v.trainer.maxCheckpointsToKeep))
  (printf "trainer.max_critic_ckpt_to_keep=%d" (int $v.trainer.maxCheckpointsToKeep))) }}
{{- end }}
{{- concat $o ($v.extraArgs | default list) | toJson -}}
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
{{- $_ := set $env $name (toString $value) }}
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
