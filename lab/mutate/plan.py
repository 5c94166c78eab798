"""How a mutated module is tested: which pytest arguments its mutants run, in one stage or in two (a fast
stage, then the slow cases of the function a mutant changed: staged.py), and the command cosmic-ray runs
for each mutant. targets.py lists the plans; python_mutants.py and staged.py carry them out."""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from pathlib import Path

from generator.paths import ROOT

NICE = ["nice", "-n", "10"]


@dataclass(frozen=True)
class Stages:
    fast: tuple[str, ...]  # pytest arguments: every mutant runs these first
    slow: dict[str, tuple[str, ...]] = field(default_factory=dict)  # function (or Class.method) -> pytest arguments
    slow_default: tuple[str, ...] = ()  # for a mutant outside every function named in `slow`
    shared_ray_head: bool = False  # the slow tests' Ray head started once for all mutants (sharedhead.py)


@dataclass(frozen=True)
class PythonTarget:
    module: str  # path relative to the repository root
    tests: tuple[str, ...]  # pytest arguments selecting the tests that exercise it
    timeout: float = 30.0  # seconds per mutant's test run (~10x the run); a mutant that hangs them is killed
    excluded: tuple[str, ...] = ()  # operators left out for this module only (regular expressions), and why
    stages: Stages | None = None  # tests in two stages, fast then slow (staged.py), in place of `tests`

    @property
    def name(self) -> str:
        return Path(self.module).stem

    def test_command(self) -> str:
        if self.stages:
            return f"{' '.join(NICE)} {sys.executable} -m lab.mutate.staged '{self.module}' '{ROOT / self.module}'"
        args = " ".join(f"'{arg}'" for arg in self.tests)
        return f"{' '.join(NICE)} {sys.executable} -m pytest -x -q -p no:cacheprovider {args}"
