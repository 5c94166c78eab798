"""The docs' tables, written from the tables they show: the algorithms and veRL versions of ppo-job's files/
(docs/algorithms.md), the catalog's node types as `shapes` sizes them (docs/node-types.md) and the plan against
every measured run (docs/sizing.md).

Each table sits between `<!-- generated: NAME ... -->` and `<!-- end: NAME -->` in its doc; `python -m generator
docs` rewrites what is between them and leaves the prose around them as it is.
"""

from __future__ import annotations

import re
from pathlib import Path

import yaml

from generator import paths
from generator.algorithms import Algorithm, algorithms
from generator.catalog import DEFAULT_MODEL, load_catalog
from generator.measurements import measured_runs
from generator.planreport import held_out_table, measured_table
from generator.render import sized_shapes
from generator.verlversions import VerlVersion, verl_versions, version_names

# Where each kind of KL term goes (files/algorithms.yaml's `kl`), as the chart renders it, and whether that
# needs the reference model.
KL_TERMS = {
    "coef": ("`algorithm.kl_ctrl.kl_coef` (as the seed renders it)", "as veRL decides"),
    "loss": ("in the actor's loss: `use_kl_loss`, `low_var_kl`", "yes"),
    "reward": ("in the reward: `use_kl_in_reward` where the version has it", "yes"),
    "none": ("none", "no"),
}


def _row(cells: list[object]) -> str:
    return "| " + " | ".join(str(cell) for cell in cells) + " |"


def _table(header: list[str], rows: list[list[object]]) -> str:
    return "\n".join([_row(header), "|" + "---|" * len(header), *map(_row, rows)])


def _versions_of(algorithm: Algorithm) -> str:
    return "all" if list(algorithm.versions) == version_names() else ", ".join(algorithm.versions)


def algorithms_table() -> str:
    rows = []
    for algorithm in algorithms().values():
        # A kind KL_TERMS has no words for yet shows as the table says it.
        kl_term, reference = KL_TERMS.get(algorithm.kl, (f"`{algorithm.kl}`", "yes"))
        estimator = f"`{algorithm.estimator}`" + "".join(f", `{override}`" for override in algorithm.overrides)
        least = f" (at least {algorithm.min_responses})" if algorithm.min_responses > 1 else ""
        rows.append([f"`{algorithm.name}`", estimator, "yes" if algorithm.critic else "no", kl_term, reference,
                     f"{algorithm.responses_per_prompt}{least}", _versions_of(algorithm)])
    return _table(["`algorithm.name`", "veRL estimator and fixed settings", "critic", "KL term (coefficient "
                   "`algorithm.klCoef`)", "reference model", "rollout.n default", "veRL"], rows)


def _renders(entry: VerlVersion) -> str:
    """What the chart renders for this version, from its facts."""
    said = [f"critic FSDP settings under `{entry.critic_fsdp_key}.*`",
            f"reward function under `{entry.custom_reward_key}.*`"]
    if not entry.kl_in_reward_key:
        said.append("no `algorithm.use_kl_in_reward`: the KL penalty is in the reward unless it is in the loss")
    if entry.reward_rollout_name:
        said.append("`reward.reward_model.rollout.name` (mandatory) rendered")
    if entry.rollout_mode:
        said.append(f"`rollout.mode={entry.rollout_mode}` rendered (the only mode it accepts)")
    if "hf" in entry.rollout_names and not entry.hf_samples_n:
        said.append("its HF rollout samples one response per prompt (n > 1 refused with it)")
    if entry.rollout_metrics:
        said.append(f"rollout-server metrics (`global.rolloutMetrics`) from {', '.join(entry.rollout_metrics)}")
    said.append(f"the critic's forward budget as `{entry.critic_forward_budget_key.lstrip('+')}`, its update packed by "
                f"`critic.{entry.critic_update_budget}`")
    if entry.trainer_mode_key:
        said.append(f"`trainer.mode` ({', '.join(entry.trainer_modes)}) as `{entry.trainer_mode_key}`")
    if entry.quick_poll_sampler:
        said.append("the chart's replay buffer, polled every `trainer.rolloutPollSeconds` (veRL's: 2 s)")
    other = dict(entry.other)
    if engines := other.pop("finalOutputRollouts", []):
        said.append(f"each sample's final output only (`rollout.finalOutputOnly`) from its {', '.join(engines)} "
                    "rollout, through the chart's agent loop manager")
    lora, bf16 = other.pop("loraKeys", []), other.pop("loraBaseDtype", False)
    rollouts, ranks = other.pop("loraRollouts", []), other.pop("loraVllmRanks", [])
    strategy = other.pop("loraActorStrategy", "")
    said.append(f"LoRA (`model.lora`, `critic.lora`): {', '.join(f'`{key}`' for key in lora)}"
                + (", the frozen base in bf16" if bf16 else "")
                + (f", the actor on `{strategy}`" if strategy else "")
                + (f", served by its {', '.join(rollouts)} rollout" if rollouts else "")
                + (f", ranks {', '.join(map(str, ranks))} with vLLM" if ranks else "") if lora else "no LoRA")
    if engines := other.pop("fsdpStrategies", []):
        said.append(f"training engines {', '.join(f'`{name}`' for name in engines)} in `extraArgs` (its FSDP config)")
    said += [f"`{key}`: {value}" for key, value in other.items()]
    return "; ".join(said)


