"""A plan as a person reads it: the text `python -m generator plan` prints, and docs/sizing.md's table of the plan
against every measured run."""

from __future__ import annotations

from generator.catalog import Catalog
from generator.memory import adapter_params
from generator.measurements import MeasuredRun
from generator.plan import Plan, measured_plans, plan
from generator.planfixes import Fix, overflow_lines
from generator.planwork import MODELLED_VERL, PlanInputs


def _settings_line(inputs: PlanInputs) -> str:
    sizing = inputs.sizing
    if sizing.dynamic_batching:
        batching = (f"token budgets {sizing.train_token_budget:,} (training) / {sizing.forward_token_budget:,} "
                    f"(forward-only) / {sizing.critic_token_budget:,} (the critic's)")
    else:
        batching = (f"fixed micro batches {sizing.micro_batch} / {sizing.log_prob_micro_batch} / "
                    f"{sizing.critic_micro_batch} rows (actor / log-prob / critic)")
    offloads = [name for name, on in (("parameters", sizing.param_offload), ("optimizer", sizing.optimizer_offload))
                if on]
    return (f"{batching}; gradient checkpointing {'on' if sizing.gradient_checkpointing else 'off'}; offload: "
            f"{', '.join(offloads) or 'none'}; rollout TP {sizing.tensor_parallel} at "
            f"{sizing.rollout_memory_fraction} of the GPU")


def _parts(parts) -> str:
    return ", ".join(f"{part.label} {part.gib:.1f}" for part in parts if part.gib >= 0.05)


def memory_lines(planned: Plan) -> list[str]:
    memory = planned.gpu_memory_gib
    lines = [f"{'phase':<14} {'torch GiB':>9} {'GPU GiB':>8} {'of GPU':>7}  what it holds (GiB)"]
    for phase in planned.phases:
        held = "; ".join(filter(None, [_parts(phase.training),
                                       phase.engine and f"rollout engine: {_parts(phase.engine)}"]))
        flag = "  OVERFLOWS" if phase in planned.overflows else ""
        lines.append(f"{phase.name:<14} {phase.allocated_gib:>9.1f} {phase.gpu_gib:>8.1f} "
                     f"{phase.gpu_gib / memory:>7.0%}  {held}{flag}")
        lines.extend(f"{'':<14} note: {note}" for note in phase.notes)
    return lines


def time_lines(planned: Plan) -> list[str]:
    time = planned.time
    if time.reference is None:
        return ["time: no measured run to take seconds from (generator/measurements.yaml)"]
    reference = time.reference
    lines = [f"time a step, from the measured run `{reference.name}` ({reference.source}): its seconds a micro "
             "batch (the rollout: a decode step), scaled to this plan's count and size of them and its parameters"]
    shared = set.intersection(*(set(phase.extrapolated) for phase in time.phases)) if time.phases else set()
    for phase in time.phases:
        own = [why for why in phase.extrapolated if why not in shared]
        verdict = "extrapolated" if phase.extrapolated else "measured"
        lines.append(f"  {phase.name:<14} {phase.seconds:>8.2f} s  {verdict}{': ' + '; '.join(own) if own else ''}")
    lines.append(f"  {'the rest':<14} {time.rest_seconds:>8.2f} s  measured (the driver between phases)")
    lines.append(f"step {time.seconds:.2f} s, {time.tokens_per_second:,.0f} tokens/s over {planned.inputs.gpus} GPUs "
                 f"({time.tokens_per_step:,.0f} tokens a step)")
    if shared:
        lines.append("extrapolated beyond the measurements: " + "; ".join(sorted(shared)))
    return lines


def lora_lines(inputs: PlanInputs) -> list[str]:
    """What a LoRA plan rests on that no run has measured (generator/memory.py LORA_*)."""
    rank = inputs.run.lora_rank
    if not rank:
        return []
    adapters = adapter_params(inputs.model, rank)
    share = adapters / 1e9 / inputs.model.params_billion
    return [f"LoRA rank {rank}, all-linear: {adapters / 1e6:,.1f}M adapter parameters ({share:.1%} of the model) "
            "trained over a frozen bf16 base" + (", the critic's alike" if inputs.run.critic else "")
            + "; the reference is the actor with its adapters off",
            "  measured at 7B on one H200 (the measured run lora-7b-grpo, docs/sizing.md's Plan table): the bf16 base "
            "and adapters as planned, the training peak below the plan (the activations, taken as a full fine-tune's, "
            "err high); unmeasured apart: vLLM's adapter slot, the adapters' optimizer states"
            + (", the critic's adapters (planned as the actor's)" if inputs.run.critic else "")]


