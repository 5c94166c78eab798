"""The Python linter (`make lint`): ruff, pinned in requirements-test.txt and set up in pyproject.toml, finds
nothing in generator/, lab/ and tests/, and does find what it is there for."""

import subprocess
import sys
from pathlib import Path

from generator import paths


def ruff(*args: str, cwd: Path = paths.ROOT) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "ruff", "check", "--no-cache", *args], capture_output=True,
                          text=True, cwd=cwd, timeout=120)


def test_the_python_sources_pass_the_linter():
    done = ruff()
    assert done.returncode == 0, done.stdout + done.stderr


def test_the_linter_flags_an_unused_import_a_long_line_and_a_loop_variable_in_a_closure(tmp_path: Path):
    """The project's settings (its rules, its line length) catch each kind of slip the linter was added for."""
    (tmp_path / "pyproject.toml").write_text((paths.ROOT / "pyproject.toml").read_text())
    module = tmp_path / "generator" / "slips.py"
    module.parent.mkdir()
    module.write_text("import os\n\n"
                      f"LONG = {'x' * 120!r}\n\n"
                      "CALLS = [lambda: shape for shape in ('a', 'b')]\n")
    done = ruff("--output-format", "concise", cwd=tmp_path)
    assert done.returncode == 1
    found = {line.split(" ")[1] for line in done.stdout.splitlines() if line.startswith("generator/slips.py:")}
    assert found == {"F401", "E501", "B023"}, done.stdout