def _chart_default_version() -> str:
    return str(yaml.safe_load((paths.subchart_dir("ppo-job") / "values.yaml").read_text())["verlVersion"])


def _image(entry: VerlVersion) -> str:
    """The chart's default image for the chart's default version, the catalog's for the catalog's release."""
    release = load_catalog().verl
    if entry.version == _chart_default_version():
        tag = yaml.safe_load(paths.CHART_VALUES.read_text())["global"]["image"]["tag"]
        return f"`{tag}` (the vendor guide's; the chart's default `global.image`)"
    if entry.version == release.version:
        return (f"`{release.image_repository}:{release.image_tag}` with veRL {entry.version} added "
                "([docs/node-types.md](node-types.md)): every node type's values but the guide's")
    return entry.image or f"an image with veRL {entry.version}"


def verl_versions_table() -> str:
    rows = [[entry.version + (" (default)" if entry.version == _chart_default_version() else ""), _image(entry),
             ", ".join(entry.rollout_names),
             ", ".join(name for name, algorithm in algorithms().items() if entry.version in algorithm.versions),
             _renders(entry)]
            for entry in verl_versions()]
    header = ["veRL", "image it pairs with", "rollout engines", "algorithms", "what the chart renders for it"]
    return _table(header, rows)


def node_types_table() -> str:
    catalog = load_catalog()
    rows = [[f"`{shape.name}`", shape.gpu_model, f"{shape.gpu_memory_gib:g}", shape.gpus_per_node, shape.default_nodes,
             version, sizing.tensor_parallel, sizing.micro_batch,
             sizing.train_token_budget if sizing.dynamic_batching else "-",
             "on" if sizing.gradient_checkpointing else "off", sizing.rollout_memory_fraction,
             "vendor" if shape.documented else "estimated"]
            for shape, version, sizing in sized_shapes(catalog, catalog.models[DEFAULT_MODEL], algorithms()["ppo"])]
    return _table(["shape", "GPU", "GiB", "GPUs/node", "nodes", "veRL", "rollout TP", "micro batch", "token budget",
                   "checkpointing", "rollout memory", "figures"], rows)


# Each doc's generated tables, by the name its markers carry, and what each is written from.
TABLES = {
    Path("docs/algorithms.md"): {
        "algorithms": (algorithms_table, "charts/verl-ppo/charts/ppo-job/files/algorithms.yaml"),
        "verl-versions": (verl_versions_table, "charts/verl-ppo/charts/ppo-job/files/verl-versions.yaml"),
    },
    Path("docs/node-types.md"): {
        "node-types": (node_types_table, "generator/catalog.yaml and generator/sizing.py"),
    },
    Path("docs/sizing.md"): {
        "plan-measured": (lambda: measured_table(load_catalog(), measured_runs()),
                          "generator/measurements.yaml and generator/plan.py"),
        "plan-held-out": (lambda: held_out_table(load_catalog(), measured_runs()),
                          "generator/measurements.yaml and generator/plantime.py"),
    },
}


def with_tables(text: str, doc: Path, tables: dict) -> str:
    """The doc's text with each table between its markers written anew."""
    for name, (table, source) in tables.items():
        block = re.compile(rf"<!-- generated: {re.escape(name)} .*?-->\n.*?<!-- end: {re.escape(name)} -->", re.DOTALL)
        if not block.search(text):
            raise ValueError(f"{doc}: no <!-- generated: {name} ... --> ... <!-- end: {name} --> markers for a table")
        written = (f"<!-- generated: {name} by `python -m generator docs` from {source}: edit that, not this "
                   f"table -->\n{table()}\n<!-- end: {name} -->")
        text = block.sub(lambda _, written=written: written, text)
    return text


def doc_tables() -> dict[Path, str]:
    """What each doc with generated tables must contain."""
    return {paths.ROOT / doc: with_tables((paths.ROOT / doc).read_text(), doc, tables)
            for doc, tables in TABLES.items()}
