"""What one GPU holds in each phase of a veRL 0.9.1 step: the memory model that the sizing's rules (generator/sizing.py)
choose settings by and the plan (generator/plan.py) prints, with every constant's measurement.

How veRL 0.9.1 holds memory (read from its source: workers/engine_workers.py, workers/engine/base.py and
fsdp/transformer_impl.py, workers/rollout/vllm_rollout/):
- One training process a GPU holds the actor, the critic and the reference (FSDP shards over every GPU). Between
  phases each model keeps its fp32 weights and Adam moments on the GPU unless offloaded; an offloaded part comes
  onto the GPU for its phase only (the engine's train and eval contexts), grads exist during an update only
  (zeroed to None on leaving it). The reference is FSDP's CPU-offloaded bf16 copy, streamed in for its pass.
- The rollout engine (vLLM's server, its own process) takes `gpu_memory_utilization` of the GPU while it
  generates (its weights, KV cache and workspace) and sleeps at level 2 between rollouts (weights and KV cache
  dropped; the training states stay where they are: on the GPU unless offloaded).
- torch's max_memory_allocated sees the training process only; nvidia-smi sees both processes, their CUDA
  contexts and the allocator's reserve.
- veRL 0.9.1's critic packs its value pass by `critic.ppo_infer_max_token_len_per_gpu` (a dataclass default of
  32,768), and its default trainer its update too (trainer/ppo/v1/trainer_base.py); the chart renders the critic's
  sized budget to that key (`criticForwardBudgetKey`), so both critic phases are planned at it (planwork.py, by the
  version's `criticUpdateBudget`), the update with the layers' activations only (no LM head).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from generator.catalog import ModelProfile
from generator.planwork import PlanInputs, phase_work
from generator.runshape import RunShape

# Bytes per parameter of one model's training states as veRL's FSDP holds them (mixed precision, param dtype fp32):
# fp32 weights (measured: "After FSDP, memory allocated (GB): 1.84" for the 494M-parameter actor, 2026-12-03b log;
# 5.75 for the 1.54B one, 2026-12-03c), fp32 grads during an update, and Adam's two fp32 moments from the first
# optimizer step on.
MASTER_WEIGHT_BYTES_PER_PARAM = 4
GRADIENT_BYTES_PER_PARAM = 4
ADAM_BYTES_PER_PARAM = 8
TRAINING_BYTES_PER_PARAM = MASTER_WEIGHT_BYTES_PER_PARAM + GRADIENT_BYTES_PER_PARAM + ADAM_BYTES_PER_PARAM
# The optimizer step's temporaries: one fp32 tensor a parameter beside the grads and moments (torch's foreach AdamW).
# Measured: the critic's first update peaked at 34.57 GiB allocated in both 1.5B runs of 2026-12-03c, whatever their
# micro batches (8,192-token budget or 4 rows): 6 x 5.75 GiB, the actor's and the critic's weights, the critic's
# grads, its two moments and this; 11.11 GiB at 0.5B (2026-12-03b seed: 6 x 1.84). An update peaks at the larger of
# it and the micro batch's activations (the seed's 4-row micro batches at 1.5B: 46.07 GiB, the states and this).
OPTIMIZER_STEP_BYTES_PER_PARAM = 4
WEIGHT_BYTES_PER_PARAM = 2  # the rollout's bf16 weights
# bf16 K and V of Qwen2.5-0.5B: 24 layers x 2 x 2 KV heads x 64 x 2 bytes = 12 KiB a token for 0.49B parameters.
# Larger models of the family keep fewer KV bytes per parameter (7B: 56 KiB for 7.6B), so this bounds them.
KV_BYTES_PER_TOKEN_PER_BILLION = 25_000
# CUDA graphs, activations and sampler buffers inside the engine's share (about 2 GiB at 0.5B).
ROLLOUT_WORKSPACE_GIB = 2

# Activations a token of a micro batch, in two parts (Qwen2.5 of every size has the 151,936-token vocabulary):
# the vocabulary's (the LM head's logits, their fp32 copies and the log-prob and entropy over them: the same for
# every model of the family, and the same with and without checkpointing, which keeps each layer's input only) and
# the layers' (scaled from the 0.5B by activation_scale). Measured on one H200 at 0.5B (lab/gpu/profile/model_bench.py,
# peaks at 2,128 / 8,512 / 17,024 tokens): 2.98 MiB a token without checkpointing, 1.54 with it; veRL's own update at
# 0.5B without it: (38.71 - 12.9) GiB over 8,766 tokens, 3.0 MiB (2026-12-03b). Checkpointing keeps a layer's input
# (24 layers x 896 x 2 bytes: 0.04 MiB) and one layer's activations at a time (1/24 of the layers' part), so
# 2.98 = V + L and 1.54 = V + L / 24 + 0.04 give the layers' part L = 1.55 and the vocabulary's V = 1.43. At 1.5B
# with checkpointing this plans 1.62 MiB a token; the 2026-12-03c run measured (48.42 - 40.16) GiB over its 5,869-token
# micro batches, 1.44 MiB (the plan errs large: +3% on the peak). The 0.5B run's peak fits the critic's update as well
# (its 17,531-token mini batch in one micro batch at 0.9.1's 32,768 critic budget: (38.71 - 12.9) GiB, 1.51 MiB a token
# against the layers' 1.55): the two updates peak alike there, so that run bounds both parts.
VOCABULARY_MIB_PER_TOKEN = 1.43
LAYER_MIB_PER_TOKEN = {False: 1.55, True: 0.11}  # at 0.5B, by gradient checkpointing
MEASURED_PARAMS_BILLION = 0.49
# A forward-only pass (old log-probs, reference, values) keeps no activations for a backward pass: the vocabulary's
# bf16 tensors (logits, and the entropy's softmax and product: 3 x 151,936 x 2 bytes, 0.87 MiB) for the actor and the
# reference, and one layer's transient (the MLP's gate, up and product in bf16, 3 x 4,864 x 2 bytes, and the norms'
# fp32 copies: about 0.05 MiB at 0.5B, scaled) for every model; the critic's value head keeps no vocabulary. Not
# measured apart; bounded by the runs' peaks, which no forward pass passed: 1.21 MiB at 0.5B ((38.71 - 11.05) GiB over
# 23,375 tokens, 2026-12-03b) and 1.01 at 1.5B ((48.42 - 34.5) GiB over 14,087 tokens, 2026-12-03c).
FORWARD_VOCABULARY_MIB_PER_TOKEN = 0.87
FORWARD_LAYER_MIB_PER_TOKEN = 0.05

# The allocator's reserve over what is allocated, after a training phase (nvidia-smi counts it): reserved / allocated
# at the runs' peaks: 44.9 / 38.7 GiB (generated, 2026-12-03b), 19.4 / 15.5 (seed, 2026-12-03b), 75.5 / 62.7
# (generated padded, 2026-12-03), 57.2 / 48.4 (1.5B generated, 2026-12-03c), 55.0 / 46.1 (1.5B seed): 1.16-1.25.
RESERVED_PER_ALLOCATED = 1.2  # the plan's prediction of nvidia-smi
# The sizing's safety margin: a sized run keeps every phase under the GPU with the largest reserve measured (1.25,
# the 0.5B seed's) on the training process's allocation, in the rollout too (where veRL has emptied the cache, it
# stands for what the plan does not see: the 0.5B generated run's nvidia-smi peak was 7 GiB over the plan's).
MARGIN_RESERVED_PER_ALLOCATED = 1.25
# The GPU besides the training states and the awake engine: the CUDA contexts of the training process and of the
# sleeping vLLM server, and what the server keeps asleep (its CUDA graphs). Measured: 14,055 MiB in nvidia-smi
# between the rollout and the first training phase (2026-12-03, docs/gpu-proof/smi-vllm-generated-2026-12-03.csv.gz)
# against 11.05 GiB of training states (actor and critic, 494M parameters at 12 bytes).
RUNTIME_GIB = 2.7
# What the awake engine takes beyond its gpu_memory_utilization share: 60,828 MiB more in nvidia-smi during the
# rollout than between phases (same file: 74,883 against 14,055 MiB) against 0.4 of the H200's 140.4 GiB.
ENGINE_BEYOND_SHARE_GIB = 3.2


# A rollout pool's GPU (veRL 0.9.1's separate_async) holds no training process: one vLLM replica's shard, what vLLM
# takes beyond its share, and the NCCL weight sync's two buckets (checkpoint_engine/nccl_checkpoint_engine.py: a send
# and a receive buffer of rollout.checkpoint_engine.update_weights_bucket_megabytes each, 2,048 MiB by default). Its
# share is at most vLLM's own default for a GPU it has alone.
WEIGHT_SYNC_BUCKETS_GIB = 2 * 2048 / 1024
POOL_MAX_MEMORY_FRACTION = 0.9


def pool_rollout_memory_fraction(gpu_memory_gib: float) -> float:
    """gpu_memory_utilization of a rollout pool's replica: the GPU less what the engine takes beyond its share and the
    weight sync's buckets, in whole steps of 0.05 down, at most POOL_MAX_MEMORY_FRACTION; 0 where nothing is left."""
    free = gpu_memory_gib - ENGINE_BEYOND_SHARE_GIB - WEIGHT_SYNC_BUCKETS_GIB
    return round(min(POOL_MAX_MEMORY_FRACTION, max(0.0, math.floor(free / gpu_memory_gib * 20) / 20)), 2)


