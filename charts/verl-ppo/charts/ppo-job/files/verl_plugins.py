"""The chart's plug-ins for veRL 0.9's default trainer (trainer.use_v1), each behind a value of its own. The submitter
ships this file with the run as the py_modules package verl_ppo_plugins; veRL imports it by the names the chart
renders, on the Ray nodes that need it. veRL's modules are imported where a plug-in is built, so loading one plug-in
never needs what another one uses.

1. A replay buffer polled for finished samples every 50 ms instead of every 2 s (ppo-job.trainer.rolloutPollSeconds).
   veRL's trainer hands the rollout's finished samples to training through a replay buffer that looks for them every
   `poll_interval` seconds, 2.0 by default and not a config key: a rollout that finishes just after a look waits up
   to 2 s more (measured: every `timing_s/gen` of a 0.5B run was a multiple of 2 s plus 0.1 s). veRL loads a replay
   buffer of the user's choice from `trainer.v1.sampler.custom_sampler.{path,name}` (pkg://verl_ppo_plugins,
   quick_poll_replay_buffer): this one is veRL's own classes with the shorter interval. veRL passes a custom sampler
   fewer arguments than its own (no group filtering, batch sizes): the chart sets them in
   `trainer.v1.sampler.sampler_kwargs` where the run needs them (DAPO: files/algorithms.yaml replayBufferKwargs),
   with the interval as poll_interval_s, and they are handed on here.

2. The rollout's samples asked of vLLM as their final output only (ppo-job.rollout.finalOutputOnly). veRL's vLLM
   server reads only a request's last output, but asks for vLLM's default, the whole output so far after every
   token: on one H200 that costs 1.37 s of 5.02 for a 1.5B model's 256 x 256 tokens (docs/sizing.md). veRL builds
   the sampling settings in its agent loop workers and offers no key for them; it does take the agent loop
   manager's class by name (`rollout.agent.agent_loop_manager_class`), and the manager names its workers' class.
   The manager here starts veRL's own workers with one change: every request asks for the final output only.
   Only with the sync trainer: veRL's server counts a request as admitted at its first output, and the async modes'
   weight sync waits for admissions to end (the rulebook refuses the other modes).

3. veRL's pools pinned to the chart's worker groups (separate_async with the rollout pool). veRL places its training
   pool and each rollout replica by Ray placement groups that ask only for CPUs and GPUs, so a training group may
   land on a pool node of as many GPUs. veRL's resource pool puts a bundle demand of 1e-4 of its `accelerator_type`,
   which nothing in veRL sets; this sets it by the pool's name, to the Ray resource the chart gives each worker group
   (sampler_kwargs training_resource and rollout_resource): `global_pool` on the training nodes, `rollout_pool_<n>`
   on the pool's. veRL builds the replay buffer before any resource pool, so the buffer's factory sets this first.
"""


from __future__ import annotations

import re
import time

from typing import Any

# Seconds between looks for finished samples; each look reads the TransferQueue's metadata (a few ms).
POLL_INTERVAL_S = 0.05
# What veRL's trainer gives its built-in replay buffer but not a custom one, read from sampler_kwargs.
HANDED_ON = ("filter_groups_metric", "train_batch_size", "gen_batch_size", "max_inflight_gen_batches",
             "sync_refill_failed_groups")
# The step metric of the trainer's wait for a whole batch of finished samples: the rollout's own time to
# within one poll, part of veRL's `timing_s/gen`, which also puts the rollout engine to sleep. Named as veRL
# names its timers, so that veRL sums it over the iterations of a step as it sums theirs.
WAIT_METRIC = "timing_s/rollout_wait"


def timed(buffer_class: type) -> type:
    """The buffer class whose sample() also reports how long it waited (WAIT_METRIC)."""

    class TimedReplayBuffer(buffer_class):
        def sample(self, global_steps: int, partition_id: str, batch_size: int):
            start = time.monotonic()
            batch, metrics = super().sample(global_steps=global_steps, partition_id=partition_id,
                                            batch_size=batch_size)
            return batch, {**metrics, WAIT_METRIC: time.monotonic() - start}

    TimedReplayBuffer.__name__ = f"Timed{buffer_class.__name__}"
    return TimedReplayBuffer


