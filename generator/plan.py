"""What one GPU holds in each phase of a veRL 0.9.1 step for the settings the sizing decides (generator/sizing.py:
the same functions and constants), and the plan: that memory against the GPU's beside the seconds of each phase
(generator/plantime.py).

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
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from generator.algorithms import Algorithm, algorithms
from generator.catalog import Catalog, GpuShape, ModelProfile
from generator.measurements import MeasuredRun
from generator.plantime import Measured, StepTime, step_time
from generator.planwork import PlanInputs, phase_work, uses_reference
from generator.render import run_for, verl_version_for
from generator.sizing import (ADAM_BYTES_PER_PARAM, GRADIENT_BYTES_PER_PARAM, MASTER_WEIGHT_BYTES_PER_PARAM,
                              ROLLOUT_WORKSPACE_GIB, WEIGHT_BYTES_PER_PARAM, activation_gib_per_token,
                              activation_scale, rollout_gpu_bytes, size)

# The veRL whose source the memory model follows (and whose runs measured it).
MODELLED_VERL = "0.9.1"
# A forward-only pass (old log-probs, reference, values) keeps no activations for a backward pass: what it holds
# a token is the vocabulary's bf16 tensors (logits, and the entropy's softmax and product: 3 x 151,936 x 2 bytes,
# 0.87 MiB) and one layer's transient. Not measured apart: the 2026-12-03b generated run bounds it at 1.14 MiB
# (its old_log_prob ran micro batches of 23,375 tokens under the run's 38.7 GiB peak). Scaled as the training
# figure is (sizing.activation_scale). The sizing's forward budget (twice the training one) assumes at most half
# of the training figure a token (2.98 / 2 MiB): this is under it.
FORWARD_ACTIVATION_MIB_PER_TOKEN = 1.0
# The allocator's reserve over what is allocated, after a training phase (nvidia-smi counts it): 44.9 / 38.7 GiB
# (generated, 2026-12-03b), 19.4 / 15.5 (seed, 2026-12-03b), 75.5 / 62.7 (generated padded, 2026-12-03).
RESERVED_PER_ALLOCATED = 1.2
# The GPU besides the training states and the awake engine: the CUDA contexts of the training process and of the
# sleeping vLLM server, and what the server keeps asleep (its CUDA graphs). Measured: 14,055 MiB in nvidia-smi
# between the rollout and the first training phase (2026-12-03, docs/gpu-proof/smi-vllm-generated-2026-12-03.csv.gz)
# against 11.05 GiB of training states (actor and critic, 494M parameters at 12 bytes).
RUNTIME_GIB = 2.7
# What the awake engine takes beyond its gpu_memory_utilization share: 60,828 MiB more in nvidia-smi during the
# rollout than between phases (same file: 74,883 against 14,055 MiB) against 0.4 of the H200's 140.4 GiB.
ENGINE_BEYOND_SHARE_GIB = 3.2


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

    @property
    def gpu_gib(self) -> float:
        # The rollout starts after veRL empties the training process's cache (update_weights): no reserve then.
        reserve = 1.0 if self.engine else RESERVED_PER_ALLOCATED
        return self.allocated_gib * reserve + sum(part.gib for part in self.engine) + RUNTIME_GIB


def _gib(value: float) -> float:
    return value / 2**30


def forward_gib_per_token(model: ModelProfile) -> float:
    return FORWARD_ACTIVATION_MIB_PER_TOKEN / 1024 * activation_scale(model)


def resident(inputs: PlanInputs) -> list[Part]:
    """Training states on the GPU between phases: each trained model's fp32 weights and Adam moments, unless
    offloaded."""
    sizing, per_gpu = inputs.sizing, inputs.params_per_gpu
    parts = []
    for model in ("actor", "critic") if inputs.algorithm.critic else ("actor",):
        if not sizing.param_offload:
            parts.append(Part(f"{model} weights", _gib(per_gpu * MASTER_WEIGHT_BYTES_PER_PARAM)))
        if not sizing.optimizer_offload:
            parts.append(Part(f"{model} Adam", _gib(per_gpu * ADAM_BYTES_PER_PARAM)))
    return parts


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
    forward_per_token = forward_gib_per_token(model)
    train_per_token = activation_gib_per_token(model, sizing.gradient_checkpointing)

    def loaded(name: str, train: bool) -> list[Part]:
        """What an offloaded model brings onto the GPU for its phase, and an update's grads."""
        parts = []
        if sizing.param_offload:
            parts.append(Part(f"{name} weights (from CPU)", _gib(per_gpu * MASTER_WEIGHT_BYTES_PER_PARAM)))
        if train and sizing.optimizer_offload:
            parts.append(Part(f"{name} Adam (from CPU)", _gib(per_gpu * ADAM_BYTES_PER_PARAM)))
        if train:
            parts.append(Part(f"{name} grads", _gib(per_gpu * GRADIENT_BYTES_PER_PARAM)))
        return parts

    def activations(phase: str) -> Part:
        """A micro batch's activations; the actor's and the reference's hold the vocabulary's logits too (the
        measured figures a token include them; the critic's, at the same figure, err large)."""
        tokens = work[phase].size
        per_token = train_per_token if phase.startswith("update_") else forward_per_token
        what = "activations" if phase in ("values", "update_critic") else "activations and logits"
        return Part(f"{what} of {tokens:,.0f} tokens", tokens * per_token)

    engine, problems, notes = engine_parts(inputs)
    phases = [PhaseMemory("gen", tuple(states), engine, problems, notes),
              PhaseMemory("old_log_prob", (*states, *loaded("actor", False), activations("old_log_prob")))]
    if uses_reference(inputs.algorithm):
        ref_weights = Part("reference weights (bf16, from CPU)", _gib(per_gpu * WEIGHT_BYTES_PER_PARAM))
        phases.append(PhaseMemory("ref", (*states, ref_weights, activations("ref"))))
    if inputs.algorithm.critic:
        phases.append(PhaseMemory("values", (*states, *loaded("critic", False), activations("values"))))
        phases.append(PhaseMemory("update_critic", (*states, *loaded("critic", True), activations("update_critic"))))
    phases.append(PhaseMemory("update_actor", (*states, *loaded("actor", True), activations("update_actor"))))
    return phases


