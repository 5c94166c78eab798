"""Run sizing for one GPU node type: a few rules, each with its reason.

The rules are anchored on the vendor guide, which ran Qwen2.5-0.5B with micro batches 4 / 8 / 4 and a
rollout memory fraction of 0.4 on 24 GiB-class GPUs: on that shape they give back exactly its numbers.
For veRL 0.9.1 the training phases are sized in tokens instead (token_budgets): dynamic batching with
per-GPU token budgets, gradient checkpointing only where memory is short and FSDP offload only where a phase would
not fit without it, each chosen by the memory model the plan prints (generator/memory.py: every phase's peak on one
GPU, kept under the GPU with the margin); each constant carries its measurement on one H200 (docs/sizing.md).
Critic-free algorithms (those of files/algorithms.yaml without a critic) sample n responses per prompt: every batch rule
and the rollout's KV cache count samples (prompts x n), and the critic's GPU memory is room the rollout
may take (critic_free_share).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

from generator.catalog import GpuShape, ModelProfile
from generator.memory import (LORA_BASE_BYTES_PER_PARAM, MASTER_WEIGHT_BYTES_PER_PARAM, ROLLOUT_WORKSPACE_GIB,
                              TRAINING_BYTES_PER_PARAM, WEIGHT_BYTES_PER_PARAM, fits_with_margin, rollout_gpu_bytes)
from generator.planwork import LAUNCH_FLOOR_TOKENS_0_5B, PlanInputs
from generator.quantity import cpu_millis, format_cpu, format_memory_gi, memory_bytes
from generator.runshape import RunShape, Sizing, guide_run
from generator.verlversions import by_version

# The guide's run, the reference point the rules scale from (its batch and lengths: guide_run()).
REFERENCE_GPU_MEMORY_GIB = 24
REFERENCE_MICRO_BATCH = 4
MAX_MICRO_BATCH = 32
# The rollout never takes more of a GPU than this: the actor's training states and activations need the rest.
MAX_ROLLOUT_MEMORY_FRACTION = 0.85


def floor_power_of_two(value: float) -> int:
    power = 1
    while power * 2 <= value:
        power *= 2
    return power


def pod_resources(shape: GpuShape, share: float) -> tuple[str, str]:
    """CPU and memory of a Ray pod: a share of the node's allocatable (80% leaves room for
    daemonsets and the kubelet, as the vendor guide advises), whole cores and whole GiB."""
    cpu = cpu_millis(shape.allocatable_cpu) * share // 1000 * 1000
    memory = memory_bytes(shape.allocatable_memory) * share // 2**30 * 2**30
    return format_cpu(int(cpu)), format_memory_gi(int(memory))


def tensor_parallel(shape: GpuShape, model: ModelProfile) -> int:
    """Smallest rollout TP whose weight shard stays under a quarter of a GPU: the rest is KV cache
    and the training states that share the GPU. A replica never spans nodes."""
    weights_gib = model.params_billion * 1e9 * WEIGHT_BYTES_PER_PARAM / 2**30
    tp = 1
    while weights_gib / tp > shape.gpu_memory_gib / 4 and tp * 2 <= shape.gpus_per_node:
        tp *= 2
    return tp


# The rollout's share of GPU memory, measured on one H200 (docs/gpu-proof.md, "vLLM profile": veRL 0.9.1, vLLM
# 0.24.0, Qwen2.5-0.5B shape, 256 prompts, responses up to 256 tokens): generation took 4.09 s at 0.4 and 4.10 s
# at 0.7, while vLLM held its fraction of the GPU throughout (peak 74.4 against 117.1 GB). Past what the weights
# and the batch's KV cache need, a larger fraction only takes memory from the training phases.
REFERENCE_ROLLOUT_MEMORY_FRACTION = 0.4  # the guide's value, measured sufficient on an H200
def rollout_memory_cap(shape: GpuShape) -> float:
    """The most a rollout engine may take: larger GPUs keep the training states in the same absolute
    space and can give the rest to the KV cache when the batch needs it."""
    if shape.gpu_memory_gib <= 24:
        return 0.4
    if shape.gpu_memory_gib <= 48:
        return 0.5
    if shape.gpu_memory_gib <= 96:
        return 0.6
    return 0.7


def on_gpu_bytes_per_param(param_offload: bool, optimizer_offload: bool) -> int:
    """What FSDP keeps on the GPU of one model's training states per parameter: all 16 bytes, the bf16
    weights and grads (4) when the optimizer is offloaded, nothing when the parameters are too."""
    if param_offload:
        return 0
    return MASTER_WEIGHT_BYTES_PER_PARAM if optimizer_offload else TRAINING_BYTES_PER_PARAM


def critic_free_share(shape: GpuShape, model: ModelProfile, total_gpus: int, offloads: tuple[bool, bool]) -> float:
    """Without a critic each GPU keeps one model's training states instead of two: the critic's shard of
    them is room the rollout's KV cache may take (n responses per prompt fill it), in whole steps of 0.05."""
    shard_gib = model.params_billion * 1e9 * on_gpu_bytes_per_param(*offloads) / total_gpus / 2**30
    return math.floor(shard_gib / shape.gpu_memory_gib / 0.05) * 0.05