def plan_text(planned: Plan, fixes: tuple[Fix, ...], nodes: int, verl_version: str, full_rows: bool,
              error: float = 0.0) -> str:
    """error: the plan's largest error at the measured runs (model_error); a fit closer than that is said to be."""
    inputs = planned.inputs
    shape, model = inputs.shape, inputs.model
    rows = "rows planned at their full length" if full_rows else f"rows of {inputs.row_tokens:,.0f} tokens"
    lines = [
        f"plan: {model.name} ({model.params_billion:g}B parameters), {inputs.algorithm.name}, on {shape.name}: "
        f"{nodes} node(s) x {shape.gpus_per_node} {shape.gpu_model} = {inputs.gpus} GPUs of "
        f"{shape.gpu_memory_gib:g} GiB",
        f"values (veRL {verl_version}): {_settings_line(inputs)}",
        f"batch: {inputs.sizing.train_batch_size} prompts x {inputs.run.responses_per_prompt} response(s) of up to "
        f"{inputs.run.sequence_length} tokens, mini batch {inputs.sizing.ppo_mini_batch_size}; {rows}",
        f"memory a GPU, as veRL {MODELLED_VERL} holds it (torch: the training process's allocation, what "
        "max_memory_allocated reports; GPU: what nvidia-smi shows)"
        + ("" if verl_version == MODELLED_VERL else f"; these values run veRL {verl_version}: this is them run "
           f"with veRL {MODELLED_VERL} (--set-string ppo-job.verlVersion={MODELLED_VERL}), as the measured seed "
           "run did"),
        *memory_lines(planned),
        *lora_lines(inputs),
    ]
    peak = planned.peak
    if planned.fits:
        lines.append(f"fits: the peak is {peak.name}, {peak.gpu_gib:.1f} of {shape.gpu_memory_gib:g} GiB "
                     f"({peak.gpu_gib / shape.gpu_memory_gib:.0%})")
        if peak.gpu_gib * (1 + error) > shape.gpu_memory_gib:
            lines.append(f"  narrowly: within the plan's error at the measured runs ({error:.0%}, docs/sizing.md)")
    else:
        lines.append("does not fit: " + "; ".join(overflow_lines(inputs)))
        if fixes:
            lines.append("what to change (each alone makes every phase fit):")
            lines.extend(f"  - {fix.change}: peak {fix.peak_gib:.1f} GiB ({fix.peak_phase})" for fix in fixes)
        else:
            lines.append("no single change fits (token budget, micro batch, checkpointing, offload, the rollout's "
                         "share or tensor parallel, up to 16 nodes): a GPU with more memory, or a smaller model")
    lines.extend(time_lines(planned))
    return "\n".join(lines) + "\n"


def _difference(predicted: float, measured: float | None) -> str:
    if measured is None:
        return f"{predicted:.1f} / -"
    return f"{predicted:.1f} / {measured:.1f} ({predicted / measured - 1:+.0%})"


def measured_rows(catalog: Catalog, runs: tuple[MeasuredRun, ...]) -> list[tuple[MeasuredRun, Plan]]:
    measured = measured_plans(catalog, runs)
    return [(run, plan(inputs, measured)) for run, inputs in measured]


def model_error(catalog: Catalog, runs: tuple[MeasuredRun, ...]) -> float:
    """The plan's largest relative error at the measured runs, either peak."""
    errors = [abs(predicted / measured - 1) for run, planned in measured_rows(catalog, runs)
              for predicted, measured in ((planned.peak.gpu_gib, run.peak_gpu_gib),
                                          (planned.training_peak.allocated_gib, run.peak_allocated_gib))
              if measured]
    return max(errors, default=0.0)


def _markdown_table(header: list[str], rows: list[list[object]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(str(cell) for cell in row) + " |" for row in rows]
    return "\n".join(lines)


def measured_table(catalog: Catalog, runs: tuple[MeasuredRun, ...]) -> str:
    header = ["run", "model", "values of", "GPUs", "settings", "torch peak GiB: plan / measured",
              "GPU peak GiB: plan / measured", "peak phase (plan)", "source"]
    rows = []
    for run, planned in measured_rows(catalog, runs):
        settings = run.settings
        batching = (f"budget {settings.train_token_budget:,}" if settings.train_token_budget
                    else f"micro batch {settings.micro_batch}")
        checkpointing = "checkpointing " + ("on" if settings.gradient_checkpointing else "off")
        values = f"`{run.shape}`" + (f" cut to {run.cut_to_gpus} GPU(s)" if run.cut_to_gpus else "")
        if run.sized_model:
            values += f" for {run.sized_model}"
        rows.append([f"`{run.name}`", run.model, values, f"{run.gpus} x {run.gpu}",
                     f"{batching}, {checkpointing}, rollout {settings.rollout_memory_fraction}",
                     _difference(planned.training_peak.allocated_gib, run.peak_allocated_gib),
                     _difference(planned.peak.gpu_gib, run.peak_gpu_gib),
                     f"{planned.training_peak.name} / {planned.peak.name}",
                     f"`{run.source.removeprefix('docs/')}`"])
    return _markdown_table(header, rows)


def held_out_table(catalog: Catalog, runs: tuple[MeasuredRun, ...]) -> str:
    """Each measured run's seconds a step as the plan predicts them from the other runs alone: how far the time model
    carries from the run it takes its seconds from to one it has not seen (a run of its own size, where one is
    measured, is what a real plan uses)."""
    header = ["run", "model", "seconds a step: plan from the others / measured", "from the run", "gen: plan / measured",
              "update_actor: plan / measured"]
    rows = []
    measured = measured_plans(catalog, runs)
    for run, inputs in measured:
        others = tuple(pair for pair in measured if pair[0].name != run.name)
        time = plan(inputs, others).time
        phases = {phase.name: phase.seconds for phase in time.phases}
        rows.append([f"`{run.name}`", run.model, _difference(time.seconds, run.seconds["step"]),
                     f"`{time.reference.name}`" if time.reference else "-",
                     _difference(phases["gen"], run.seconds.get("gen")),
                     _difference(phases["update_actor"], run.seconds.get("update_actor"))])
    return _markdown_table(header, rows)
