"""make mutate's table of the audit's breakages (lab/mutate/holes.py) follows the code: each breakage's text
is in its file exactly once and changes it, and each names test files that exist, so a refactor that moves
the code makes this fail instead of leaving a breakage that no longer breaks anything."""

from __future__ import annotations

import pytest

from generator.paths import ROOT
from lab.mutate.holes import BREAKAGES, Breakage, first_failure


@pytest.mark.parametrize("breakage", BREAKAGES, ids=[b.hole for b in BREAKAGES])
def test_each_breakage_applies_once_to_the_checkout(breakage):
    original = (ROOT / breakage.path).read_text()
    assert breakage.apply(original) != original
    files = [arg.split("::")[0] for arg in breakage.tests if arg.startswith("tests/")]
    assert files and all((ROOT / name).is_file() for name in files), breakage.tests


def test_a_breakage_whose_text_moved_is_an_error_naming_it():
    moved = Breakage("a hole", "generator/sizing.py", "text that is nowhere", "", ("tests/test_sizing.py",))
    with pytest.raises(ValueError,
                       match=r"generator/sizing.py: the breakage of 'a hole' no longer applies: .* 0 times"):
        moved.apply((ROOT / moved.path).read_text())


def test_the_first_failed_test_is_named():
    output = "F\n=== short test summary info ===\nFAILED tests/test_prepare.py::test_a_writer - assert 1\n1 failed"
    assert first_failure(output) == "tests/test_prepare.py::test_a_writer"
    assert first_failure("ERROR tests/test_x.py::test_y - boom") == "tests/test_x.py::test_y"
    assert first_failure("1 passed") == "the run (no test named: see its output)"