def lora_free_share(shape: GpuShape, model: ModelProfile, total_gpus: int, offloads: tuple[bool, bool]) -> float:
    """With LoRA a trained model (the actor, and the critic where there is one) keeps its frozen bf16 base (2 bytes a
    parameter) where it kept its full training states: the difference of its shard is room the rollout's KV cache may
    take, in whole steps of 0.05 (the adapters' own states, about 1% of the parameters at rank 32, stay in the
    margin)."""
    param_offload, _ = offloads
    freed = on_gpu_bytes_per_param(*offloads) - (0 if param_offload else LORA_BASE_BYTES_PER_PARAM)
    shard_gib = model.params_billion * 1e9 * max(0, freed) / total_gpus / 2**30
    return math.floor(shard_gib / shape.gpu_memory_gib / 0.05) * 0.05


def rollout_memory_fraction(shape: GpuShape, model: ModelProfile, run: RunShape, tp: int, total_gpus: int,
                            critic_free_room: float = 0.0) -> float:
    """What one rollout replica needs: its weight shard, twice the KV cache of its share of the batch
    (prompts x n) at full length (room for the scheduler) and the workspace, in steps of 0.05, at least the
    guide's 0.4 (measured enough) and at most the cap of the GPU size, raised by the critic's room where
    the algorithm has none."""
    weights_bytes, kv_bytes = rollout_gpu_bytes(model, run, tp, total_gpus)
    need_gib = (weights_bytes + 2 * kv_bytes) / 2**30 + ROLLOUT_WORKSPACE_GIB
    fraction = math.ceil(need_gib / shape.gpu_memory_gib * 20) / 20
    cap = min(rollout_memory_cap(shape) + critic_free_room, MAX_ROLLOUT_MEMORY_FRACTION)
    return round(min(cap, max(REFERENCE_ROLLOUT_MEMORY_FRACTION, fraction)), 2)


def normalized_mini_batch(run: RunShape, total_gpus: int) -> int:
    """Samples per GPU per PPO update, as veRL's workers compute it."""
    return run.ppo_mini_batch_size * run.responses_per_prompt // total_gpus


def memory_micro_batch(shape: GpuShape, model: ModelProfile, run: RunShape) -> int:
    """What activation memory allows: activations grow with micro batch x sequence length x model width,
    so scale the guide's 4 by GPU memory, sequence length and model size, down to a power of two."""
    scale = (
        (shape.gpu_memory_gib / REFERENCE_GPU_MEMORY_GIB)
        * (guide_run().sequence_length / run.sequence_length)
        * min(1.0, 0.5 / model.params_billion)
    )
    return min(floor_power_of_two(max(1.0, REFERENCE_MICRO_BATCH * scale)), MAX_MICRO_BATCH)