@dataclass(frozen=True)
class Plan:
    inputs: PlanInputs
    phases: tuple[PhaseMemory, ...]
    time: StepTime

    @property
    def gpu_memory_gib(self) -> float:
        return self.inputs.shape.gpu_memory_gib

    @property
    def overflows(self) -> tuple[PhaseMemory, ...]:
        return tuple(phase for phase in self.phases if phase.gpu_gib > self.gpu_memory_gib or phase.problems)

    @property
    def fits(self) -> bool:
        return not self.overflows

    @property
    def peak(self) -> PhaseMemory:
        return max(self.phases, key=lambda phase: phase.gpu_gib)

    @property
    def training_peak(self) -> PhaseMemory:
        """The phase with the training process's largest allocation (what max_memory_allocated reports); of equal
        ones the later (the actor's update before the critic's)."""
        return max(reversed(self.phases), key=lambda phase: phase.allocated_gib)


def plan(inputs: PlanInputs, measured: Measured = ()) -> Plan:
    return Plan(inputs, tuple(phase_memory(inputs)), step_time(inputs, measured))


def with_settings(inputs: PlanInputs, **changes) -> PlanInputs:
    return replace(inputs, sizing=replace(inputs.sizing, **changes))


def inputs_for(catalog: Catalog, shape: GpuShape, model: ModelProfile, algorithm: Algorithm, nodes: int,
               gpus: int | None = None, row_tokens: float | None = None) -> PlanInputs:
    """The plan of what `render` writes for the node type on `nodes` nodes (the veRL it runs, its run and sizing),
    on those nodes' GPUs unless `gpus` says where it ran, with rows at full length unless `row_tokens` says."""
    run = run_for(algorithm, nodes, verl_version=verl_version_for(catalog.verl, shape, algorithm))
    return PlanInputs(shape, model, algorithm, run, size(shape, model, run), gpus or nodes * shape.gpus_per_node,
                      row_tokens or run.sequence_length)


def measured_inputs(catalog: Catalog, run: MeasuredRun) -> PlanInputs:
    """The plan of a measured run: its node type's values as rendered (for that node type, cut to fewer GPUs a node
    where the entry says, its default nodes and the run's model unless the entry names others), with the entry's
    overrides set over them, run with the run's model on the GPU and the GPU count it ran on, with its mean row."""
    shape = catalog.shapes[run.shape]
    if run.cut_to_gpus:
        shape = replace(shape, name=f"{shape.name} cut to {run.cut_to_gpus} GPU(s)", gpus_per_node=run.cut_to_gpus)
    algorithm, nodes = algorithms()[run.algorithm], run.sized_nodes or shape.default_nodes
    values = inputs_for(catalog, shape, catalog.models[run.values_model], algorithm, nodes)
    inputs = inputs_for(catalog, shape, catalog.models[run.model], algorithm, nodes, run.gpus, run.row_tokens)
    return replace(inputs, sizing=replace(values.sizing, **run.overrides),
                   shape=replace(shape, gpu_model=run.gpu, gpu_memory_gib=run.gpu_memory_gib))


def measured_plans(catalog: Catalog, runs: tuple[MeasuredRun, ...]) -> Measured:
    return tuple((run, measured_inputs(catalog, run)) for run in runs)
