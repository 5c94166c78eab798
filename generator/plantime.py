"""Seconds of each phase of a step, from the nearest measured run (generator/measurements.yaml), and every way the
plan differs from it."""

from __future__ import annotations

import math
from dataclasses import dataclass

from generator.measurements import MeasuredRun
from generator.planwork import PHASE_ORDER, TRAINING_PHASES, PlanInputs, micro_batch_cost, phase_work

@dataclass(frozen=True)
class PhaseTime:
    name: str
    seconds: float
    extrapolated: tuple[str, ...] = ()  # why the figure is not a measurement; empty: measured


@dataclass(frozen=True)
class StepTime:
    reference: MeasuredRun | None
    phases: tuple[PhaseTime, ...] = ()
    rest_seconds: float = 0.0  # the step's time outside the phases veRL times (the driver), as measured
    tokens_per_step: float = 0.0

    @property
    def seconds(self) -> float:
        return sum(phase.seconds for phase in self.phases) + self.rest_seconds

    @property
    def tokens_per_second(self) -> float:
        return self.tokens_per_step / self.seconds if self.seconds else 0.0


Measured = tuple[tuple[MeasuredRun, PlanInputs], ...]  # each measured run with the plan of what it ran


def _same_batching(inputs: PlanInputs, run: MeasuredRun) -> bool:
    return bool(inputs.sizing.dynamic_batching) == bool(run.settings.train_token_budget)


def _same_lora(inputs: PlanInputs, run: MeasuredRun) -> bool:
    """Both train LoRA adapters, or both the whole model."""
    return (run.lora_rank > 0) == (inputs.run.lora_rank > 0)


# Two measured runs of the same batch (256 rows of up to 256 tokens, vLLM's final output only, one H200) at two
# model sizes: they fit how a decode step's seconds grow with the parameters it reads (decode_fixed_params_billion).
DECODE_FIT_RUNS = ("generated-final-output", "ladder-3b-generated")


def decode_fixed_params_billion(measured: Measured) -> float:
    """A decode step's fixed cost, in parameters' worth of weight reads: the K of seconds in proportion to (parameters
    a replica + K), fitted through DECODE_FIT_RUNS (0.5B 3.01 s, 3B 3.53 s: K about 14.7B, so a step of a 7B
    replica costs 1.5x a 0.5B one's, not 15x; 7B's LoRA run measured 3.67 s for its 160 rows). 0 (seconds in
    proportion to the parameters) where the two are not both measured."""
    fit = [(run.seconds["gen"], plan.model.params_billion / plan.sizing.tensor_parallel)
           for run, plan in measured if run.name in DECODE_FIT_RUNS]
    if len(fit) != 2 or fit[0][0] == fit[1][0]:
        return 0.0
    (t1, p1), (t2, p2) = fit
    return max(0.0, (t1 * p2 - t2 * p1) / (t2 - t1))


# The same values on one machine asking vLLM for the final output only and for every token's output (2026-12-03e):
# their rollouts' ratio (3.01 s against 4.27; vLLM's async engine alone at 1.5B: 3.66 against 5.02, 0.73).
OUTPUT_KIND_PAIR = ("generated-final-output", "generated-every-step")


def final_output_ratio(measured: Measured) -> float:
    """The rollout's seconds asking for the final output only over those asking for every token's output, from
    OUTPUT_KIND_PAIR; 1 where the pair is not both measured."""
    gen = {run.name: run.seconds["gen"] for run, _ in measured if run.name in OUTPUT_KIND_PAIR}
    return gen[OUTPUT_KIND_PAIR[0]] / gen[OUTPUT_KIND_PAIR[1]] if len(gen) == 2 else 1.0


def time_reference(inputs: PlanInputs, measured: Measured) -> tuple[MeasuredRun, PlanInputs] | None:
    """The measured run whose seconds fit this plan best: the same batching (token budgets or fixed micro batches),
    then the same algorithm, then LoRA or not (a LoRA update skips the base's weight grads), then the nearest model
    size, then the same output kind of the rollout, then the same checkpointing; of equal ones the first."""
    return min(measured, default=None, key=lambda pair: (
        not _same_batching(inputs, pair[0]), pair[0].algorithm != inputs.algorithm.name,
        not _same_lora(inputs, pair[0]),
        abs(math.log(pair[1].model.params_billion / inputs.model.params_billion)),
        pair[0].settings.final_output_only != inputs.sizing.final_output_only,
        pair[0].settings.gradient_checkpointing != inputs.sizing.gradient_checkpointing))


