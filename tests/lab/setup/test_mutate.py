"""make mutate's tables follow the code: each breakage of the audit's (lab/mutate/holes.py) is in its file
exactly once and changes it, and every test file a breakage or a mutated module's plan names exists, so a
refactor that moves the code or the tests makes this fail instead of leaving a breakage that no longer breaks
anything or a module whose mutants meet no test. lab/mutate's modules import one another in no circle."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from generator.paths import ROOT
from lab.mutate import templates
from lab.mutate.holes import BREAKAGES, Breakage, first_failure
from lab.mutate.targets import PYTHON_TARGETS

MUTATE = ROOT / "lab" / "mutate"


@pytest.mark.parametrize("breakage", BREAKAGES, ids=[b.hole for b in BREAKAGES])
def test_each_breakage_applies_once_to_the_checkout(breakage):
    original = (ROOT / breakage.path).read_text()
    assert breakage.apply(original) != original
    files = [arg.split("::")[0] for arg in breakage.tests if arg.startswith("tests/")]
    assert files and all((ROOT / name).is_file() for name in files), breakage.tests


def test_a_breakage_whose_text_moved_is_an_error_naming_it():
    moved = Breakage("a hole", "generator/sizing.py", "text that is nowhere", "", ("tests/generator/test_sizing.py",))
    with pytest.raises(ValueError,
                       match=r"generator/sizing.py: the breakage of 'a hole' no longer applies: .* 0 times"):
        moved.apply((ROOT / moved.path).read_text())


def test_the_first_failed_test_is_named():
    output = "F\n=== short test summary info ===\nFAILED tests/ray/test_prepare.py::test_a_writer - assert 1\n1 failed"
    assert first_failure(output) == "tests/ray/test_prepare.py::test_a_writer"
    assert first_failure("ERROR tests/chart/test_x.py::test_y - boom") == "tests/chart/test_x.py::test_y"
    assert first_failure("1 passed") == "the run (no test named: see its output)"


def _test_files(args: tuple[str, ...]) -> list[str]:
    return [arg.split("::")[0] for arg in args if arg.startswith("tests/")]


@pytest.mark.parametrize("target", PYTHON_TARGETS, ids=[t.module for t in PYTHON_TARGETS])
def test_each_mutated_modules_tests_exist(target):
    stages = target.stages
    args = [target.tests] + ([stages.fast, stages.slow_default, *stages.slow.values()] if stages else [])
    files = [name for arg in args for name in _test_files(arg)]
    assert files and all((ROOT / name).is_file() for name in files), files
    assert (ROOT / target.module).is_file(), target.module


def test_the_template_mutants_tests_exist():
    files = _test_files((templates.BAD_INPUT, *templates.RULE_TESTS, *templates.RENDER_TESTS))
    assert len(files) >= 4 and all((ROOT / name).is_file() for name in files), files


def _imports(module: Path) -> set[str]:
    """The lab.mutate modules a module imports, at its top or inside a function."""
    found = set()
    for node in ast.walk(ast.parse(module.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("lab.mutate"):
            names = [node.module] if node.module != "lab.mutate" else [f"lab.mutate.{a.name}" for a in node.names]
            found.update(name.rsplit(".", 1)[-1] for name in names)
        elif isinstance(node, ast.Import):
            found.update(a.name.rsplit(".", 1)[-1] for a in node.names if a.name.startswith("lab.mutate."))
    return found


def test_lab_mutate_imports_in_no_circle():
    graph = {path.stem: _imports(path) for path in MUTATE.glob("*.py")}
    assert graph["staged"] and graph["targets"]  # the parse found imports

    def reach(start: str) -> set[str]:
        seen, todo = set(), list(graph.get(start, ()))
        while todo:
            name = todo.pop()
            if name not in seen:
                seen.add(name)
                todo.extend(graph.get(name, ()))
        return seen

    assert not [name for name in graph if name in reach(name)], graph