# veRL's names of its resource pools: the training pool, and each rollout replica's (rollout_pool_<rank><suffix>; a
# reward model's or teacher's replicas are rollout_pool_reward_... and rollout_pool_teacher_..., left as they are).
TRAINING_POOL = re.compile(r"global_pool")
ROLLOUT_POOL = re.compile(r"rollout_pool_[0-9].*")


def pinned_pools(pool_class: type, training_resource: str, rollout_resource: str) -> None:
    """Sets, on every pool_class (veRL's RayResourcePool) made from now on whose name is the training pool's or a
    rollout replica's, the Ray resource its bundles then demand (veRL's accelerator_type, 1e-4 a bundle)."""
    made = pool_class.__init__

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        made(self, *args, **kwargs)
        if self.accelerator_type is None:
            if TRAINING_POOL.fullmatch(self.name_prefix):
                self.accelerator_type = training_resource
            elif ROLLOUT_POOL.fullmatch(self.name_prefix):
                self.accelerator_type = rollout_resource

    pool_class.__init__ = __init__


def quick_poll_replay_buffer(**arguments) -> Any:
    """The replay buffer veRL would build for the trainer mode (sync or async), polling every POLL_INTERVAL_S; first,
    where the chart names the groups' Ray resources, veRL's pools pinned to them (pinned_pools)."""
    from verl.trainer.ppo.v1.replay_buffer import ReplayBuffer, ReplayBufferAsync

    options = dict(arguments.get("sampler_kwargs") or {})
    training_resource, rollout_resource = options.pop("training_resource", None), options.pop("rollout_resource", None)
    if training_resource and rollout_resource:
        from verl.single_controller.ray.base import RayResourcePool

        pinned_pools(RayResourcePool, str(training_resource), str(rollout_resource))
    arguments["poll_interval"] = float(options.pop("poll_interval_s", POLL_INTERVAL_S))
    arguments.update({key: options[key] for key in HANDED_ON if key in options})
    buffer_class = ReplayBuffer if arguments["trainer_mode"] == "sync" else ReplayBufferAsync
    return timed(buffer_class)(**arguments)


def actor_class_origin(actor_class: Any) -> type:
    """The plain class a Ray actor class (@ray.remote) was made from: Ray forbids subclassing the actor class."""
    return actor_class.__ray_metadata__.modified_class.__ray_actor_class__


def final_output_workers(worker_class: type) -> type:
    """veRL's agent loop worker class, each agent loop's sampling settings asking vLLM for the final output only."""

    class FinalOutputAgentLoopWorker(worker_class):
        async def _run_agent_loop(self, sampling_params: dict[str, Any], *args: Any, **kwargs: Any) -> Any:
            from vllm.sampling_params import RequestOutputKind

            final_only = {**sampling_params, "output_kind": RequestOutputKind.FINAL_ONLY}
            return await super()._run_agent_loop(final_only, *args, **kwargs)

    FinalOutputAgentLoopWorker.__name__ = FinalOutputAgentLoopWorker.__qualname__ = "FinalOutputAgentLoopWorker"
    return FinalOutputAgentLoopWorker


def __getattr__(name: str) -> Any:
    """FinalOutputAgentLoopManager, which veRL loads by name (rollout.agent.agent_loop_manager_class), built when asked
    for: the manager veRL would start (AgentLoopManagerTQ), its workers FinalOutputAgentLoopWorker."""
    if name != "FinalOutputAgentLoopManager":
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import ray
    from verl.trainer.ppo.v1 import AgentLoopManagerTQ, AgentLoopWorkerTQ

    workers = ray.remote(final_output_workers(actor_class_origin(AgentLoopWorkerTQ)))

    class FinalOutputAgentLoopManager(AgentLoopManagerTQ):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            # veRL's manager sets its workers' class in __init__ and starts them in create(), after __init__.
            self.agent_loop_workers_class = workers

    globals()[name] = FinalOutputAgentLoopManager
    return FinalOutputAgentLoopManager
