"""The algorithms the chart knows: ppo-job's files/algorithms.yaml, the table its templates read too, so the
generator sizes a run with the rollout.n default, critic and reference model the chart renders for it."""

from __future__ import annotations

from dataclasses import dataclass

import yaml

from generator import paths
from generator.verlversions import version_names

TABLE = paths.subchart_dir("ppo-job") / "files" / "algorithms.yaml"


@dataclass(frozen=True)
class Algorithm:
    name: str
    estimator: str  # veRL's algorithm.adv_estimator
    critic: bool  # veRL trains a critic (the GAE estimator only)
    kl: str  # where the KL term goes: coef, reward, loss, none
    responses_per_prompt: int  # rollout.n by default
    min_responses: int  # the smallest rollout.n the estimator works with
    versions: tuple[str, ...]  # veRL versions whose main trainer has it: its `since` and every later one
    overrides: tuple[str, ...] = ()  # fixed Hydra settings of the preset

    @property
    def reference(self) -> bool:
        """A KL term needs the reference model's log-probs."""
        return self.kl != "none"


def algorithms() -> dict[str, Algorithm]:
    """By name, in the table's order (PPO, the default, first)."""
    table = yaml.safe_load(TABLE.read_text())
    names = version_names()
    return {
        name: Algorithm(name, entry["estimator"], entry["critic"], entry["kl"], entry["responsesPerPrompt"],
                        entry["minResponses"], tuple(names[names.index(str(entry["since"])):]),
                        tuple(entry["overrides"]))
        for name, entry in table.items()
    }
