"""The plan of a run: each phase's memory on one GPU (generator/memory.py: the model the sizing's rules choose by, on
the same functions and constants) beside the seconds of each phase (generator/plantime.py), for the settings the
sizing decides (generator/sizing.py) or a measured run ran."""

from __future__ import annotations

from dataclasses import dataclass, replace

from generator.algorithms import Algorithm, algorithms
from generator.catalog import Catalog, GpuShape, ModelProfile
from generator.measurements import MeasuredRun
from generator.memory import PhaseMemory, phase_memory
from generator.plantime import Measured, StepTime, step_time
from generator.planwork import PlanInputs
from generator.render import lora_version_for, run_for, verl_version_for
from generator.sizing import size


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
    def within_margin(self) -> bool:
        """Every phase under the GPU with the sizing's margin (memory.MARGIN_RESERVED_PER_ALLOCATED)."""
        return self.fits and all(phase.margin_gib <= self.gpu_memory_gib for phase in self.phases)

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
               gpus: int | None = None, row_tokens: float | None = None, lora_rank: int = 0) -> PlanInputs:
    """The plan of what `render` writes for the node type on `nodes` nodes (the veRL it runs, its run and sizing),
    on those nodes' GPUs unless `gpus` says where it ran, with rows at full length unless `row_tokens` says; with the
    actor's LoRA at `lora_rank` where above 0."""
    version = lora_version_for(verl_version_for(catalog.verl, shape, algorithm), lora_rank)
    run = run_for(algorithm, nodes, verl_version=version, lora_rank=lora_rank)
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
    values = inputs_for(catalog, shape, catalog.models[run.values_model], algorithm, nodes, lora_rank=run.lora_rank)
    inputs = inputs_for(catalog, shape, catalog.models[run.model], algorithm, nodes, run.gpus, run.row_tokens,
                        run.lora_rank)
    sizing = replace(values.sizing, **run.overrides)
    prompts = run.rows // inputs.run.responses_per_prompt  # the lab may cut a step's prompts (the 7B LoRA run: 32)
    if prompts != sizing.train_batch_size:
        sizing = replace(sizing, train_batch_size=prompts,
                         ppo_mini_batch_size=min(sizing.ppo_mini_batch_size, prompts))
    return replace(inputs, sizing=sizing,
                   shape=replace(shape, gpu_model=run.gpu, gpu_memory_gib=run.gpu_memory_gib))


def measured_plans(catalog: Catalog, runs: tuple[MeasuredRun, ...]) -> Measured:
    return tuple((run, measured_inputs(catalog, run)) for run in runs)