def pool_replica_gib(model: ModelProfile, run: RunShape, tp: int) -> float:
    """What one replica needs on each of its GPUs to generate at all: its weight shard, the workspace and the KV cache
    of one row at full length (vLLM queues the rest of its share of the batch)."""
    weights_bytes, _ = rollout_gpu_bytes(model, run, tp, tp)
    one_row_kv = run.sequence_length * KV_BYTES_PER_TOKEN_PER_BILLION * model.params_billion / tp
    return (weights_bytes + one_row_kv) / 2**30 + ROLLOUT_WORKSPACE_GIB


# LoRA (RunShape.lora_rank above 0), as the chart renders it for veRL 0.9.1: fsdp_config.model_dtype=bf16, so the
# frozen base loads in bf16 (sharded by FSDP like full weights, offloaded by param_offload alike), veRL casts the
# adapters to the base's dtype (workers/engine/fsdp/transformer_impl.py), and torch's AdamW keeps its two moments in
# the adapters' dtype. The reference is the actor with its adapters off (ray_trainer.py ref_in_actor): no weights of
# its own. Each is the dtype's bytes. Measured together at 7B (rank 32) on one H200 with FSDP2 (2026-12-03f log:
# "After FSDP, memory allocated (GB): 14.39", the base and adapters, planned 14.3); the training peak 62.9 GiB against
# 73.4 planned (+17%), and 63.6 against 73.8 (+16%) on a second machine (2026-12-04): the activations, planned as a
# full fine-tune's, are what errs high.
LORA_BASE_BYTES_PER_PARAM = 2
LORA_ADAPTER_BYTES_PER_PARAM = 2
LORA_GRADIENT_BYTES_PER_PARAM = 2
LORA_ADAM_BYTES_PER_PARAM = 4
LORA_OPTIMIZER_STEP_BYTES_PER_PARAM = 2
# vLLM holds one adapter (max_loras 1) at max_lora_rank, the rank rounded up to one vLLM allows (veRL 0.9.1's
# get_vllm_max_lora_rank; vLLM 0.24's MaxLoRARanks), in bf16, inside its gpu_memory_utilization share. Unmeasured.
VLLM_LORA_RANKS = (1, 8, 16, 32, 64, 128, 256, 320, 512)


