"""The benchmarks run and print their figures (they gate nothing; this keeps them from rotting)."""

import subprocess
import sys

from support.tools import ROOT


def test_submit_overhead_benchmark_prints_its_figures():
    result = subprocess.run([sys.executable, "-m", "lab.benchmarks.submit_overhead", "--runs", "1"], cwd=ROOT,
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "run 1:" in result.stdout and "target < 2 s:" in result.stdout


def test_log_follow_benchmark_prints_both_rows():
    result = subprocess.run([sys.executable, "-m", "lab.benchmarks.log_follow", "--megabytes", "2",
                             "--old-megabytes", "1",
                             "--seconds", "2"], cwd=ROOT, capture_output=True, text=True, timeout=400)
    assert result.returncode == 0, result.stdout + result.stderr
    rows = [line.split() for line in result.stdout.splitlines() if line.startswith(("before", "after"))]
    assert [row[0] for row in rows] == ["before", "after", "after"], result.stdout
    assert all(row[-1] == "yes" for row in rows), result.stdout
