"""The tiers and the parallel workers' work units (tests/support/tiers.py, workers.py)."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

from support.tiers import TIERS, tier_of, work_unit

TESTS = Path(__file__).resolve().parent


def test_every_test_file_is_in_exactly_one_tier():
    for path in TESTS.glob("test_*.py"):
        assert tier_of(path.name) in TIERS


def test_a_file_in_no_tier_is_refused_with_the_file_named():
    with pytest.raises(pytest.UsageError, match="tests/test_nowhere.py"):
        tier_of("test_nowhere.py")


def test_daemon_tiers_keep_together_and_the_rest_goes_alone():
    # The real node (one per machine): every tier 7 test in one unit.
    assert work_unit("tests/test_pods.py::test_a") == work_unit("tests/test_pods_faults.py::test_b")
    # kwok clusters: a file is a unit (its worker's one local cluster serves every file it gets).
    assert work_unit("tests/test_cluster_shapes.py::test_a[x]") == work_unit("tests/test_cluster_shapes.py::test_b")
    assert work_unit("tests/test_cluster_shapes.py::test_a[x]") != work_unit("tests/test_cluster_queue.py::test_b")
    # A Ray head per module: a file is a unit, two files are two.
    assert work_unit("tests/test_submitter_ray.py::test_a") == work_unit("tests/test_submitter_ray.py::test_b")
    assert work_unit("tests/test_submitter_ray.py::test_a") != work_unit("tests/test_submitter_logs.py::test_a")
    # Rendering tests: each its own unit.
    assert work_unit("tests/test_chart.py::test_a") != work_unit("tests/test_chart.py::test_b")


def test_parallel_workers_run_a_kept_file_on_one_worker(tmp_path):
    """A real xdist run: the Ray tier's test_prepare.py lands on one worker, the generator tests spread."""
    record = tmp_path / "workers.txt"
    plugin = tmp_path / "record_worker.py"
    plugin.write_text(
        "import os\n"
        "def pytest_runtest_setup(item):\n"
        f"    with open({str(record)!r}, 'a') as f:\n"
        "        f.write(os.environ['PYTEST_XDIST_WORKER'] + ' ' + item.path.name + '\\n')\n")
    result = subprocess.run(
        [sys.executable, "-m", "pytest", str(TESTS / "test_prepare.py"), str(TESTS / "test_quantity.py"),
         "-n", "3", "-q", "-p", "record_worker", "-p", "no:cacheprovider"],
        capture_output=True, text=True, cwd=TESTS.parent, env={**os.environ, "PYTHONPATH": str(tmp_path)})
    assert result.returncode == 0, result.stdout + result.stderr
    runs = [line.split() for line in record.read_text().splitlines()]
    assert len({worker for worker, name in runs if name == "test_prepare.py"}) == 1
    assert len({worker for worker, name in runs if name == "test_quantity.py"}) > 1