def adapter_params(model: ModelProfile, rank: int) -> float:
    """LoRA's trainable parameters at this rank with every linear layer of the decoder targeted (all-linear: the
    most any module list trains). A model the catalog gives no adapterParamsPerRank cannot be sized for LoRA."""
    if rank and not model.adapter_params_per_rank:
        raise ValueError(f"the catalog's model {model.name} has no adapterParamsPerRank: LoRA cannot be sized for it")
    return float(model.adapter_params_per_rank * rank)


def vllm_lora_rank(rank: int) -> int:
    return next((allowed for allowed in VLLM_LORA_RANKS if rank <= allowed), VLLM_LORA_RANKS[-1])


@dataclass(frozen=True)
class TrainedStates:
    """Bytes on one GPU of one trained model's states: its weights (with LoRA the frozen base and the adapters), and
    the grads, Adam moments and optimizer step's temporaries of what trains (with LoRA the adapters only)."""

    weights: float
    grads: float
    adam: float
    step: float


def trained_states(inputs: PlanInputs, name: str) -> TrainedStates:
    """The actor's, or the critic's: with LoRA (the run's rank, which the sizing renders for both; the critic's value
    head, a vector of the hidden size, trains whole and is left out) the frozen base and the adapters' states."""
    per_gpu = inputs.params_per_gpu
    if inputs.run.lora_rank:
        adapters = adapter_params(inputs.model, inputs.run.lora_rank) / inputs.gpus
        return TrainedStates(per_gpu * LORA_BASE_BYTES_PER_PARAM + adapters * LORA_ADAPTER_BYTES_PER_PARAM,
                             adapters * LORA_GRADIENT_BYTES_PER_PARAM, adapters * LORA_ADAM_BYTES_PER_PARAM,
                             adapters * LORA_OPTIMIZER_STEP_BYTES_PER_PARAM)
    return TrainedStates(per_gpu * MASTER_WEIGHT_BYTES_PER_PARAM, per_gpu * GRADIENT_BYTES_PER_PARAM,
                         per_gpu * ADAM_BYTES_PER_PARAM, per_gpu * OPTIMIZER_STEP_BYTES_PER_PARAM)


