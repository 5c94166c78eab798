"""The plan of a values file as Helm merges it: `generator check` asks whether a run of those values would run out of
GPU memory (the same plan as `generator plan`, from the values' own settings rather than the sizing's), so that a
hand-edited micro batch or token budget fails at check, not an hour into the run."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from generator.algorithms import algorithms
from generator.catalog import Catalog, GpuShape
from generator.finding import Finding
from generator.plan import Plan, plan
from generator.planfixes import fixes
from generator.planwork import PlanInputs, uses_reference
from generator.runshape import RunShape, Sizing


def _get(values: dict[str, Any], dotted: str) -> Any:
    node: Any = values
    for key in dotted.split("."):
        node = node.get(key) if isinstance(node, dict) else None
    return node


def unplanned_reason(values: dict[str, Any], catalog: Catalog) -> str:
    """Why the plan cannot stand for these values ("" where it can): a model the catalog does not know, or settings
    the plan holds as one (it plans one offload for every trained model, and the critic's LoRA as the actor's)."""
    job = values.get("ppo-job") or {}
    if not job.get("enabled", True):
        return "no ppo-job"
    if _get(values, "raycluster.gpuShape.gpuMemoryGiB") is None or None in (
            _get(values, "global.gpu.perNode"), _get(values, "global.gpu.nodes")):
        return "no GPU node type (raycluster.gpuShape) or GPU count (global.gpu)"
    path = _get(job, "model.path")
    if path not in {model.path for model in catalog.models.values()}:
        return f"model.path {path} is none of the catalog's models"
    algorithm = algorithms().get(str(_get(job, "algorithm.name")))
    if algorithm is None:
        return "an algorithm the plan does not know"
    actor = (_get(job, "actor.paramOffload"), _get(job, "actor.optimizerOffload"))
    if algorithm.critic:
        if (_get(job, "critic.paramOffload"), _get(job, "critic.optimizerOffload")) != actor:
            return "the critic's offloads differ from the actor's"
        if int(_get(job, "critic.lora.rank") or 0) != int(_get(job, "model.lora.rank") or 0):
            return "the critic's LoRA rank differs from the actor's"
        if _get(job, "critic.model.path") not in (None, "", path):
            return "the critic is another model"
    if uses_reference(algorithm) and not _get(job, "model.lora.rank") and _get(job, "ref.paramOffload") != actor[0]:
        return "the reference's offload differs from the actor's"
    return ""


def values_plan(values: dict[str, Any], catalog: Catalog) -> Plan:
    """The plan of merged values that unplanned_reason finds plannable."""
    job, cluster = values["ppo-job"], values.get("raycluster") or {}
    gpu = (values.get("global") or {}).get("gpu") or {}
    model = next(model for model in catalog.models.values() if model.path == _get(job, "model.path"))
    algorithm = algorithms()[str(_get(job, "algorithm.name"))]
    declared = cluster.get("gpuShape") or {}
    known = catalog.shapes.get(str(declared.get("name")))
    shape = GpuShape(name=str(declared.get("name")), gpu_model=str(declared.get("gpuModel")),
                     gpu_memory_gib=float(declared["gpuMemoryGiB"]), gpus_per_node=int(gpu["perNode"]),
                     allocatable_cpu="", allocatable_memory="", default_nodes=int(gpu["nodes"]), node_labels={},
                     taints=[], rdma=False, documented=False, source="the values' raycluster.gpuShape")
    if known is not None:
        shape = replace(known, gpu_memory_gib=shape.gpu_memory_gib, gpus_per_node=shape.gpus_per_node)
    run = RunShape(nodes=int(gpu["nodes"]), train_batch_size=int(_get(job, "data.trainBatchSize")),
                   ppo_mini_batch_size=int(_get(job, "actor.ppoMiniBatchSize")),
                   responses_per_prompt=int(_get(job, "rollout.responsesPerPrompt") or algorithm.responses_per_prompt),
                   critic=algorithm.critic, reference=uses_reference(algorithm),
                   max_prompt_length=int(_get(job, "data.maxPromptLength")),
                   max_response_length=int(_get(job, "data.maxResponseLength")),
                   verl_version=str(job.get("verlVersion")), lora_rank=int(_get(job, "model.lora.rank") or 0),
                   rollout_on_pool=bool(_get(values, "global.rolloutPool.enabled")))
    dynamic = bool(_get(job, "actor.useDynamicBsz"))  # the token budgets count only with it (the sizing's 0 else)
    sizing = Sizing(train_batch_size=run.train_batch_size, ppo_mini_batch_size=run.ppo_mini_batch_size, cpu="",
                    memory="", tensor_parallel=int(_get(job, "rollout.tensorModelParallelSize")),
                    rollout_memory_fraction=float(_get(job, "rollout.gpuMemoryUtilization")),
                    micro_batch=int(_get(job, "actor.ppoMicroBatchSizePerGpu")),
                    log_prob_micro_batch=int(_get(job, "rollout.logProbMicroBatchSizePerGpu")),
                    ref_log_prob_micro_batch=int(_get(job, "ref.logProbMicroBatchSizePerGpu")),
                    critic_micro_batch=int(_get(job, "critic.ppoMicroBatchSizePerGpu")),
                    dynamic_batching=dynamic,
                    gradient_checkpointing=bool(_get(job, "model.enableGradientCheckpointing")),
                    train_token_budget=int(_get(job, "actor.ppoMaxTokenLenPerGpu")) if dynamic else 0,
                    forward_token_budget=int(_get(job, "rollout.logProbMaxTokenLenPerGpu")) if dynamic else 0,
                    critic_token_budget=int(_get(job, "critic.forwardMaxTokenLenPerGpu")) if dynamic else 0,
                    param_offload=bool(_get(job, "actor.paramOffload")),
                    optimizer_offload=bool(_get(job, "actor.optimizerOffload")),
                    final_output_only=bool(_get(job, "rollout.finalOutputOnly")))
    gpus = run.nodes * shape.gpus_per_node
    return plan(PlanInputs(shape, model, algorithm, run, sizing, gpus, run.sequence_length))


def memory_findings(values: dict[str, Any], catalog: Catalog, error: float) -> tuple[list[Finding], list[str]]:
    """One finding where the values' plan overflows the GPU by more than the plan's largest error at the measured runs
    (`error`, a share) or cannot run a phase at all, naming the phases and the changes that fit (as `--set`, and the
    generator's own values); a note where it overflows within that error. None where unplanned_reason finds the
    values beyond the plan."""
    if unplanned_reason(values, catalog):
        return [], []
    planned = values_plan(values, catalog)
    inputs, memory = planned.inputs, planned.gpu_memory_gib
    known = inputs.shape.name in catalog.shapes
    command = (f"--shape {inputs.shape.name} --model {inputs.model.name} --algorithm {inputs.algorithm.name}"
               + (f" --lora-rank {inputs.run.lora_rank}" if inputs.run.lora_rank else ""))
    changes = [fix.change for fix in fixes(inputs)][:3]
    generated = (f"the generator's values for this node type and model (python -m generator render "
                 f"{command.replace('--shape ', '')})" if known else "values rendered for this node type")
    fix = ("one of " + "; ".join(changes) + " (each alone fits by the plan), or " if changes else "") + generated
    overflows = sorted(planned.overflows, key=lambda phase: -phase.gpu_gib)
    problems = [problem for phase in overflows for problem in phase.problems]
    over = [phase for phase in overflows if phase.gpu_gib * (1 - error) > memory]
    shown = f"python -m generator plan {command} shows each phase" if known else "generator plan shows each phase"
    field = "raycluster.gpuShape.gpuMemoryGiB"
    if problems:
        return [Finding(field, f"{memory:g}", "cannot hold what the plan of these values needs: "
                        + "; ".join(problems), fix)], []
    if over:
        phases = ", ".join(f"{phase.name} {phase.gpu_gib:.1f}" for phase in over)
        return [Finding(field, f"{memory:g}", f"holds less than the plan of these values needs a GPU ({phases} GiB, "
                        f"beyond the plan's {error:.0%} error at the measured runs; {shown}): the run would stop "
                        "with CUDA out of memory", fix)], []
    return [], [f"the plan of these values has {phase.name} at {phase.gpu_gib:.1f} of {memory:g} GiB a GPU: over it, "
                f"but within the plan's {error:.0%} error at the measured runs, so it may run out of memory; {fix}"
                for phase in overflows]
