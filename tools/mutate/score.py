"""Killed / total per module, and the table `make mutate` prints."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class Score:
    module: str
    killed: int = 0
    survived: list[str] = field(default_factory=list)  # one line per surviving mutant: where and what

    @property
    def total(self) -> int:
        return self.killed + len(self.survived)

    def share(self) -> str:
        return f"{100 * self.killed / self.total:.0f}%" if self.total else "-"


def table(scores: list[Score]) -> str:
    width = max([len(s.module) for s in scores] + [6])
    lines = [f"{'module':<{width}}  killed  total  share"]
    lines += [f"{s.module:<{width}}  {s.killed:>6}  {s.total:>5}  {s.share():>5}" for s in scores]
    return "\n".join(lines)


def survivors(scores: list[Score]) -> str:
    return "\n".join(f"{s.module}: {line}" for s in scores for line in s.survived)
