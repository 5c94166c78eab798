"""Killed / total per module, and the table `make mutate` prints. A surviving mutant listed as
equivalent (lab/mutate/equivalent.py: it behaves as the original on every input the product can get)
is shown apart and left out of the share."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class Score:
    module: str
    killed: int = 0
    survived: list[str] = field(default_factory=list)  # one line per surviving mutant: where and what
    equivalent: list[str] = field(default_factory=list)  # survivors explained as equivalent, with why

    @property
    def total(self) -> int:
        return self.killed + len(self.survived) + len(self.equivalent)

    def share(self) -> str:
        judged = self.killed + len(self.survived)
        return f"{100 * self.killed / judged:.0f}%" if judged else "-"


def table(scores: list[Score]) -> str:
    width = max([len(s.module) for s in scores] + [6])
    lines = [f"{'module':<{width}}  mutants  killed  equivalent  survived  killed share"]
    lines += [f"{s.module:<{width}}  {s.total:>7}  {s.killed:>6}  {len(s.equivalent):>10}  {len(s.survived):>8}  "
              f"{s.share():>12}" for s in scores]
    return "\n".join(lines)


def survivors(scores: list[Score]) -> str:
    return "\n".join(f"{s.module}: {line}" for s in scores for line in s.survived)


def equivalents(scores: list[Score]) -> str:
    return "\n".join(f"{s.module}: {line}" for s in scores for line in s.equivalent)
