"""The types veRL declares for its config values, and the ranges its code needs, checked on a composed config.

Hydra composes `gpu_memory_utilization=banana` without complaint: veRL's YAML is not typed. veRL 0.6 and
later declare each section as a dataclass (the YAML's `_target_` names it) and convert the section with
OmegaConf's structured configs when the run starts, so a wrong type fails there, on the GPUs. Those
classes are read here from the wheel's source with `ast` (importing verl would pull torch and Ray).
Versions without them have YAML only: there a value must be of the kind of veRL's own default for its key,
a number, true or false, or text. The kind, never the spelling: a default written `0` or `1` takes 0.01 as
veRL's code does (entropy coefficient, top_p, temperature of rollout and validation).
"""

from __future__ import annotations

import ast
import functools
from dataclasses import dataclass
from pathlib import Path
from typing import Any

# Where veRL keeps its config dataclasses, relative to the directory above `verl/` (`make setup`
# copies them from the wheel next to the YAML config).
DATACLASS_DIRS = ("verl/workers/config", "verl/trainer/config")
SCALARS = {"int": int, "float": float, "bool": bool, "str": str}
# What a YAML-only default tells of its key: its kind. An int default is a number like a float one.
DEFAULT_KINDS = {int: (float, "a number"), float: (float, "a number"), bool: (bool, "true or false"),
                 str: (str, "text")}


@dataclass(frozen=True)
class Range:
    """Bounds veRL's code needs that no type states; `why` names the code that needs them."""
    low: float
    high: float | None
    low_open: bool
    why: str

    def admits(self, value: float) -> bool:
        above = value > self.low if self.low_open else value >= self.low
        return above and (self.high is None or value <= self.high)

    def describe(self) -> str:
        low = f"{'>' if self.low_open else '>='} {self.low:g}"
        return low + ("" if self.high is None else f" and <= {self.high:g}")


_POOL = "veRL builds its GPU resource pool as [n_gpus_per_node] * nnodes"
RANGES = {
    "trainer.nnodes": Range(1, None, False, _POOL),
    "trainer.n_gpus_per_node": Range(1, None, False, _POOL),
    "data.train_batch_size": Range(1, None, False, "veRL divides it by the GPUs and the mini batch"),
    "actor_rollout_ref.rollout.n": Range(1, None, False, "veRL repeats every prompt n times"),
    "actor_rollout_ref.rollout.gpu_memory_utilization": Range(
        0, 1, True, "the rollout engine's share of each GPU's memory; vLLM refuses more than 1"),
}


# Keys veRL takes as text or a list whatever their default's kind: peft's LoraConfig target_modules ("all-linear" or
# module names; veRL 0.4.1's config comment lists both, 0.9.1 declares Optional[Any]).
TEXT_OR_LIST = ("actor_rollout_ref.model.target_modules", "critic.model.target_modules")


def _annotation_type(annotation: str) -> tuple[type | None, bool]:
    """(scalar type or None when not a plain scalar, whether None is allowed) of an annotation's source,
    ` = None` appended where that is the field's default."""
    annotation, none_default, _ = annotation.partition(" = None")
    parts = annotation.replace(" ", "").split("|")
    optional = "None" in parts or bool(none_default)
    parts = [part for part in parts if part != "None"]
    if len(parts) == 1 and parts[0].startswith("Optional[") and parts[0].endswith("]"):
        parts, optional = [parts[0][len("Optional["):-1]], True
    return (SCALARS.get(parts[0]) if len(parts) == 1 else None), optional


def _none_default(field: ast.AnnAssign) -> str:
    """OmegaConf takes a field whose default is None as Optional, whatever its annotation says."""
    none = isinstance(field.value, ast.Constant) and field.value.value is None
    return " = None" if none else ""


def _class_fields(tree: ast.Module) -> dict[str, tuple[list[str], dict[str, str]]]:
    """Class name -> (base names, annotated field -> annotation source) of every class in a module."""
    found = {}
    for node in tree.body:
        if isinstance(node, ast.ClassDef):
            fields = {item.target.id: ast.unparse(item.annotation) + _none_default(item) for item in node.body
                      if isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name)}
            found[node.name] = ([ast.unparse(base).rsplit(".", 1)[-1] for base in node.bases], fields)
    return found


