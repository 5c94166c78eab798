"""values/examples/: overlays on a node type's values file. Each holds the keys where `render` of another run (model,
algorithm, LoRA) on that node type differs from the node type's file, with the render's own comments, so that the
example is the generator's sizing and never a hand-kept copy. `python -m generator docs` writes them."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from generator import paths
from generator.algorithms import algorithms
from generator.catalog import Catalog, load_catalog
from generator.render import lora_version_for, render_shape, run_for, verl_version_for

EXAMPLES_DIR = paths.VALUES_DIR / "examples"
KEY_LINE = re.compile(r"^(\s*)([A-Za-z0-9_.-]+):(.*)$")

Path_ = tuple[str, ...]


@dataclass(frozen=True)
class Example:
    name: str  # values/examples/<name>.yaml
    shape: str  # the node type whose values/<shape>.yaml it overlays
    model: str
    algorithm: str
    lora_rank: int
    about: tuple[str, ...]  # the header's lines before the generated ones


EXAMPLES = (
    Example("lora-7b", "seed-2gpu", "qwen2.5-7b", "grpo", 32, (
        "GRPO with LoRA on Qwen2.5-7B-Instruct, on the vendor guide's node type (2 nodes of 2 24 GiB GPUs).",
        "The adapter lands under the checkpoint directory; to resume from it or merge it for serving: "
        "docs/algorithms.md.")),
)


def render_command(example: Example) -> str:
    return (f"python -m generator render {example.shape} --model {example.model} --algorithm {example.algorithm}"
            + (f" --lora-rank {example.lora_rank}" if example.lora_rank else ""))


def rendered(example: Example, catalog: Catalog) -> str:
    """The values `render_command` writes for the example's node type."""
    shape, algorithm = catalog.shapes[example.shape], algorithms()[example.algorithm]
    version = lora_version_for(verl_version_for(catalog.verl, shape, algorithm), example.lora_rank)
    run = run_for(algorithm, shape.default_nodes, verl_version=version, lora_rank=example.lora_rank)
    return render_shape(shape, catalog.models[example.model], run, algorithm, catalog.verl)


def differing(base: dict[str, Any], full: dict[str, Any], prefix: Path_ = ()) -> set[Path_]:
    """The keys of `full` to write whole over `base`: new ones, and those whose value differs (mappings compared key by
    key). A key only `base` has stays as it is: an overlay cannot remove it."""
    found: set[Path_] = set()
    for key, value in full.items():
        path = (*prefix, key)
        if isinstance(value, dict) and isinstance(base.get(key), dict):
            found |= differing(base[key], value, path)
        elif key not in base or base[key] != value:
            found.add(path)
    return found


def overlay_body(text: str, written: set[Path_]) -> list[str]:
    """The lines of a rendered values file that write `written` (each key's line and its block) and the keys above
    them, each with the comment lines just before it. The render's YAML is block mappings of one key a line, values
    inline, which the key lines' indentation orders."""
    lines: list[str] = []
    stack: list[tuple[int, str]] = []
    comments: list[str] = []
    inside = False  # the current line belongs to a written key's block
    started = False
    for line in text.splitlines():
        match = KEY_LINE.match(line)
        if not started and not match:
            continue  # the render's own header
        started = True
        if not line.strip():
            comments = []
            continue
        if line.lstrip().startswith("#"):
            comments.append(line)
            continue
        if not match:  # a block's further line (a list item)
            if inside:
                lines.append(line)
            continue
        indent = len(match.group(1))
        while stack and stack[-1][0] >= indent:
            stack.pop()
        stack.append((indent, match.group(2)))
        path = tuple(key for _, key in stack)
        inside = any(path[:len(whole)] == whole for whole in written)
        if inside or any(whole[:len(path)] == path for whole in written):
            if indent == 0 and lines:
                lines.append("")
            lines += [*comments, line]
        comments = []
    return lines


def merged(base: dict[str, Any], over: dict[str, Any]) -> dict[str, Any]:
    """`over` on `base` as Helm merges two -f files (mappings key by key, the rest replaced)."""
    out = dict(base)
    for key, value in over.items():
        out[key] = merged(base[key], value) if isinstance(value, dict) and isinstance(base.get(key), dict) else value
    return out


def overlay_text(example: Example, catalog: Catalog) -> str:
    base_text = (paths.VALUES_DIR / f"{example.shape}.yaml").read_text()
    full_text = rendered(example, catalog)
    base, full = yaml.safe_load(base_text), yaml.safe_load(full_text)
    body = overlay_body(full_text, differing(base, full))
    written = yaml.safe_load("\n".join(body)) or {}
    # The overlay on the node type's file is the render wherever the render has a key.
    if merged(base, written) != merged(base, full):
        raise ValueError(f"values/examples/{example.name}.yaml: the overlay's lines do not give the render's values")
    plan = f"python -m generator plan --shape {example.shape} --model {example.model} --algorithm {example.algorithm}"
    plan += f" --lora-rank {example.lora_rank}" if example.lora_rank else ""
    header = [*(f"# {line}" for line in example.about),
              "# Generated by `python -m generator docs` (generator/examples.py): the keys where",
              f"#   {render_command(example)}",
              f"# writes other values than values/{example.shape}.yaml. The plan of its memory:",
              f"#   {plan}",
              f"# Use: helm install verl-ppo charts/verl-ppo -f values/{example.shape}.yaml "
              f"-f values/examples/{example.name}.yaml"]
    return "\n".join([*header, "", *body]) + "\n"


def example_overlays(catalog: Catalog | None = None) -> dict[Path, str]:
    catalog = catalog or load_catalog()
    return {EXAMPLES_DIR / f"{example.name}.yaml": overlay_text(example, catalog) for example in EXAMPLES}