def differences(inputs: PlanInputs, run: MeasuredRun, theirs: PlanInputs) -> list[str]:
    """Every way this plan differs from the measured run it takes its seconds from."""
    found = []
    if inputs.model.params_billion != theirs.model.params_billion:
        found.append(f"{inputs.model.params_billion:g}B parameters against {theirs.model.params_billion:g}B, "
                     "scaled linearly")
    if inputs.shape.gpu_model != run.gpu:
        found.append(f"measured on {run.gpu} only")
    if inputs.gpus != run.gpus:
        found.append(f"{inputs.gpus} GPUs against {run.gpus}: no communication counted")
    if not _same_batching(inputs, run):
        found.append("measured with the other batching (token budgets against fixed micro batches)")
    if inputs.sizing.gradient_checkpointing != run.settings.gradient_checkpointing:
        found.append("measured with gradient checkpointing " + ("on" if run.settings.gradient_checkpointing else "off"))
    if inputs.algorithm.name != run.algorithm:
        found.append(f"measured with {run.algorithm}")
    if not _same_lora(inputs, run):
        found.append("measured " + ("with LoRA" if run.lora_rank else "training the whole model"))
    if inputs.sizing.final_output_only != run.settings.final_output_only:
        found.append("measured asking vLLM for " + ("the final output only" if run.settings.final_output_only
                                                     else "every token's output"))
    return found


def step_time(inputs: PlanInputs, measured: Measured) -> StepTime:
    """Each phase's seconds from the reference run's: its seconds a micro batch, times this plan's count of them,
    times its work against the measured one's: parameters times tokens, each micro batch counted at no fewer
    tokens than its model's launch floor. The rollout: its seconds a decode step, times the steps, times the rows
    against the measured ones where more (launch-bound below), times the parameters a replica. The weights'
    hand-over by parameters, the advantage by rows."""
    tokens_per_step = inputs.rows * inputs.row_tokens
    chosen = time_reference(inputs, measured)
    if chosen is None:
        return StepTime(None, tokens_per_step=tokens_per_step)
    run, theirs = chosen
    mine, their_work = phase_work(inputs), phase_work(theirs)
    shared = differences(inputs, run, theirs)
    fixed = decode_fixed_params_billion(measured)
    output_kind = 1.0
    if inputs.sizing.final_output_only != theirs.sizing.final_output_only:
        output_kind = final_output_ratio(measured) ** (1 if inputs.sizing.final_output_only else -1)
    phases = []
    for name in PHASE_ORDER:
        if name not in mine:
            continue
        source = name if name in run.seconds else "old_log_prob"  # the reference pass: the same forward
        ours, measured_work = mine[name], their_work[source]
        size = ours.size / measured_work.size
        mine_params, their_params = inputs.model.params_billion, theirs.model.params_billion
        if name == "gen":  # a decode step: its fixed cost and the replica's weights shard it reads
            each = max(1.0, size) * output_kind * (mine_params / inputs.sizing.tensor_parallel + fixed) / (
                their_params / theirs.sizing.tensor_parallel + fixed)
        elif ours.floor:
            training = name in TRAINING_PHASES
            each = micro_batch_cost(ours.size, mine_params, training and inputs.sizing.gradient_checkpointing,
                                    training and inputs.run.lora_rank > 0) / micro_batch_cost(
                measured_work.size, their_params, training and theirs.sizing.gradient_checkpointing,
                training and theirs.run.lora_rank > 0)
        else:
            each = size
        scale = ours.count / measured_work.count * each
        why = shared + ([] if source == name else [f"taken as {source}'s"])
        phases.append(PhaseTime(name, run.seconds[source] * scale, tuple(why)))
    rest = run.seconds["step"] - sum(seconds for name, seconds in run.seconds.items() if name != "step")
    return StepTime(run, tuple(phases), max(0.0, rest), tokens_per_step)