@functools.lru_cache(maxsize=None)
def declared_fields(source_root: Path) -> dict[str, dict[str, str]]:
    """Class name -> every field (its bases' too) -> annotation, from veRL's config dataclasses under
    source_root; empty for versions that have none."""
    classes: dict[str, tuple[list[str], dict[str, str]]] = {}
    for directory in DATACLASS_DIRS:
        for path in sorted((source_root / directory).glob("*.py")):
            classes.update(_class_fields(ast.parse(path.read_text(encoding="utf-8"))))

    def merged(name: str) -> dict[str, str]:
        bases, fields = classes.get(name, ([], {}))
        return {k: v for base in bases for k, v in merged(base).items()} | fields

    return {name: merged(name) for name in classes}


def _fits(value: Any, kind: type) -> bool:
    """As OmegaConf converts a value into a structured field: an int is a float too, nothing else crosses."""
    if kind is str:
        return not isinstance(value, (dict, list))
    if kind is bool or isinstance(value, bool):
        return kind is bool and isinstance(value, bool)
    return isinstance(value, int) if kind is int else isinstance(value, (int, float))


def _leaves(node: Any, prefix: str = "") -> dict[str, Any]:
    if isinstance(node, dict):
        return {key: value for name, child in node.items() for key, value in _leaves(child, f"{prefix}{name}.").items()}
    return {prefix.rstrip("."): node}


@dataclass(frozen=True)
class Declared:
    """What veRL takes for a key: `kind` (a number is a float: an int fits it), whether None fits,
    and how a finding says it."""
    kind: type
    optional: bool
    says: str


def _declared_types(tree: dict[str, Any], defaults: dict[str, Any], fields: dict[str, dict[str, str]]
                    ) -> dict[str, Declared]:
    """Key -> what veRL takes: a dataclass field's type where its section names one, else the kind of
    veRL's default for the key (when the default is a plain scalar)."""
    declared: dict[str, Declared] = {}
    for key, default in _leaves(defaults).items():
        if type(default) in DEFAULT_KINDS and not str(default).startswith("${"):
            kind, name = DEFAULT_KINDS[type(default)]
            declared[key] = Declared(kind, False, f"veRL reads {name} here (its default is {name})")

    def walk(node: Any, prefix: str) -> None:
        if not isinstance(node, dict):
            return
        target = str(node.get("_target_", "")).rsplit(".", 1)[-1]
        for name, annotation in fields.get(target, {}).items():
            kind, optional = _annotation_type(annotation)
            if kind is not None and name in node:
                declared[f"{prefix}{name}"] = Declared(kind, optional,
                                                       f"veRL declares {kind.__name__} ({target}.{name}: {annotation})")
        for name, child in node.items():
            walk(child, f"{prefix}{name}.")

    walk(tree, "")
    for key in TEXT_OR_LIST:
        declared.pop(key, None)
    return declared


def _plain(config: Any) -> dict[str, Any]:
    """The values as written: an interpolation is checked where it points (OmegaConf, too, accepts one
    into a typed field and converts only the value it resolves to, at run time)."""
    from omegaconf import OmegaConf

    return OmegaConf.to_container(config, resolve=False)


def violations(config: Any, defaults: Any, source_root: Path, keys: list[str] | None = None) -> list[str]:
    """`key=value: why` for each value of the composed config (or only `keys`) that veRL's declared type
    or a needed range refuses. `defaults` is the config composed without overrides."""
    tree, default_tree = _plain(config), _plain(defaults)
    declared = _declared_types(tree, default_tree, declared_fields(source_root))
    values = _leaves(tree)
    found = []
    for key in keys if keys is not None else sorted(values):
        if key not in values:
            continue
        value = values[key]
        if value == "???" or isinstance(value, str) and value.startswith("${"):
            continue
        if key in declared:
            takes = declared[key]
            if not (value is None and takes.optional) and not _fits(value, takes.kind):
                found.append(f"{key}={value}: {takes.says}")
                continue
        bounds = RANGES.get(key)
        if bounds and isinstance(value, (int, float)) and not isinstance(value, bool) and not bounds.admits(value):
            found.append(f"{key}={value}: must be {bounds.describe()} ({bounds.why})")
    return found
