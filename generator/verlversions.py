"""The veRL versions the chart supports: ppo-job's files/verl-versions.yaml, the table its templates read too.

The schema's enum of ppo-job.verlVersion, each algorithm's versions, docs/algorithms.md's table and the veRL
configs the tests compose with all come from here; nothing else lists the versions.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import yaml

from generator import paths

TABLE = paths.subchart_dir("ppo-job") / "files" / "verl-versions.yaml"
# The images the chart knows and the Ray inside each (the rulebook refuses Ray's token on one older than 2.52).
IMAGES = paths.subchart_dir("ppo-job") / "files" / "images.yaml"


@dataclass(frozen=True)
class VerlVersion:
    """One entry of the table (its header says what each fact means); `other`: facts only the templates read
    (a new one needs no change here: docs/algorithms.md shows it as it is)."""
    version: str
    critic_fsdp_key: str
    reward_rollout_name: bool
    kl_in_reward_key: bool
    rollout_mode: str
    custom_reward_key: str
    rollout_names: tuple[str, ...]
    hf_samples_n: bool
    rollout_metrics: tuple[str, ...]
    critic_forward_budget_key: str
    critic_update_budget: str
    trainer_mode_key: str
    trainer_modes: tuple[str, ...]
    quick_poll_sampler: bool
    image: str = ""
    other: tuple[tuple[str, Any], ...] = ()


_KNOWN = ("version", "criticFsdpKey", "rewardRolloutName", "klInRewardKey", "rolloutMode", "customRewardKey",
          "rolloutNames", "hfSamplesN", "rolloutMetrics", "criticForwardBudgetKey", "criticUpdateBudget",
          "trainerModeKey", "trainerModes", "quickPollSampler", "image")


@lru_cache(maxsize=1)
def verl_versions() -> tuple[VerlVersion, ...]:
    """Every supported version, oldest first."""
    return tuple(
        VerlVersion(str(entry["version"]), entry["criticFsdpKey"], entry["rewardRolloutName"], entry["klInRewardKey"],
                    entry["rolloutMode"], entry["customRewardKey"], tuple(entry["rolloutNames"]), entry["hfSamplesN"],
                    tuple(entry["rolloutMetrics"]), entry["criticForwardBudgetKey"], entry["criticUpdateBudget"],
                    entry["trainerModeKey"], tuple(entry["trainerModes"]), entry["quickPollSampler"],
                    entry.get("image", ""),
                    tuple((key, value) for key, value in entry.items() if key not in _KNOWN))
        for entry in yaml.safe_load(TABLE.read_text()))


def version_names() -> list[str]:
    return [entry.version for entry in verl_versions()]


def by_version() -> dict[str, VerlVersion]:
    return {entry.version: entry for entry in verl_versions()}


def image_rays() -> dict[str, str]:
    """repository:tag -> the Ray inside, a version or a bound such as <2.52.0 (files/images.yaml)."""
    return {entry["image"]: str(entry["ray"]) for entry in yaml.safe_load(IMAGES.read_text())}


def rollout_engines() -> list[str]:
    """Every rollout engine some supported version builds, in the table's order."""
    return list(dict.fromkeys(name for entry in verl_versions() for name in entry.rollout_names))


def trainer_modes() -> list[str]:
    """Every trainer mode some supported version offers, in the table's order (sync first)."""
    return list(dict.fromkeys(mode for entry in verl_versions() for mode in entry.trainer_modes))


if __name__ == "__main__":  # the list lab/scripts/setup.sh fetches veRL's config for, one a line
    print("\n".join(version_names()))
