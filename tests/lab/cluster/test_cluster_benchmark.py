"""Tier 6: the scale benchmark runs and prints its figures (it gates nothing; a small size here keeps it
from rotting, `make bench-scale` runs 64, 256 and 1,024 nodes)."""

import subprocess
import sys

from support.tools import ROOT
from lab.localcluster.cluster import STOP_ORDER
from lab.localcluster.processes import stop_all


def test_cluster_scale_benchmark_prints_its_figures(tmp_path):
    try:
        result = subprocess.run([sys.executable, "-m", "lab.benchmarks.cluster_scale", "--nodes", "3",
                                 "--work", str(tmp_path)], cwd=ROOT, capture_output=True, text=True, timeout=600)
    finally:  # a benchmark killed at the timeout cannot stop the cluster it started
        stop_all(tmp_path / "cluster-3", STOP_ORDER)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "all 3 Ray pods bound to nodes:" in result.stdout and "RayCluster ready (head + 2 workers):" in result.stdout
    # Where the time went, and the table's row for the one size: generator times, the release's size.
    assert "created by the operator" in result.stdout and "pod create in the apiserver" in result.stdout
    row = result.stdout.splitlines()[-1].split()
    assert row[:2] == ["3", "24"] and float(row[4]) > 100 and int(row[5]) > 5, result.stdout
