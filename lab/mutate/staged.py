"""One mutant's test run in two stages, for a module whose thorough tests are slow (the submitter's need a
real Ray head: a minute and more per run). First the fast tests; only a mutant they miss meets the slow
ones, and of those only the cases that reach the function the mutant changed (found by comparing the
mutated module with the checkout's). Exits non-zero when a stage fails: the mutant is killed.

python -m lab.mutate.staged MODULE ORIGINAL   (cosmic-ray's test command, run in the tree's copy)"""

from __future__ import annotations

import ast
import difflib
import os
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ElementTree
from pathlib import Path

from lab.mutate.plan import Stages
from lab.mutate.targets import STAGED

# A slow stage whose cases only erred in setup (a Ray head that did not start on a loaded machine: its
# dashboard must answer within Ray's 20 s) says nothing of the mutant: it is tried again, and after the
# last try the mutant is counted a survivor (run again with --retry-survivors), never a kill.
SETUP_TRIES = 2
SETUP_RETRY_SECONDS = 30


def changed_line(original: str, mutated: str) -> int | None:
    """The first line (1-based, of the original) the mutant changed; None when nothing differs."""
    matcher = difflib.SequenceMatcher(a=original.splitlines(), b=mutated.splitlines(), autojunk=False)
    for tag, first, _, _, _ in matcher.get_opcodes():
        if tag != "equal":
            return first + 1
    return None


def enclosing_function(source: str, line: int) -> str | None:
    """The innermost function holding `line`, as `name` or `Class.name`; `Class` in a class's own body (its
    fields); None at module level."""
    def visit(node: ast.AST, owner: str) -> str | None:
        for child in ast.iter_child_nodes(node):
            if not (child.lineno <= line <= child.end_lineno if hasattr(child, "end_lineno") else False):
                continue
            if isinstance(child, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
                return visit(child, f"{owner}{child.name}.") or f"{owner}{child.name}"
        return None
    return visit(ast.parse(source), "")


def slow_tests(stages: Stages, original: str, mutated: str) -> tuple[str, str, tuple[str, ...]]:
    """(where the mutant is, which tests were picked for it, the pytest arguments)."""
    line = changed_line(original, mutated)
    function = enclosing_function(original, line) if line else None
    # A nested function is tested by its owner's tests: try `a.b.c`, then `a.b`, then `a`.
    parts = function.split(".") if function else []
    for end in range(len(parts), 0, -1):
        name = ".".join(parts[:end])
        if name in stages.slow:
            return f"line {line} in {function}", name, stages.slow[name]
    return f"line {line} in {function or 'module level'}", "default", stages.slow_default


FAST_TIMEOUT_SECONDS = 300  # the fast tests take seconds: a mutant that hangs them is killed here, not at the
# session's timeout


def pytest(args: tuple[str, ...], timeout: float | None = None) -> int:
    try:
        return subprocess.run([sys.executable, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider", *args],
                              timeout=timeout).returncode
    except subprocess.TimeoutExpired:
        print(f"[staged] tests hung past {timeout:g}s", flush=True)
        return 1


def only_setup_errors(report: Path) -> bool:
    """Whether every problem in a pytest junit report is an error in setup (a fixture that could not start)
    or a Ray head a test started itself that did not come up: nothing the mutant did."""
    problems = [problem for case in ElementTree.parse(report).getroot().iter("testcase")
                for problem in case if problem.tag in ("failure", "error")]
    return bool(problems) and all(problem.tag == "error" or "ray start failed" in (problem.text or "")
                                  for problem in problems)


def slow_stage(args: tuple[str, ...]) -> int:
    for attempt in range(1, SETUP_TRIES + 1):
        with tempfile.TemporaryDirectory() as scratch:
            report = Path(scratch) / "report.xml"
            code = pytest((*args, f"--junitxml={report}"))
            if code == 0 or not report.exists() or not only_setup_errors(report):
                return code
        print(f"[staged] slow tests could not set up (try {attempt} of {SETUP_TRIES})", flush=True)
        if attempt < SETUP_TRIES:
            time.sleep(SETUP_RETRY_SECONDS)
    print("[staged] slow tests never set up: counted as a survivor, to run again", flush=True)
    return 0


# Set by `python -m lab.mutate --fast-only`: the fast stage alone (its survivors then run again, whole).
FAST_ONLY = "VERL_PPO_MUTATE_FAST_ONLY"


def main(argv: list[str]) -> int:
    module, original = argv
    stages = STAGED[module]
    if pytest(stages.fast, FAST_TIMEOUT_SECONDS) != 0:
        return 1
    if os.environ.get(FAST_ONLY):
        return 0
    where, picked, args = slow_tests(stages, Path(original).read_text(), Path(module).read_text())
    print(f"[staged] fast tests passed; {where}: slow tests for {picked}: {' '.join(args)}", flush=True)
    return slow_stage(args) if args else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
