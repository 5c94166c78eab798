"""What to change when a plan does not fit: each change the chart offers (a smaller token budget or micro batch,
gradient checkpointing, FSDP offload, the rollout's share and tensor parallel size, more nodes) planned again, and
those with which every phase fits with the sizing's margin (generator/memory.py), each as the values to set."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable

from generator.memory import ROLLOUT_WORKSPACE_GIB, phase_memory, rollout_gpu_bytes
from generator.plan import plan, with_settings
from generator.planwork import PlanInputs, uses_reference

MAX_NODES = 16  # the most nodes the plan tries before it says more GPUs do not help


@dataclass(frozen=True)
class Fix:
    change: str  # the values to set, as `--set` takes them, or the command to run
    peak_gib: float  # the largest phase on the GPU after the change
    peak_phase: str


def _fits(inputs: PlanInputs) -> bool:
    """With the sizing's margin: a change offered is one the rules could have chosen."""
    return plan(inputs).within_margin


def _fix(change: str, inputs: PlanInputs) -> Fix | None:
    planned = plan(inputs)
    return Fix(change, planned.peak.gpu_gib, planned.peak.name) if planned.within_margin else None


def set_values(inputs: PlanInputs, values: dict[str, object]) -> str:
    """`--set` of ppo-job's values, leaving out the critic's and the reference's where the run has none."""
    kept = {key: value for key, value in values.items()
            if not (key.startswith("critic.") and not inputs.algorithm.critic)
            and not (key.startswith("ref.") and not uses_reference(inputs.algorithm))}
    return "--set " + ",".join(f"ppo-job.{key}={str(value).lower() if isinstance(value, bool) else value}"
                               for key, value in kept.items())


def budget_fix(inputs: PlanInputs) -> Fix | None:
    """The critic's budget alone halved, where that fits (veRL 0.9.1 packs the critic's update by it too); else the
    largest token budget (a power of two, at least one whole row as the rulebook wants) that fits, the forward-only
    passes at twice it and the critic's at the larger of the two that fits, as the sizing sets them."""
    sizing, row = inputs.sizing, inputs.run.sequence_length
    if not sizing.dynamic_batching:
        return None
    critic = sizing.critic_token_budget // 2
    while critic >= max(sizing.train_token_budget, row):
        changed = with_settings(inputs, critic_token_budget=critic)
        if _fits(changed):
            return _fix(set_values(inputs, {"critic.forwardMaxTokenLenPerGpu": critic}), changed)
        critic //= 2
    budget = sizing.train_token_budget // 2
    while budget >= row:
        for critic in (2 * budget, budget):
            changed = with_settings(inputs, train_token_budget=budget, forward_token_budget=2 * budget,
                                    critic_token_budget=critic)
            if _fits(changed):
                return _fix(set_values(inputs, {
                    "actor.ppoMaxTokenLenPerGpu": budget, "critic.ppoMaxTokenLenPerGpu": budget,
                    "rollout.logProbMaxTokenLenPerGpu": 2 * budget, "ref.logProbMaxTokenLenPerGpu": 2 * budget,
                    "critic.forwardMaxTokenLenPerGpu": critic}), changed)
        budget //= 2
    return None


def micro_batch_fix(inputs: PlanInputs) -> Fix | None:
    """Fixed micro batches: the largest halving of the training and forward ones that fits."""
    sizing = inputs.sizing
    if sizing.dynamic_batching:
        return None
    micro = sizing.micro_batch // 2
    while micro >= 1:
        changed = with_settings(inputs, micro_batch=micro, critic_micro_batch=micro,
                                log_prob_micro_batch=min(sizing.log_prob_micro_batch, 2 * micro),
                                ref_log_prob_micro_batch=min(sizing.ref_log_prob_micro_batch, micro))
        if _fits(changed):
            return _fix(set_values(inputs, {
                "actor.ppoMicroBatchSizePerGpu": micro, "critic.ppoMicroBatchSizePerGpu": micro,
                "rollout.logProbMicroBatchSizePerGpu": changed.sizing.log_prob_micro_batch,
                "ref.logProbMicroBatchSizePerGpu": changed.sizing.ref_log_prob_micro_batch}), changed)
        micro //= 2
    return None


