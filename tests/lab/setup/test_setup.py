"""Setup itself: the project venv (lab/venv.py) on Debian's externally managed python3, and the
step runner (lab/scripts/steps.sh) that says k of n, what it builds and how long it took last time (or, never
built here, on a fresh machine: the estimate a first `make demo` prints), keeping build output in build/setup.log."""

from __future__ import annotations

import glob
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from generator.paths import ROOT
from lab.venv import project_venv

DEBIAN_PYTHON = Path("/usr/bin/python3")


def test_tests_run_in_the_project_venv():
    assert Path(sys.prefix) == project_venv().directory, \
        f"pytest runs in {sys.prefix}: run it as make test does, with `python3 -m lab.venv python`"


def externally_managed() -> bool:
    return DEBIAN_PYTHON.exists() and bool(glob.glob("/usr/lib/python3*/EXTERNALLY-MANAGED"))


def with_debian_python_first() -> dict[str, str]:
    return {**os.environ, "PATH": f"/usr/bin:{os.environ['PATH']}"}


def debian_python(code: str, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(["python3", "-c", code, *args], cwd=ROOT, env=with_debian_python_first(),
                          capture_output=True, text=True, timeout=300)


needs_debian = pytest.mark.skipif(not externally_managed(), reason="no externally managed /usr/bin/python3 here")


@needs_debian
def test_system_pip_refuses_and_the_venv_installs(tmp_path):
    refused = debian_python("import subprocess, sys; sys.exit(subprocess.run([sys.executable, '-m', 'pip', "
                            "'install', '--dry-run', '--no-index', 'PyYAML']).returncode)")
    assert refused.returncode != 0 and "externally-managed-environment" in refused.stdout + refused.stderr
    made = debian_python("import sys; from pathlib import Path; from lab.venv import ProjectVenv, create; "
                         "create(ProjectVenv(Path(sys.argv[1])))", str(tmp_path / "venv"))
    assert made.returncode == 0, made.stderr
    assert_working_pip(tmp_path / "venv")


@needs_debian
def test_pip_bootstrapped_where_ensurepip_is_missing(tmp_path):
    """As on a Debian python3 without python3-venv: the environment made without pip gets it from a wheel."""
    subprocess.run([str(DEBIAN_PYTHON), "-m", "venv", "--without-pip", str(tmp_path / "venv")], check=True, timeout=120)
    assert not (tmp_path / "venv" / "bin" / "pip").exists()
    made = debian_python("import sys; from pathlib import Path; from lab.venv import ProjectVenv, bootstrap_pip; "
                         "bootstrap_pip(ProjectVenv(Path(sys.argv[1])))", str(tmp_path / "venv"))
    assert made.returncode == 0, made.stderr
    assert_working_pip(tmp_path / "venv")


def assert_working_pip(venv: Path) -> None:
    python = venv / "bin" / "python"
    base = subprocess.run([str(python), "-c", "import sys; print(sys.base_prefix)"], capture_output=True, text=True)
    assert base.stdout.strip() == "/usr"
    # pip resolves an install there (from pip's own wheel, no index), where the system's pip refused one
    pip = subprocess.run([str(python), "-m", "pip", "install", "--dry-run", "--no-index", "--no-deps", "pip"],
                         capture_output=True, text=True, timeout=120)
    assert pip.returncode == 0, pip.stdout + pip.stderr


STEPS = """
set -euo pipefail
root=$1; cache=$root/cache
source {steps}
noisy_ready() {{ [ -f "$cache/noisy" ]; }}
noisy_build() {{
  for i in $(seq 200); do echo "go: downloading example.com/m$i v1.0.0" >&2; done
  touch "$cache/noisy"
}}
quiet_ready() {{ [ -f "$cache/quiet" ]; }}
quiet_build() {{ touch "$cache/quiet"; }}
broken_ready() {{ false; }}
broken_build() {{ echo "the reason it broke"; false; echo "ran past a failure"; }}
add_step noisy "a noisy build" noisy_ready noisy_build
add_step quiet "a quiet one" quiet_ready quiet_build
[ "${{2:-}}" = broken ] && add_step broken "a broken one" broken_ready broken_build
# shellcheck disable=SC2086  # one word per step name
select_steps ${{SELECT:-}}
run_steps
"""


def run_steps(root: Path, *args: str, select: str = "") -> subprocess.CompletedProcess:
    (root / "cache").mkdir(parents=True, exist_ok=True)
    script = STEPS.format(steps=ROOT / "lab" / "scripts" / "steps.sh")
    return subprocess.run(["bash", "-c", script, "steps", str(root), *args], capture_output=True, text=True, timeout=60,
                          env={**os.environ, "SELECT": select})


def test_steps_say_k_of_n_and_keep_build_output_in_the_log(tmp_path):
    first = run_steps(tmp_path)
    assert first.returncode == 0, first.stderr
    assert "setup [1/2] a noisy build: building (first build here) ..." in first.stdout
    assert "estimated" not in first.stdout  # no table of fresh-machine times here: no figure made up
    assert re.search(r"^setup \[2/2\] a quiet one: built in \d+s$", first.stdout, re.M), first.stdout
    assert "go: downloading" not in first.stdout + first.stderr
    assert (tmp_path / "build" / "setup.log").read_text().count("go: downloading") == 200
    recorded = int((tmp_path / "cache" / "timings" / "noisy").read_text())

    again = run_steps(tmp_path)
    assert "setup: all 2 steps cached" in again.stdout and "setup [1/2] a noisy build: cached" in again.stdout

    (tmp_path / "cache" / "noisy").unlink()  # a new pin: the step builds again, and says how long it took before
    rebuilt = run_steps(tmp_path)
    assert "setup: 1 of 2 steps to build" in rebuilt.stdout
    assert f"setup: estimated time {recorded}s (1 as long as last time here)" in rebuilt.stdout
    assert f"setup [1/2] a noisy build: building (last time {recorded}s) ..." in rebuilt.stdout


def test_a_first_setup_prints_its_estimate_from_the_fresh_machines_times(tmp_path):
    """Issue 33: a fresh machine's `make demo` says how long its setup will take before it starts."""
    table = tmp_path / "lab" / "scripts" / "cold-times.txt"
    table.parent.mkdir(parents=True)
    table.write_text("# step seconds\nnoisy 754\nnoisy-other 99\n")
    first = run_steps(tmp_path)
    assert first.returncode == 0, first.stderr
    lines = first.stdout.splitlines()
    assert lines[:2] == [f"setup: 2 of 2 steps to build; their output goes to {tmp_path / 'build' / 'setup.log'}",
                         "setup: estimated time 12m34s (1 as on a fresh 2-core machine, lab/scripts/cold-times.txt; "
                         "1 not estimated)"]
    assert "setup [1/2] a noisy build: building (first build here; about 12m34s on a fresh 2-core machine) ..." in lines
    assert "setup [2/2] a quiet one: building (first build here) ..." in lines
    (tmp_path / "cache" / "noisy").unlink()
    (tmp_path / "cache" / "quiet").unlink()
    (tmp_path / "cache" / "timings" / "noisy").unlink()  # noisy never built here, quiet in 5 s
    (tmp_path / "cache" / "timings" / "quiet").write_text("5")
    again = run_steps(tmp_path)  # what this machine took wins over the table
    assert "setup: estimated time 12m39s (1 as long as last time here; 1 as on a fresh 2-core machine, " \
           "lab/scripts/cold-times.txt)" in again.stdout, again.stdout


def test_every_setup_step_has_a_fresh_machine_time():
    """The table covers setup's steps and no others, so a new step (or a renamed one) comes with its figure."""
    listed = subprocess.run(["bash", str(ROOT / "lab" / "scripts" / "setup.sh"), "no-such-step"], capture_output=True,
                            text=True, timeout=120)
    assert listed.returncode == 2, listed.stderr
    steps = listed.stderr.split("the steps: ", 1)[1].split()
    rows = [line.split() for line in (ROOT / "lab" / "scripts" / "cold-times.txt").read_text().splitlines()
            if line.strip() and not line.startswith("#")]
    assert [row[0] for row in rows] == steps
    assert all(len(row) == 2 and row[1].isdigit() and int(row[1]) > 0 for row in rows), rows


def test_the_demo_builds_the_steps_it_uses_and_no_test_tool():
    """`make demo` builds setup's steps for the local cluster (and its real node where one runs), not the tests'."""
    makefile = (ROOT / "Makefile").read_text()
    demo = set(re.search(r"^DEMO_STEPS = (.*)$", makefile, re.M).group(1).split())
    real_node = set(re.search(r"^DEMO_REAL_NODE_STEPS = (.*)$", makefile, re.M).group(1).split())
    assert not (demo | real_node) & {"helm3", "prometheus", "redis", "checkov", "kueue", "prometheus-operator",
                                     "registry", "ct", "verl-config", "helm-unittest", "vllm-metrics",
                                     "sglang-metrics"}
    assert {"venv", "helm4", "kubernetes", "kuberay-operator"} <= demo and "images" in real_node


def test_a_failed_step_stops_setup_and_shows_its_log(tmp_path):
    failed = run_steps(tmp_path, "broken")
    assert failed.returncode == 1
    log = tmp_path / "build" / "setup.log"
    assert "setup [3/3] a broken one: FAILED" in failed.stderr and str(log) in failed.stderr
    assert "the reason it broke" in failed.stderr
    assert "ran past a failure" not in log.read_text(), "errexit was off inside the step"


def test_named_steps_run_alone_and_an_unknown_name_is_refused(tmp_path):
    """`lab/scripts/setup.sh helm4` (what `make helm` runs): the named steps, in setup's order, and nothing else."""
    alone = run_steps(tmp_path, select="quiet")
    assert alone.returncode == 0, alone.stderr
    assert re.search(r"^setup \[1/1\] a quiet one: built in \d+s$", alone.stdout, re.M), alone.stdout
    assert not (tmp_path / "cache" / "noisy").exists()
    unknown = run_steps(tmp_path, select="quiet loud")
    assert unknown.returncode == 2 and "setup [" not in unknown.stdout
    assert unknown.stderr == "setup: no step named loud; the steps: noisy quiet\n"
