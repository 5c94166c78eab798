"""Tier 6: the scale benchmark runs and prints its figures (it gates nothing; a small size here keeps it
from rotting, `python -m benchmarks.cluster_scale` runs the full 64 nodes)."""

import subprocess
import sys

from support.tools import ROOT
from tools.localcluster.cluster import STOP_ORDER
from tools.localcluster.processes import stop_all


def test_cluster_scale_benchmark_prints_its_figures(tmp_path):
    try:
        result = subprocess.run([sys.executable, "-m", "benchmarks.cluster_scale", "--nodes", "3",
                                 "--work", str(tmp_path)], cwd=ROOT, capture_output=True, text=True, timeout=600)
    finally:  # a benchmark killed at the timeout cannot stop the cluster it started
        stop_all(tmp_path / "cluster", STOP_ORDER)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "all 3 Ray pods bound to nodes:" in result.stdout and "RayCluster ready (head + 2 workers):" in result.stdout
