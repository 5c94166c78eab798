"""What a sizing is for and what it decides: the run (batch, lengths, algorithm's shape) and the settings, apart from
the rules (generator/sizing.py) so the memory model (generator/memory.py) can read both without reading the rules."""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache

import yaml

from generator import paths

# Share of a node's allocatable CPU and memory a Ray pod asks for (the rest: kubelet, daemon sets).
RESOURCE_SHARE = 0.8


@dataclass(frozen=True)
class GuideRun:
    """The vendor guide's batch and lengths: ppo-job's defaults, where every values file starts."""

    train_batch_size: int
    ppo_mini_batch_size: int
    max_prompt_length: int
    max_response_length: int
    rollout_engine: str  # rollout.name: every values file keeps it

    @property
    def sequence_length(self) -> int:
        return self.max_prompt_length + self.max_response_length


@lru_cache(maxsize=1)
def guide_run() -> GuideRun:
    """Read from ppo-job's values.yaml as plain YAML: the chart holds the figures, the sizing scales them."""
    job = yaml.safe_load((paths.subchart_dir("ppo-job") / "values.yaml").read_text())
    return GuideRun(job["data"]["trainBatchSize"], job["actor"]["ppoMiniBatchSize"], job["data"]["maxPromptLength"],
                    job["data"]["maxResponseLength"], job["rollout"]["name"])


@dataclass(frozen=True)
class RunShape:
    """What the sizing needs besides the node type and the model; the batch and lengths the guide's by default."""

    nodes: int
    train_batch_size: int = field(default_factory=lambda: guide_run().train_batch_size)
    ppo_mini_batch_size: int = field(default_factory=lambda: guide_run().ppo_mini_batch_size)
    responses_per_prompt: int = 1
    critic: bool = True  # the algorithm trains a critic (GAE); the others leave its memory to the rollout
    reference: bool = False  # veRL builds the reference model (a KL term in the reward or the loss)
    max_prompt_length: int = field(default_factory=lambda: guide_run().max_prompt_length)
    max_response_length: int = field(default_factory=lambda: guide_run().max_response_length)
    resource_share: float = RESOURCE_SHARE
    verl_version: str = ""  # the version the values run; token budgets only where it has them measured
    lora_rank: int = 0  # LoRA rank of the actor and of the critic where one trains (all-linear adapters on a frozen
    # bf16 base); 0: the whole models train
    rollout_on_pool: bool = False  # separate_async: the rollout on a pool of its own, no engine on the training GPUs

    @property
    def sequence_length(self) -> int:
        return self.max_prompt_length + self.max_response_length


@dataclass(frozen=True)
class Sizing:
    train_batch_size: int
    ppo_mini_batch_size: int
    cpu: str
    memory: str
    tensor_parallel: int
    rollout_memory_fraction: float
    micro_batch: int
    log_prob_micro_batch: int
    ref_log_prob_micro_batch: int
    critic_micro_batch: int
    dynamic_batching: bool
    gradient_checkpointing: bool
    train_token_budget: int  # the actor's update (and the critic's where the version packs it by ppoMaxTokenLenPerGpu)
    forward_token_budget: int  # the old log-probs' and the reference's
    critic_token_budget: int  # critic.forwardMaxTokenLenPerGpu: its values pass (and its update: criticUpdateBudget)
    param_offload: bool
    optimizer_offload: bool
    final_output_only: bool = False  # vLLM asked for each sample's final output only (rollout.finalOutputOnly)
