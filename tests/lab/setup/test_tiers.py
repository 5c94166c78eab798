"""The tiers and the parallel workers' work units (tests/support/tiers.py, workers.py): a test's tier is its
folder's, set by the folder's conftest.py, and a test outside a tier's folder stops the session."""

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from support.tiers import KEPT_TOGETHER, TIERS, tier_of, work_unit

TESTS = Path(__file__).resolve().parents[2]


def test_every_test_file_sits_in_a_tier_folder_whose_conftest_marks_it():
    folders = {path.parent for path in TESTS.rglob("test_*.py")}
    assert folders, TESTS
    for folder in folders:
        assert folder.name in TIERS, folder
        assert "mark_tier as pytest_itemcollected" in (folder / "conftest.py").read_text(), folder
    # The lab's tests apart: each folder is tests/<tier> or tests/lab/<tier>.
    assert {folder.parent for folder in folders} == {TESTS, TESTS / "lab"}


def test_a_file_in_no_tiers_folder_is_refused_with_the_file_named():
    with pytest.raises(pytest.UsageError, match="tests/stray/test_nowhere.py is in no tier's folder"):
        tier_of("tests/stray/test_nowhere.py::test_a")
    with pytest.raises(pytest.UsageError, match="tests/test_nowhere.py"):
        tier_of("tests/test_nowhere.py")
    assert tier_of("tests/lab/cluster/test_x.py::test_a[b/c]") == "cluster"


def _collect(tree: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "pytest", "tests", "--collect-only", "-q", "-p", "no:cacheprovider",
                           "-p", "no:xdist", *args], capture_output=True, text=True, cwd=tree,
                          env={**os.environ, "PYTHONPATH": str(TESTS.parent)})


def _tree(tmp_path: Path, files: dict[str, str]) -> Path:
    """A copy of the tests' root conftest and support with the given files (pytest.ini: node ids from tmp_path)."""
    tests = tmp_path / "tests"
    tests.mkdir(parents=True)
    (tmp_path / "pytest.ini").write_text("[pytest]\n")
    shutil.copy(TESTS / "conftest.py", tests)
    (tests / "support").symlink_to(TESTS / "support")
    for name, text in files.items():
        (tests / name).parent.mkdir(parents=True, exist_ok=True)
        (tests / name).write_text(text)
    return tmp_path


def test_the_folders_conftest_sets_the_tier_a_marker_selects(tmp_path):
    conftest = (TESTS / "chart" / "conftest.py").read_text()
    tree = _tree(tmp_path, {"chart/conftest.py": conftest, "chart/test_a.py": "def test_a():\n    pass\n",
                            "lab/cluster/conftest.py": conftest, "lab/cluster/test_b.py": "def test_b():\n    pass\n"})
    chart, cluster = _collect(tree, "-m", "chart"), _collect(tree, "-m", "cluster and not chart")
    assert chart.returncode == 0 and cluster.returncode == 0, chart.stdout + chart.stderr + cluster.stdout
    assert "tests/chart/test_a.py::test_a" in chart.stdout and "test_b" not in chart.stdout
    assert "tests/lab/cluster/test_b.py::test_b" in cluster.stdout and "test_a" not in cluster.stdout


def test_a_test_that_got_no_tier_stops_the_session(tmp_path):
    conftest = (TESTS / "chart" / "conftest.py").read_text()
    # A tier's folder without its conftest: nothing marks the test.
    result = _collect(_tree(tmp_path / "a", {"ray/test_a.py": "def test_a():\n    pass\n"}))
    assert result.returncode != 0 and "tests/ray/test_a.py: no tier marker" in result.stdout + result.stderr
    # A folder that is no tier's, with a tier conftest copied in.
    result = _collect(_tree(tmp_path / "b", {"stray/conftest.py": conftest,
                                             "stray/test_b.py": "def test_b():\n    pass\n"}))
    assert result.returncode != 0 and "tests/stray/test_b.py is in no tier's folder" in result.stdout + result.stderr


def test_daemon_tiers_keep_together_and_the_rest_goes_alone():
    # The real node (one per machine): every tier 7 test in one unit.
    assert work_unit("tests/pods/test_pods.py::test_a") == work_unit("tests/pods/test_pods_faults.py::test_b")
    # kwok clusters: a file is a unit (its worker's one local cluster serves every file it gets).
    shapes, queue = "tests/cluster/test_cluster_shapes.py", "tests/cluster/test_cluster_queue.py"
    assert work_unit(f"{shapes}::test_a[x]") == work_unit(f"{shapes}::test_b")
    assert work_unit(f"{shapes}::test_a[x]") != work_unit(f"{queue}::test_b")
    # A Ray head per module: a file is a unit, two files are two; the lab's Ray tests keep together the same way.
    ray, logs = "tests/ray/test_submitter_ray.py", "tests/ray/test_submitter_logs.py"
    assert work_unit(f"{ray}::test_a") == work_unit(f"{ray}::test_b")
    assert work_unit(f"{ray}::test_a") != work_unit(f"{logs}::test_a")
    benchmarks = "tests/lab/ray/test_benchmarks.py"
    assert work_unit(f"{benchmarks}::test_a") == work_unit(f"{benchmarks}::test_b")
    # Rendering tests: each its own unit.
    assert work_unit("tests/chart/test_chart.py::test_a") != work_unit("tests/chart/test_chart.py::test_b")


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
        [sys.executable, "-m", "pytest", str(TESTS / "ray" / "test_prepare.py"),
         str(TESTS / "generator" / "test_quantity.py"), "-n", "3", "-q", "-p", "record_worker",
         "-p", "no:cacheprovider"],
        capture_output=True, text=True, cwd=TESTS.parent, env={**os.environ, "PYTHONPATH": str(tmp_path)})
    assert result.returncode == 0, result.stdout + result.stderr
    runs = [line.split() for line in record.read_text().splitlines()]
    assert len({worker for worker, name in runs if name == "test_prepare.py"}) == 1
    assert len({worker for worker, name in runs if name == "test_quantity.py"}) > 1


def test_the_fast_lane_runs_the_submitters_decisions_and_no_daemon_tier():
    """`make test-fast` selects tiers by the Makefile's FAST_TIERS: the submitter's unit tests (stdlib, a local HTTP
    server) are in it, so a change to how the submitter reads a head's answers fails there; no tier that starts a
    daemon (a Ray head, a cluster, the real node) is."""
    makefile = (TESTS.parent / "Makefile").read_text()
    fast = set(re.search(r"^FAST_TIERS = (.*)$", makefile, re.M).group(1).split(" or "))
    assert "submitter" in fast and fast <= set(TIERS), fast
    assert not fast & set(KEPT_TOGETHER), fast
    assert (TESTS / "submitter" / "test_submitter_unit.py").exists()
    assert "import ray" not in (TESTS / "submitter" / "test_submitter_unit.py").read_text()