def checkpointing_fix(inputs: PlanInputs) -> Fix | None:
    if inputs.sizing.gradient_checkpointing:
        return None
    return _fix("--set ppo-job.model.enableGradientCheckpointing=true",
                with_settings(inputs, gradient_checkpointing=True))


def offload_fix(inputs: PlanInputs) -> Fix | None:
    """FSDP offload: the optimizer first, then the parameters too (veRL brings each back for its phase)."""
    sizing = inputs.sizing
    for param, optimizer in ((False, True), (True, True)):
        unchanged = (param, optimizer) == (sizing.param_offload, sizing.optimizer_offload)
        if unchanged or (sizing.param_offload and not param):
            continue
        fix = _fix(set_values(inputs, {"actor.paramOffload": param, "actor.optimizerOffload": optimizer,
                                       "ref.paramOffload": param, "critic.paramOffload": param,
                                       "critic.optimizerOffload": optimizer}),
                   with_settings(inputs, param_offload=param, optimizer_offload=optimizer))
        if fix:
            return fix
    return None


def rollout_fix(inputs: PlanInputs) -> Fix | None:
    """The rollout's share: the largest step of 0.05 below the sized one that fits and still holds the weights, the
    workspace and one full row's KV cache, at the sized tensor parallel size and then at larger ones (up to the
    node's GPUs), where the share may stay as sized."""
    sizing, shape = inputs.sizing, inputs.shape
    tp = sizing.tensor_parallel
    while tp <= min(shape.gpus_per_node, inputs.gpus):
        weights, kv_need = rollout_gpu_bytes(inputs.model, inputs.run, tp, inputs.gpus)
        one_row = kv_need / math.ceil(inputs.rows / max(1, inputs.gpus // tp))
        least = ((weights + one_row) / 2**30 + ROLLOUT_WORKSPACE_GIB) / shape.gpu_memory_gib
        fraction = sizing.rollout_memory_fraction if tp != sizing.tensor_parallel else \
            round(sizing.rollout_memory_fraction - 0.05, 2)
        while fraction >= least:
            changed = with_settings(inputs, tensor_parallel=tp, rollout_memory_fraction=fraction)
            if _fits(changed):
                values = {"rollout.gpuMemoryUtilization": fraction}
                if tp != sizing.tensor_parallel:
                    values["rollout.tensorModelParallelSize"] = tp
                return _fix(set_values(inputs, values), changed)
            fraction = round(fraction - 0.05, 2)
        tp *= 2
    return None


def fixes(inputs: PlanInputs, more_nodes: Callable[[int], PlanInputs] | None = None) -> tuple[Fix, ...]:
    """Each single change with which every phase fits; then the fewest nodes, sized again, where more_nodes
    gives the plan for a node count."""
    found = [fix(inputs) for fix in (budget_fix, micro_batch_fix, checkpointing_fix, offload_fix, rollout_fix)]
    if more_nodes is not None:
        nodes = inputs.gpus // inputs.shape.gpus_per_node + 1
        while nodes <= MAX_NODES:
            grown = more_nodes(nodes)
            if _fits(grown):
                found.append(_fix(f"more GPUs: --nodes {nodes} ({nodes * inputs.shape.gpus_per_node} GPUs; render "
                                  "the values again for them)", grown))
                break
            nodes += 1
    return tuple(fix for fix in found if fix)


def overflow_lines(inputs: PlanInputs) -> list[str]:
    """Each phase that does not fit: by how much, or why whatever the GPU."""
    lines = []
    for phase in phase_memory(inputs):
        if phase.gpu_gib > inputs.shape.gpu_memory_gib:
            lines.append(f"{phase.name} overflows: {phase.gpu_gib:.1f} GiB against the GPU's "
                         f"{inputs.shape.gpu_memory_gib:g} GiB")
        lines.extend(f"{phase.name} cannot run: {problem}" for problem in phase.problems)
    return lines
