"""The rollout pool of veRL 0.9.1's separate_async (`render --rollout-shape`): each rollout replica sized for the pool's
own GPU (generator/memory.py), and the pool's node count balanced against the training group's from the per-phase
time model the plan uses (generator/plantime.py, on generator/measurements.yaml's runs)."""

from __future__ import annotations

from dataclasses import dataclass, replace

from generator.catalog import GpuShape, ModelProfile
from generator.memory import pool_replica_gib, pool_rollout_memory_fraction, rollout_gpu_bytes
from generator.plantime import Measured, StepTime, step_time
from generator.planwork import PlanInputs
from generator.sizing import pod_resources

# The most pool nodes the balance tries: the generation time stops falling long before (a replica's decode step is
# launch-bound below the measured rows).
MAX_POOL_NODES = 64


class PoolError(ValueError):
    """A rollout node type that cannot serve the model: the message names --rollout-shape, the value and the fix."""


@dataclass(frozen=True)
class RolloutPool:
    shape: GpuShape
    nodes: int
    tensor_parallel: int
    memory_fraction: float
    cpu: str
    memory: str
    gen_seconds: float  # predicted generation of one step's batch on the pool
    train_seconds: float  # predicted training phases of one step on the training group
    reason: str  # why this many nodes
    reference: str  # the measured run the seconds come from

    @property
    def gpus(self) -> int:
        return self.nodes * self.shape.gpus_per_node

    @property
    def replicas(self) -> int:
        return self.gpus // self.tensor_parallel

    def summary(self, training: PlanInputs) -> str:
        """One line a person scans: the pool, its replicas, the predicted seconds on each side and why."""
        training_nodes = training.gpus // training.shape.gpus_per_node
        return (f"rollout pool: {self.nodes} node(s) x {self.shape.gpus_per_node} {self.shape.gpu_model} = "
                f"{self.replicas} replica(s) of TP {self.tensor_parallel} at {self.memory_fraction} of "
                f"{self.shape.gpu_memory_gib:g} GiB; training: {training_nodes} node(s) x "
                f"{training.shape.gpus_per_node} {training.shape.gpu_model}; predicted gen {self.gen_seconds:.1f} s vs "
                f"train {self.train_seconds:.1f} s a step ({self.reason}; seconds from the measured run "
                f"{self.reference}, not scaled by GPU speed)" + self.placement_note(training))

    def placement_note(self, training: PlanInputs) -> str:
        """veRL 0.9.1 places its pools by CPU and GPU only: pool nodes of a training node's GPUs or more may take a
        training group (docs/operations.md, "The rollout pool: where each group runs")."""
        if self.shape.gpus_per_node < training.shape.gpus_per_node:
            return ""
        return (f". Note: the pool's nodes have {self.shape.gpus_per_node} GPUs, as many as a training node or more: "
                "Ray may place a training group on a pool node (check with `ray list placement-groups --detail`, "
                "docs/operations.md)")


def pool_tensor_parallel(shape: GpuShape, model: ModelProfile, inputs: PlanInputs) -> int:
    """The smallest tensor parallel size (a power of two within one node) with which one replica generates on the pool's
    GPU: more, smaller replicas take more of the batch at once. Refused where even the node's every GPU cannot."""
    fraction, tp = pool_rollout_memory_fraction(shape.gpu_memory_gib), 1
    while tp <= shape.gpus_per_node:
        if pool_replica_gib(model, inputs.run, tp) <= fraction * shape.gpu_memory_gib:
            return tp
        tp *= 2
    largest = tp // 2
    weights_gib = rollout_gpu_bytes(model, inputs.run, largest, largest)[0] / 2**30
    raise PoolError(
        f"--rollout-shape {shape.name}: one rollout replica of {model.name} does not fit its GPUs even at tensor "
        f"parallel {largest}, all of a node's ({weights_gib:.1f} GiB of weights a GPU, with workspace and one row's KV "
        f"cache {pool_replica_gib(model, inputs.run, largest):.1f} GiB, against {fraction} of {shape.gpu_memory_gib:g} "
        f"GiB); give a node type with more GPU memory or more GPUs a node (python -m generator shapes), or a smaller "
        "--model")


def pool_inputs(training: PlanInputs, shape: GpuShape, nodes: int, tp: int, fraction: float) -> PlanInputs:
    """The plan of the pool's generation: the training run's batch and rows on the pool's GPUs and replicas."""
    sizing = replace(training.sizing, tensor_parallel=tp, rollout_memory_fraction=fraction)
    return replace(training, shape=shape, sizing=sizing, gpus=nodes * shape.gpus_per_node)


def _gen_seconds(timed: StepTime) -> float:
    """The seconds of a step's generation phase."""
    return sum(phase.seconds for phase in timed.phases if phase.name == "gen")


def balanced_pool(training: PlanInputs, shape: GpuShape, measured: Measured) -> RolloutPool:
    """The fewest pool nodes whose predicted generation of a step's batch takes no longer than the training group's
    phases of that step (the two overlap in separate_async: a step takes the longer); where no size gets there, the
    fewest at which generation stops getting faster (more nodes would idle)."""
    tp = pool_tensor_parallel(shape, training.model, training)
    fraction = pool_rollout_memory_fraction(shape.gpu_memory_gib)
    trained = step_time(training, measured)
    train_seconds = trained.seconds - _gen_seconds(trained)

    def gen_seconds(nodes: int) -> float:
        return _gen_seconds(step_time(pool_inputs(training, shape, nodes, tp, fraction), measured))

    nodes, gen = 1, gen_seconds(1)
    reason = "generation keeps up with training on one node"
    while gen > train_seconds:
        more = gen_seconds(nodes + 1) if nodes < MAX_POOL_NODES else gen
        if more >= gen:
            reason = "more nodes generate no faster (a replica's decode step is launch-bound): training waits"
            break
        nodes, gen = nodes + 1, more
        reason = "the fewest nodes whose generation keeps up with training"
    cpu, memory = pod_resources(shape, training.run.resource_share)
    reference = trained.reference.name if trained.reference else "none"
    return RolloutPool(shape, nodes, tp, fraction, cpu, memory, gen, train_seconds, reason, reference)