def activation_scale(model: ModelProfile) -> float:
    """A model's layers' activations a token against the measured model's: a layer's grow with width x depth, which
    across Qwen2.5 grows about as the square root of the parameters (7B: 4.7x the 0.5B's width x depth for 15.5x its
    parameters, against 3.9x by the root)."""
    return math.sqrt(model.params_billion / MEASURED_PARAMS_BILLION)


def activation_gib_per_token(model: ModelProfile, checkpointing: bool, vocabulary: bool = True) -> float:
    """GiB a token of a training micro batch's activations: the layers', and the vocabulary's where the model has the
    LM head (the actor; the critic's value head has none)."""
    vocab = VOCABULARY_MIB_PER_TOKEN if vocabulary else 0.0
    return (vocab + LAYER_MIB_PER_TOKEN[checkpointing] * activation_scale(model)) / 1024


def forward_gib_per_token(model: ModelProfile, vocabulary: bool = True) -> float:
    """GiB a token of a forward-only micro batch (old log-probs, reference: with the vocabulary; values: without)."""
    vocab = FORWARD_VOCABULARY_MIB_PER_TOKEN if vocabulary else 0.0
    return (vocab + FORWARD_LAYER_MIB_PER_TOKEN * activation_scale(model)) / 1024


def rollout_gpu_bytes(model: ModelProfile, run: RunShape, tp: int, total_gpus: int) -> tuple[float, float]:
    """Bytes on each GPU of one rollout replica: its bf16 weight shard (with LoRA and its adapter's slot), and the KV
    cache of its share of the batch (prompts x n) at full length."""
    rows = math.ceil(run.train_batch_size * run.responses_per_prompt / max(1, total_gpus // tp))
    kv_bytes = rows * run.sequence_length * KV_BYTES_PER_TOKEN_PER_BILLION * model.params_billion / tp
    weights_bytes = model.params_billion * 1e9 * WEIGHT_BYTES_PER_PARAM / tp
    if run.lora_rank:  # the adapter's slot, beside the base's weights
        weights_bytes += adapter_params(model, vllm_lora_rank(run.lora_rank)) * LORA_ADAPTER_BYTES_PER_PARAM / tp
    return weights_bytes, kv_bytes


@dataclass(frozen=True)
class Part:
    label: str
    gib: float


@dataclass(frozen=True)
class PhaseMemory:
    """One phase's peak on one GPU: the training process's allocations, the rollout engine's (awake in `gen`
    only) and what nvidia-smi would show."""

    name: str
    training: tuple[Part, ...]
    engine: tuple[Part, ...] = ()
    problems: tuple[str, ...] = ()  # what cannot work whatever the GPU's size (an engine share too small)
    notes: tuple[str, ...] = ()  # what works, slower

    @property
    def allocated_gib(self) -> float:
        return sum(part.gib for part in self.training)

    def _gpu_gib(self, reserve: float) -> float:
        return self.allocated_gib * reserve + sum(part.gib for part in self.engine) + RUNTIME_GIB

    @property
    def gpu_gib(self) -> float:
        # The rollout starts after veRL empties the training process's cache (update_weights): no reserve then.
        return self._gpu_gib(1.0 if self.engine else RESERVED_PER_ALLOCATED)

    @property
    def margin_gib(self) -> float:
        """What the sizing keeps under the GPU: the largest reserve measured, in every phase."""
        return self._gpu_gib(MARGIN_RESERVED_PER_ALLOCATED)


def _gib(value: float) -> float:
    return value / 2**30


def resident(inputs: PlanInputs) -> list[Part]:
    """Training states on the GPU between phases: each trained model's weights (fp32; with LoRA the bf16 base and
    adapters) and Adam moments, unless offloaded."""
    sizing = inputs.sizing
    parts = []
    for model in ("actor", "critic") if inputs.run.critic else ("actor",):
        states = trained_states(inputs, model)
        if not sizing.param_offload:
            parts.append(Part(f"{model} weights{_lora_label(inputs, model)}", _gib(states.weights)))
        if not sizing.optimizer_offload:
            parts.append(Part(f"{model} Adam", _gib(states.adam)))
    return parts


def _lora_label(inputs: PlanInputs, model: str) -> str:
    return " (bf16 base and adapters)" if inputs.run.lora_rank else ""


def engine_parts(inputs: PlanInputs) -> tuple[tuple[Part, ...], tuple[str, ...], tuple[str, ...]]:
    """The awake rollout engine: its share of the GPU split as vLLM fills it (weights, workspace, the rest KV
    cache), and what it takes beyond the share; what cannot run, and what runs slower."""
    sizing, shape = inputs.sizing, inputs.shape
    weights_bytes, kv_need_bytes = rollout_gpu_bytes(inputs.model, inputs.run, sizing.tensor_parallel, inputs.gpus)
    share = sizing.rollout_memory_fraction * shape.gpu_memory_gib
    weights = _gib(weights_bytes)
    kv_cache = share - weights - ROLLOUT_WORKSPACE_GIB
    problems, notes = [], []
    if kv_cache <= 0:
        problems.append(f"the rollout engine's share ({sizing.rollout_memory_fraction} of "
                        f"{shape.gpu_memory_gib:g} GiB) does not hold its weights ({weights:.1f} GiB) and workspace "
                        f"({ROLLOUT_WORKSPACE_GIB} GiB)")
    elif kv_cache < _gib(kv_need_bytes):
        notes.append(f"the KV cache ({kv_cache:.1f} GiB) holds less than the batch at full length "
                     f"({_gib(kv_need_bytes):.1f} GiB): vLLM queues the rest (slower, not out of memory)")
    parts = (Part("rollout weights", weights), Part("KV cache", max(0.0, kv_cache)),
             Part("rollout workspace", ROLLOUT_WORKSPACE_GIB), Part("engine beyond its share", ENGINE_BEYOND_SHARE_GIB))
    return parts, tuple(problems), tuple(notes)


def phase_memory(inputs: PlanInputs) -> list[PhaseMemory]:
    """Each phase's peak on one GPU, in the order veRL runs them."""
    sizing, per_gpu, model = inputs.sizing, inputs.params_per_gpu, inputs.model
    states = resident(inputs)
    work = phase_work(inputs)

    def loaded(name: str, train: bool) -> list[Part]:
        """What an offloaded model brings onto the GPU for its phase, and an update's grads."""
        held, parts = trained_states(inputs, name), []
        if sizing.param_offload:
            parts.append(Part(f"{name} weights{_lora_label(inputs, name)} (from CPU)", _gib(held.weights)))
        if train and sizing.optimizer_offload:
            parts.append(Part(f"{name} Adam (from CPU)", _gib(held.adam)))
        if train:
            parts.append(Part(f"{name} grads", _gib(held.grads)))
        return parts

    def activations(phase: str) -> Part:
        """A micro batch's activations: the actor's and the reference's with the vocabulary's logits, the critic's
        without; an update peaks at the larger of them and the optimizer step's temporaries."""
        tokens, vocabulary = work[phase].size, phase not in ("values", "update_critic")
        what = "activations and logits" if vocabulary else "activations"
        if not phase.startswith("update_"):
            return Part(f"{what} of {tokens:,.0f} tokens", tokens * forward_gib_per_token(model, vocabulary))
        held = tokens * activation_gib_per_token(model, sizing.gradient_checkpointing, vocabulary)
        step = _gib(trained_states(inputs, phase.removeprefix("update_")).step)
        return Part(f"{what} of {tokens:,.0f} tokens", held) if held >= step else \
            Part("the optimizer step's temporaries", step)

    engine, problems, notes = engine_parts(inputs)
    # With the rollout on a pool of its own (separate_async) no engine wakes on the training GPUs: no gen phase there.
    phases = [] if inputs.run.rollout_on_pool else [PhaseMemory("gen", tuple(states), engine, problems, notes)]
    phases.append(PhaseMemory("old_log_prob", (*states, *loaded("actor", False), activations("old_log_prob"))))
    if inputs.run.reference and inputs.run.lora_rank:  # the actor with its adapters off
        phases.append(PhaseMemory("ref", (*states, *loaded("actor", False), activations("ref"))))
    elif inputs.run.reference:
        ref_weights = Part("reference weights (bf16, from CPU)", _gib(per_gpu * WEIGHT_BYTES_PER_PARAM))
        phases.append(PhaseMemory("ref", (*states, ref_weights, activations("ref"))))
    if inputs.run.critic:
        phases.append(PhaseMemory("values", (*states, *loaded("critic", False), activations("values"))))
        phases.append(PhaseMemory("update_critic", (*states, *loaded("critic", True), activations("update_critic"))))
    phases.append(PhaseMemory("update_actor", (*states, *loaded("actor", True), activations("update_actor"))))
    return phases


def fits_with_margin(inputs: PlanInputs) -> bool:
    """Every phase under the GPU's memory with the sizing's margin, and each able to run at all."""
    memory = inputs.shape.gpu_memory_gib
    return all(phase.margin_gib <= memory and not phase.problems for phase in phase_memory(inputs))
