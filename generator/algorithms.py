"""The algorithms the chart knows, read from the chart itself (ppo-job's `ppo-job.algorithms` table)
through the pinned Helm: the generator sizes a run with the rollout.n default, critic and reference
model the chart renders for it, never with a copy of them."""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from generator import paths
from generator.helmvalues import HelmInputs, scratch_dir, shown_json

TABLE_TEMPLATE = paths.subchart_dir("ppo-job") / "templates" / "_algorithms.tpl"


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


def _table_chart() -> Path:
    """A chart of the table's template alone and one template printing it: no rule, no library."""
    root = scratch_dir("verl-ppo-algorithms-")
    (root / "templates").mkdir()
    (root / "Chart.yaml").write_text("apiVersion: v2\nname: algorithms\nversion: 0.0.0\n")
    shutil.copy(TABLE_TEMPLATE, root / "templates" / TABLE_TEMPLATE.name)
    (root / "templates" / "table.json").write_text('{{ include "ppo-job.algorithms" . }}\n')
    return root


@lru_cache(maxsize=None)
def algorithms() -> dict[str, Algorithm]:
    table = shown_json(_table_chart(), "templates/table.json", HelmInputs(release="algorithms"))
    return {
        name: Algorithm(name, entry["critic"], entry["kl"], entry["responsesPerPrompt"], tuple(entry["versions"]))
        for name, entry in table.items()
    }