def micro_batch(by_memory: int, run: RunShape, total_gpus: int) -> int:
    """The training micro batch: what memory allows, kept a divisor of the per-GPU mini batch (veRL
    asserts that). On large GPUs the mini batch is the limit: 64 over 8 GPUs caps it at 8."""
    per_gpu = normalized_mini_batch(run, total_gpus)
    micro = min(by_memory, max(1, per_gpu))
    while per_gpu % micro:
        micro //= 2
    return max(1, micro)


def log_prob_micro_batches(by_memory: int, run: RunShape, total_gpus: int) -> tuple[int, int]:
    """Micro batches of the forward-only passes (the rollout's old log-probs, the reference model's).
    They split the whole per-GPU batch, not a mini batch, so only memory and that batch bound them:
    twice what memory allows a training micro batch for the rollout's (no activations are kept for a
    backward pass), and that size for the reference's. Measured on H200 (docs/gpu-proof.md): 32 and 16
    ran the reference pass 1.66x faster than 8, at 31% of the GPU's memory at peak."""
    per_gpu_batch = max(1, run.train_batch_size * run.responses_per_prompt // total_gpus)
    return min(2 * by_memory, MAX_MICRO_BATCH, per_gpu_batch), min(by_memory, per_gpu_batch)


# Token budgets (veRL 0.9.1), measured on one H200 (docs/sizing.md); the memory they take: generator/memory.py.
# A micro batch is bound by kernel launches below the launch floor (planwork.LAUNCH_FLOOR_TOKENS_0_5B, with its
# measurement). Past it, checkpointing only adds work.
DYNAMIC_BATCHING_VERSIONS = ("0.9.1",)
# Without checkpointing a budget under this stays at the launch floor: checkpointing's ~2x budget is faster. The
# largest power of two (budgets are powers of two) not past the floor: 8,192.
LAUNCH_BOUND_TOKENS = 2 ** int(math.log2(LAUNCH_FLOOR_TOKENS_0_5B))
# The largest budget: the largest measured in veRL (16,384 on one H200 at 0.5B, 2026-12-03b: 38.7 GiB allocated at
# peak). Past the launch floor a larger micro batch saves only its fixed cost (185 ms at 17,024 tokens, time linear
# in tokens), not worth memory no run has measured.
MAX_TOKEN_BUDGET = 16384
# Forward-only passes (old log-probs, reference, values) keep no activations for a backward pass: twice the
# training budget (measured: 32,768 tokens a GPU on an H200, old_log_prob 69,692 tokens in one step); the memory
# model checks them too.
FORWARD_BUDGET_FACTOR = 2
# vLLM's final output only (ppo-job.rollout.finalOutputOnly): measured through veRL 0.9.1 on one H200 at 0.5B
# (2026-12-03e, results-2026-12-03e-*.json): 9.71 and 9.96 s a step in two runs against 11.25 s asking for every
# token's output, the rollout's wait 3.18 s against 4.34 s (means of steps 2-4); vLLM alone at 1.5B: 3.66 against
# 5.02 s. The chart renders it only with the engines of its version's finalOutputRollouts and the sync trainer (its
# rulebook), so only those values set it.


def final_output_only(run: RunShape) -> bool:
    """Whether the values ask vLLM for each sample's final output only: where the run's veRL takes the chart's agent
    loop manager for the engine (the chart's; files/verl-versions.yaml finalOutputRollouts) and the trainer is sync
    (no pool)."""
    facts = dict(by_version()[run.verl_version].other) if run.verl_version in by_version() else {}
    return guide_run().rollout_engine in facts.get("finalOutputRollouts", []) and not run.rollout_on_pool


# FSDP offload, preferred in this order: none, the optimizer (its moments leave the GPU between updates; veRL 0.9.1
# brings them back for the update), the parameters too. The first with which every phase fits with the margin.
OFFLOAD_CHOICES = ((False, False), (False, True), (True, True))


@dataclass(frozen=True)
class TokenBudgets:
    dynamic_batching: bool
    gradient_checkpointing: bool
    train: int  # tokens a GPU in one training micro batch (the actor's)
    forward: int  # tokens a GPU in one forward-only micro batch (old log-probs, reference)
    critic: int  # tokens a GPU in one micro batch of the critic's values pass (and of its update in 0.9.1)


FIXED_MICRO_BATCHES = TokenBudgets(False, True, 0, 0, 0)


def fits(shape: GpuShape, model: ModelProfile, run: RunShape, sizing: Sizing, total_gpus: int) -> bool:
    """Every phase of the step under the GPU with the margin (generator/memory.py), rows at their full length and every
    budgeted micro batch full: a larger batch set over the values packs the same micro batches."""
    return fits_with_margin(PlanInputs(shape, model, None, run, sizing, total_gpus, run.sequence_length, True))


def with_budgets(sizing: Sizing, budgets: TokenBudgets) -> Sizing:
    return replace(sizing, dynamic_batching=budgets.dynamic_batching,
                   gradient_checkpointing=budgets.gradient_checkpointing, train_token_budget=budgets.train,
                   forward_token_budget=budgets.forward, critic_token_budget=budgets.critic)


def largest_budget(shape: GpuShape, model: ModelProfile, run: RunShape, sizing: Sizing, total_gpus: int,
                   checkpointing: bool) -> int:
    """The largest power of two of tokens, up to MAX_TOKEN_BUDGET and at least one whole row (the rulebook's floor),
    with which every phase fits; 0 where none does."""
    budget = MAX_TOKEN_BUDGET
    while budget >= run.sequence_length:
        # The critic's at the training budget here: at any budget its update holds less than the actor's (no logits).
        trial = with_budgets(sizing, TokenBudgets(True, checkpointing, budget, FORWARD_BUDGET_FACTOR * budget, budget))
        if fits(shape, model, run, trial, total_gpus):
            return budget
        budget //= 2
    return 0


def critic_budget(shape: GpuShape, model: ModelProfile, run: RunShape, sizing: Sizing, total_gpus: int) -> int:
    """The critic's budget (critic.forwardMaxTokenLenPerGpu): the largest power of two of tokens, up to the forward
    budget, with which every phase fits. veRL 0.9.1 packs both the critic's values pass and its update by it
    (files/verl-versions.yaml criticUpdateBudget, which the plan follows); its update keeps no vocabulary-wide logits,
    so it may fit more than the actor's training budget, which always fits (the actor's update holds more)."""
    budget = sizing.forward_token_budget
    while budget > sizing.train_token_budget:
        if fits(shape, model, run, replace(sizing, critic_token_budget=budget), total_gpus):
            return budget
        budget //= 2
    return sizing.train_token_budget


def token_budgets(shape: GpuShape, model: ModelProfile, run: RunShape, sizing: Sizing, total_gpus: int) -> TokenBudgets:
    """Dynamic batching where the veRL version has it measured and a budget of one whole row fits: micro batches of
    up to `train` tokens, packed from rows of any length, instead of a fixed row count padded to the longest.
    Gradient checkpointing on only where the budget without it is under the launch floor and checkpointing fits a
    larger one (where a forward-only pass bounds both, it would only add its recompute). Then the critic's budget
    (critic_budget)."""
    if run.verl_version not in DYNAMIC_BATCHING_VERSIONS:
        return FIXED_MICRO_BATCHES
    without = largest_budget(shape, model, run, sizing, total_gpus, False)
    with_ = largest_budget(shape, model, run, sizing, total_gpus, True)
    if not with_:
        return FIXED_MICRO_BATCHES
    checkpointing = without < max(LAUNCH_BOUND_TOKENS, run.sequence_length) and with_ > without
    train = with_ if checkpointing else without
    budgets = TokenBudgets(True, checkpointing, train, FORWARD_BUDGET_FACTOR * train, train)
    return replace(budgets, critic=critic_budget(shape, model, run, with_budgets(sizing, budgets), total_gpus))


def round_up(value: int, unit: int) -> int:
    return -(-value // unit) * unit


def batches_for(run: RunShape, total_gpus: int) -> RunShape:
    """The run with train and mini batch raised, where needed, to whole samples on every GPU: veRL
    asserts batch x n divisible by the GPUs and at least one mini-batch sample per GPU; the train batch
    stays whole mini batches. The guide's train and mini batch stay as they are where they already divide."""
    unit = total_gpus // math.gcd(total_gpus, run.responses_per_prompt)  # batch x n divisible by the GPUs
    mini = round_up(run.ppo_mini_batch_size, unit)
    return replace(run, ppo_mini_batch_size=mini, train_batch_size=round_up(run.train_batch_size, mini))


def size(shape: GpuShape, model: ModelProfile, run: RunShape) -> Sizing:
    """The settings for the node type: batches, micro batches and the rollout by their rules; then, of the offloads in
    OFFLOAD_CHOICES' order, the first with which every phase fits with the margin at the token budgets (or fixed micro
    batches) sized for it; where none fits, both offloaded (the plan then says which phase overflows)."""
    total_gpus = run.nodes * shape.gpus_per_node
    run = batches_for(run, total_gpus)
    cpu, memory = pod_resources(shape, run.resource_share)
    by_memory = memory_micro_batch(shape, model, run)
    micro = micro_batch(by_memory, run, total_gpus)
    log_prob_micro, ref_log_prob_micro = log_prob_micro_batches(by_memory, run, total_gpus)
    tp = tensor_parallel(shape, model)
    for param_offload, optimizer_offload in OFFLOAD_CHOICES:
        offloads = (param_offload, optimizer_offload)
        room = 0.0 if run.critic else critic_free_share(shape, model, total_gpus, offloads)
        if run.lora_rank:  # the actor's, and the critic's where it trains one (its adapters at the same rank)
            room += lora_free_share(shape, model, total_gpus, offloads) * (2 if run.critic else 1)
        fixed = Sizing(
            train_batch_size=run.train_batch_size,
            ppo_mini_batch_size=run.ppo_mini_batch_size,
            cpu=cpu,
            memory=memory,
            tensor_parallel=tp,
            rollout_memory_fraction=rollout_memory_fraction(shape, model, run, tp, total_gpus, room),
            micro_batch=micro,
            log_prob_micro_batch=log_prob_micro,
            ref_log_prob_micro_batch=ref_log_prob_micro,
            critic_micro_batch=micro,
            dynamic_batching=False,
            gradient_checkpointing=True,
            train_token_budget=0,
            forward_token_budget=0,
            critic_token_budget=0,
            param_offload=param_offload,
            optimizer_offload=optimizer_offload,
            final_output_only=final_output_only(run),
        )
        for fraction in lora_fractions(fixed.rollout_memory_fraction, shape, model, run, tp, total_gpus):
            trial = replace(fixed, rollout_memory_fraction=fraction)
            sized = with_budgets(trial, token_budgets(shape, model, run, trial, total_gpus))
            if fits(shape, model, run, sized, total_gpus):
                return sized
    return sized


def lora_fractions(fraction: float, shape: GpuShape, model: ModelProfile, run: RunShape, tp: int,
                   total_gpus: int) -> list[float]:
    """The rollout shares to try, largest first: the one sized; with LoRA also each 0.05 less down to the share without
    any room (what the freed memory gives the rollout is what the training phases leave, not all of it)."""
    if not run.lora_rank:
        return [fraction]
    without = rollout_memory_fraction(shape, model, run, tp, total_gpus)
    steps = max(0, round((fraction - without) / 0.05))
    return [round(fraction - 0.05 * step, 2) for step in range(steps + 1)]
