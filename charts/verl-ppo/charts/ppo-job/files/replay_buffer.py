"""veRL's own replay buffer, polled for finished samples every 50 ms instead of every 2 s.

veRL 0.9's default trainer (trainer.use_v1) hands the rollout's finished samples to training through a
replay buffer that looks for them every `poll_interval` seconds, 2.0 by default and not a config key: a
rollout that finishes just after a look waits up to 2 s more (measured: every `timing_s/gen` of a 0.5B run
was a multiple of 2 s plus 0.1 s). veRL loads a replay buffer of the user's choice from
`trainer.v1.sampler.custom_sampler.{path,name}`; this one is veRL's own classes with the shorter interval.
The chart renders those keys for the veRL versions whose facts say so (quickPollSampler in verl-versions.yaml)
unless ppo-job.trainer.rolloutPollSeconds is null; the submitter ships this file with the run as the py_modules
package verl_ppo_replay_buffer, which veRL imports as pkg://verl_ppo_replay_buffer on the node that trains.

veRL passes a custom sampler fewer arguments than its own (no group filtering, batch sizes): the chart sets
them in `trainer.v1.sampler.sampler_kwargs` where the run needs them (DAPO: files/algorithms.yaml
replayBufferKwargs), with the interval as poll_interval_s, and they are handed on here.
"""

from __future__ import annotations

import time

from verl.trainer.ppo.v1.replay_buffer import ReplayBuffer, ReplayBufferAsync

# Seconds between looks for finished samples; each look reads the TransferQueue's metadata (a few ms).
POLL_INTERVAL_S = 0.05
# What veRL's trainer gives its built-in replay buffer but not a custom one, read from sampler_kwargs.
HANDED_ON = ("filter_groups_metric", "train_batch_size", "gen_batch_size", "max_inflight_gen_batches",
             "sync_refill_failed_groups")
# The step metric of the trainer's wait for a whole batch of finished samples: the rollout's own time to
# within one poll, part of veRL's `timing_s/gen`, which also puts the rollout engine to sleep. Named as veRL
# names its timers, so that veRL sums it over the iterations of a step as it sums theirs.
WAIT_METRIC = "timing_s/rollout_wait"


def timed(buffer_class: type[ReplayBuffer]) -> type[ReplayBuffer]:
    """The buffer class whose sample() also reports how long it waited (WAIT_METRIC)."""

    class TimedReplayBuffer(buffer_class):
        def sample(self, global_steps: int, partition_id: str, batch_size: int):
            start = time.monotonic()
            batch, metrics = super().sample(global_steps=global_steps, partition_id=partition_id,
                                            batch_size=batch_size)
            return batch, {**metrics, WAIT_METRIC: time.monotonic() - start}

    TimedReplayBuffer.__name__ = f"Timed{buffer_class.__name__}"
    return TimedReplayBuffer


def quick_poll_replay_buffer(**arguments) -> ReplayBuffer:
    """The replay buffer veRL would build for the trainer mode (sync or async), polling every POLL_INTERVAL_S."""
    options = dict(arguments.get("sampler_kwargs") or {})
    arguments["poll_interval"] = float(options.pop("poll_interval_s", POLL_INTERVAL_S))
    arguments.update({key: options[key] for key in HANDED_ON if key in options})
    buffer_class = ReplayBuffer if arguments["trainer_mode"] == "sync" else ReplayBufferAsync
    return timed(buffer_class)(**arguments)
