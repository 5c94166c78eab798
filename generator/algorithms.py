"""The algorithms the chart knows: ppo-job's files/algorithms.yaml, the table its templates read too, so the
generator sizes a run with the rollout.n default, critic and reference model the chart renders for it."""

from __future__ import annotations

from dataclasses import dataclass

import yaml

from generator import paths

TABLE = paths.subchart_dir("ppo-job") / "files" / "algorithms.yaml"


@dataclass(frozen=True)
class Algorithm:
    name: str
    critic: bool  # veRL trains a critic (the GAE estimator only)
    kl: str  # where the KL term goes: coef, reward, loss, none
    responses_per_prompt: int  # rollout.n by default
    versions: tuple[str, ...]  # veRL versions whose main trainer has it

    @property
    def reference(self) -> bool:
        """A KL term needs the reference model's log-probs."""
        return self.kl != "none"


def algorithms() -> dict[str, Algorithm]:
    table = yaml.safe_load(TABLE.read_text())
    return {
        name: Algorithm(name, entry["critic"], entry["kl"], entry["responsesPerPrompt"], tuple(entry["versions"]))
        for name, entry in table.items()
    }
