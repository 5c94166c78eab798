"""One refused value, as the rulebook and `generator check` print it: `field=value: why. Fix: how`."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Finding:
    field: str
    value: Any
    problem: str
    fix: str

    def __str__(self) -> str:
        return f"{self.field}={self.value}: {self.problem}. Fix: {self.fix}"
