"""Writes values/<shape>.yaml for each GPU node type through jinja2, and copies the platform overlays."""

from __future__ import annotations

from pathlib import Path

import jinja2

from generator import paths
from generator.catalog import GpuShape, ModelProfile
from generator.sizing import RunShape, size

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


def render_shape(shape: GpuShape, model: ModelProfile, run: RunShape) -> str:
    return _environment.get_template("shape-values.yaml.j2").render(
        shape=shape, model=model, run=run, sizing=size(shape, model, run), tolerations=tolerations(shape)
    )


def platform_overlays() -> dict[str, str]:
    """Platform overlays by file name: plain files (nothing in them varies), copied to values/platforms/."""
    return {path.name: path.read_text() for path in sorted(paths.PLATFORMS.glob("*.yaml"))}


def write(path: Path, text: str) -> bool:
    """Writes text when it differs; returns whether the file changed."""
    if path.exists() and path.read_text() == text:
        return False
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return True
