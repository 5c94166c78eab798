"""The benchmarks run and print their figures (they gate nothing; this keeps them from rotting)."""

import subprocess
import sys

from support.tools import ROOT


def test_submit_overhead_benchmark_prints_its_figures():
    result = subprocess.run([sys.executable, "-m", "benchmarks.submit_overhead", "--runs", "1"], cwd=ROOT,
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "run 1:" in result.stdout and "target < 2 s:" in result.stdout
