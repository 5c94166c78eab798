"""veRL's own configuration, where it is available: compose Hydra overrides with `ppo_trainer`.

The config directory comes from the setup cache (`$VERL_PPO_CACHE/verl-config/<version>`, taken from
veRL's wheel by `make setup`) or from an installed veRL of that version. Hydra is optional for
the generator: without it, or without the config, the check is reported as skipped.
"""

from __future__ import annotations

import functools
import importlib.metadata
import importlib.util
from pathlib import Path
from typing import Any

from generator import paths, verltypes

CONFIG_NAME = "ppo_trainer"


def cached_config_dir(version: str) -> Path:
    """Where `make setup` puts veRL <version>'s `verl/trainer/config` (taken from its wheel)."""
    return paths.tool_cache() / "verl-config" / version / "verl" / "trainer" / "config"


def config_dir(version: str) -> Path | None:
    """veRL <version>'s `verl/trainer/config`, or None where neither the cache nor an install has it."""
    cached = cached_config_dir(version)
    if cached.is_dir():
        return cached
    try:
        if importlib.metadata.version("verl") != version:
            return None
    except importlib.metadata.PackageNotFoundError:
        return None
    spec = importlib.util.find_spec("verl")
    if spec is None or spec.origin is None:
        return None
    installed = Path(spec.origin).parent / "trainer" / "config"
    return installed if installed.is_dir() else None


def hydra_available() -> bool:
    return importlib.util.find_spec("hydra") is not None


def compose(directory: Path, overrides: list[str]) -> Any:
    """The composed config; raises hydra.errors.ConfigCompositionException for an unknown key or bad value."""
    from hydra import compose as hydra_compose, initialize_config_dir
    from hydra.core.global_hydra import GlobalHydra

    GlobalHydra.instance().clear()
    with initialize_config_dir(config_dir=str(directory), version_base=None):
        return hydra_compose(config_name=CONFIG_NAME, overrides=overrides)


@functools.lru_cache(maxsize=None)
def defaults(directory: Path) -> Any:
    """veRL's config composed without overrides: the default of every key."""
    return compose(directory, [])


def source_root(directory: Path) -> Path:
    """The directory above `verl/` that holds this config directory (`verl/trainer/config`)."""
    return directory.parents[2]


def type_violations(directory: Path, config: Any, keys: list[str] | None = None) -> list[str]:
    """What veRL's declared types and needed ranges refuse in a config composed from `directory`."""
    return verltypes.violations(config, defaults(directory), source_root(directory), keys)


def rejected_override(directory: Path, override: str) -> str | None:
    """Why veRL's config rejects this one override (Hydra's first line, or the type or range veRL's
    code needs), or None where it composes and fits."""
    from hydra.errors import ConfigCompositionException

    try:
        config = compose(directory, [override])
    except ConfigCompositionException as error:
        cause = error.__cause__ or error
        return str(cause).strip().splitlines()[0]
    found = type_violations(directory, config, [override.split("=", 1)[0].lstrip("+~")])
    return found[0] if found else None
