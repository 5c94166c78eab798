"""What a veRL version's code reads of its config: an index of the names its Python reads, built from the source
`lab/scripts/setup.sh verl-source` keeps of each supported version (its wheel's verl/**/*.py).

A config key counts as read when its last part is read somewhere outside the packages that declare the config
(the YAML's dataclasses, their defaults, validation and deprecation notes): as an attribute (`cfg.ppo_epochs`), a
subscript or `.get`/`.pop`/`.setdefault` with the name as text (`cfg["ppo_epochs"]`, `cfg.get("ppo_epochs")`),
or `getattr`/`hasattr` with it; or taken over by another key of the config that is read (`${...}` in veRL's
YAML: 0.3 reads data.max_response_length as rollout.response_length). By the last part alone: a name read for
one section counts for every section that has it, so this finds keys no code reads at all (a deprecated budget),
not a key read only elsewhere.
"""

from __future__ import annotations

import ast
import re
import warnings
from functools import lru_cache
from pathlib import Path
from typing import Any

from omegaconf import OmegaConf

from support.tools import cache_dir

# The packages that declare veRL's config (0.6 on): they name every key, read or not.
DECLARING = ("verl/trainer/config/", "verl/workers/config/")
TEXT_ARGUMENT_CALLS = {"get": 0, "pop": 0, "setdefault": 0, "getattr": 1, "hasattr": 1}


def source_dir(version: str) -> Path:
    """veRL <version>'s source as setup keeps it (the directory holding `verl/`)."""
    return cache_dir() / "verl-source" / version


def _text(node: ast.AST) -> str | None:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


def names_read(tree: ast.AST) -> set[str]:
    """The names one module reads, as the module docstring says."""
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Load):
            found.add(node.attr)
        elif isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Load) and _text(node.slice):
            found.add(_text(node.slice))
        elif isinstance(node, ast.Call):
            name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
            position = TEXT_ARGUMENT_CALLS.get(name)
            if position is not None and len(node.args) > position and _text(node.args[position]):
                found.add(_text(node.args[position]))
    return found


@lru_cache(maxsize=None)
def read_names(version: str) -> frozenset[str]:
    """Every name veRL <version>'s code reads outside the config declarations; AssertionError where setup has not
    kept its source (the tests that use it must not pass without it)."""
    root = source_dir(version)
    modules = sorted((root / "verl").rglob("*.py"))
    assert modules, f"{root} has no veRL source: run lab/scripts/setup.sh verl-source"
    found: set[str] = set()
    for module in modules:
        if module.relative_to(root).as_posix().startswith(DECLARING):
            continue
        with warnings.catch_warnings():  # veRL's own invalid escapes in regular expressions are not ours to report
            warnings.simplefilter("ignore")
            found |= names_read(ast.parse(module.read_text(encoding="utf-8"), filename=str(module)))
    return frozenset(found)


def is_read(version: str, key: str) -> bool:
    """Whether veRL <version>'s code reads the config key (a Hydra override's key, + or ++ prefix allowed)."""
    return key.lstrip("+~").rsplit(".", 1)[-1] in read_names(version)


REFERENCE = re.compile(r"\$\{(?:oc\.select:)?([.\w]+)")


def interpolations(config: Any) -> dict[str, set[str]]:
    """For each key of a composed config that another one interpolates (`${data.max_response_length}`, relative
    `${.ppo_max_token_len_per_gpu}`, `${oc.select:key,default}`), the keys whose values take it over."""
    takers: dict[str, set[str]] = {}

    def walk(node: Any, path: list[str]) -> None:
        if isinstance(node, dict):
            for key, value in node.items():
                walk(value, [*path, str(key)])
        elif isinstance(node, str):
            for reference in REFERENCE.findall(node):
                dots = len(reference) - len(reference.lstrip("."))
                absolute = reference if not dots else ".".join([*path[:len(path) - dots], reference[dots:]])
                takers.setdefault(absolute, set()).add(".".join(path))

    walk(OmegaConf.to_container(config, resolve=False), [])
    return takers


def is_used(version: str, key: str, config: Any) -> bool:
    """Read by veRL <version>'s code, directly or through a key of its config that interpolates it and is used."""
    takers, seen, todo = interpolations(config), set(), [key.lstrip("+~")]
    while todo:
        current = todo.pop()
        if current in seen:
            continue
        seen.add(current)
        if is_read(version, current):
            return True
        todo.extend(takers.get(current, ()))
    return False
