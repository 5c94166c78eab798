"""Writes values/<shape>.yaml for each GPU node type through jinja2; reads the platform overlays to copy."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import jinja2
import yaml

from generator import paths
from generator.algorithms import Algorithm, algorithms
from generator.catalog import Catalog, GpuShape, ModelProfile, VerlRelease
from generator.planwork import uses_reference
from generator.rolloutpool import RolloutPool
from generator.runshape import RESOURCE_SHARE, RunShape, Sizing
from generator.sizing import DYNAMIC_BATCHING_VERSIONS, size
from generator.verlversions import verl_versions

# veRL's LoRA guide advises layered_summon (the actor's shards gathered a layer at a time for the adapter's sync) on
# GPUs under 48 GB.
LAYERED_SUMMON_BELOW_GIB = 48
# GPU node pools are commonly tainted with the GPU resource name; tolerating an absent taint is harmless.
GPU_TOLERATION = {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}

_environment = jinja2.Environment(
    loader=jinja2.FileSystemLoader(paths.TEMPLATES),
    undefined=jinja2.StrictUndefined,
    keep_trailing_newline=True,
)


def tolerations(shape: GpuShape) -> list[dict[str, str]]:
    from_taints = [
        {"key": taint["key"], "operator": "Equal", "value": taint["value"], "effect": taint["effect"]}
        if "value" in taint
        else {"key": taint["key"], "operator": "Exists", "effect": taint["effect"]}
        for taint in shape.taints
    ]
    return [GPU_TOLERATION] + [t for t in from_taints if t["key"] != GPU_TOLERATION["key"]]


def component_defaults(name: str) -> dict[str, Any]:
    """A component's own values.yaml: its defaults, which the umbrella's values.yaml leaves as they are (its
    section of each component sets only `enabled`)."""
    return yaml.safe_load((paths.subchart_dir(name) / "values.yaml").read_text())


def default_verl_version() -> str:
    return str(component_defaults("ppo-job")["verlVersion"])


def verl_version_for(release: VerlRelease, shape: GpuShape, algorithm: Algorithm) -> str:
    """The veRL a node type's values run: the catalog's release, or the chart's default for the vendor guide's
    shape; the newest that has the algorithm where that one has not."""
    version = default_verl_version() if shape.vendor_guide else release.version
    return version if version in algorithm.versions else algorithm.versions[-1]


def sized_shapes(catalog: Catalog, model: ModelProfile,
                 algorithm: Algorithm) -> list[tuple[GpuShape, str, Sizing]]:
    """Each node type of the catalog with the veRL its values run and their sizing on its default node count
    (what `shapes` prints and docs/node-types.md's table shows)."""
    sized = []
    for shape in catalog.shapes.values():
        version = verl_version_for(catalog.verl, shape, algorithm)
        run = run_for(algorithm, shape.default_nodes, verl_version=version)
        sized.append((shape, version, size(shape, model, run)))
    return sized


def run_for(algorithm: Algorithm, nodes: int, responses_per_prompt: int | None = None,
            resource_share: float = RESOURCE_SHARE, verl_version: str = "", lora_rank: int = 0) -> RunShape:
    """The run an algorithm makes: its rollout.n unless one is given, whether it trains a critic, and the actor's LoRA
    rank (0: the whole model trains)."""
    return RunShape(nodes=nodes, responses_per_prompt=responses_per_prompt or algorithm.responses_per_prompt,
                    critic=algorithm.critic, reference=uses_reference(algorithm), resource_share=resource_share,
                    verl_version=verl_version, lora_rank=lora_rank)


def lora_version_for(version: str, lora_rank: int) -> str:
    """A LoRA run needs a veRL that reads LoRA (files/verl-versions.yaml loraKeys) and the token budgets the sizing
    measured: the newest such version where the node type's own has not."""
    if not lora_rank:
        return version
    with_lora = [entry.version for entry in verl_versions() if dict(entry.other).get("loraKeys")]
    return version if version in with_lora and version in DYNAMIC_BATCHING_VERSIONS else with_lora[-1]


def lora_alpha(rank: int) -> int:
    """alpha = rank (a scaling of 1), as veRL's LoRA guide's reference run (rank 32, alpha 32)."""
    return rank


def values_file_name(shape: GpuShape, algorithm: Algorithm, lora_rank: int = 0, pool: GpuShape | None = None) -> str:
    """values/<shape>.yaml for PPO, the chart's default algorithm; <shape>-<algorithm>.yaml for the others; -lora<rank>
    after either for a LoRA run; -rollout-<pool's shape> after all for a rollout pool of that node type."""
    name = shape.name if algorithm.name == "ppo" else f"{shape.name}-{algorithm.name}"
    name = f"{name}-lora{lora_rank}" if lora_rank else name
    return f"{name}-rollout-{pool.name}.yaml" if pool else f"{name}.yaml"


def render_shape(shape: GpuShape, model: ModelProfile, run: RunShape, algorithm: Algorithm | None = None,
                 release: VerlRelease | None = None, pool: RolloutPool | None = None,
                 pool_summary: str = "") -> str:
    """Values for PPO unless another algorithm is given. The run's veRL version is written where it is not the
    chart's default, with the release's image where it is that release's. With a rollout pool (veRL 0.9.1's
    separate_async): the pool's size, placement and resources from its node type, its replicas' tensor parallel size
    and memory share from its GPU (generator/rolloutpool.py), every training setting from the training node type."""
    algorithm = algorithm or algorithms()["ppo"]
    sizing = size(shape, model, run)
    if pool:
        sizing = replace(sizing, tensor_parallel=pool.tensor_parallel, rollout_memory_fraction=pool.memory_fraction)
    version = run.verl_version if run.verl_version != default_verl_version() else ""
    image = release if release and version and version == release.version else None
    # The catalog's release (veRL 0.9.1) serves its async rollout's metrics: on, with their dashboard beside Ray's.
    dashboards = component_defaults("observability")["dashboards"]["include"] + ["rollout"] if image else None
    return _environment.get_template("shape-values.yaml.j2").render(
        shape=shape, model=model, run=run, sizing=sizing, tolerations=tolerations(shape),
        algorithm=algorithm, verl_version=version, image=image, dashboards=dashboards,
        lora_alpha=lora_alpha(run.lora_rank), layered_summon=shape.gpu_memory_gib < LAYERED_SUMMON_BELOW_GIB,
        file_name=values_file_name(shape, algorithm, run.lora_rank, pool.shape if pool else None),
        pool=pool, pool_tolerations=tolerations(pool.shape) if pool else [], pool_summary=pool_summary,
    )


def platform_overlays() -> dict[str, str]:
    """Platform overlays by file name, as values/platforms/ holds them (plain files: nothing in them varies)."""
    return {path.name: path.read_text() for path in sorted(paths.PLATFORMS.glob("*.yaml"))}


def write(path: Path, text: str) -> bool:
    """Writes text when it differs; returns whether the file changed."""
    if path.exists() and path.read_text() == text:
        return False
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return True
