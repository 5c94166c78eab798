"""Benchmark: the submitter's overhead from a ready cluster to a submitted Ray job (target < 2 s).

Starts a real Ray head (CPU, logical GPUs), then runs the chart's submitter program several times
against it with a stand-in driver. For each run it prints the time from starting the submitter's
process to the job's submission as Ray records it (the job's start_time), and to the submitter's
own "submitted" line. Prints figures; asserts nothing.

    python -m lab.benchmarks.submit_overhead [--runs 5]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests"))

# The tests' real Ray head and their way of running the submitter as its Job does, reused.
from support.rayhead import ray_head  # noqa: E402
from support.submitter_run import GPUS, SUBMITTER, submitter_env, write_spec  # noqa: E402

TARGET_SECONDS = 2.0


def ray_job(dashboard: str, submission_id: str) -> dict:
    with urllib.request.urlopen(f"{dashboard}/api/jobs/{submission_id}", timeout=10) as response:
        return json.load(response)


def one_run(dashboard: str, work: Path, index: int) -> tuple[float, float]:
    """(seconds to Ray's recorded submission, seconds to the submitter's 'submitted' line)."""
    prefix = f"bench-ppo-job-{index:04x}"
    env = submitter_env(dashboard, write_spec(work, prefix, seconds=0), prefix, poll_seconds="0.2")
    started = time.time()
    process = subprocess.Popen([sys.executable, str(SUBMITTER)], env=env, stdout=subprocess.PIPE, text=True)
    submitted_line = None
    for line in process.stdout:
        if submitted_line is None and f"submitted {prefix}-a1" in line:
            submitted_line = time.time()
    process.wait(timeout=120)
    if process.returncode != 0 or submitted_line is None:
        raise SystemExit(f"run {index} failed (exit {process.returncode})")
    recorded = ray_job(dashboard, f"{prefix}-a1")["start_time"] / 1000.0
    return recorded - started, submitted_line - started


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="verl-ppo-bench-") as scratch:
        work = Path(scratch)
        with ray_head(work / "ray", gpus=GPUS) as dashboard:
            one_run(dashboard, work, 0)  # warm-up: the first job also starts Ray's job supervisor machinery
            figures = [one_run(dashboard, work, index) for index in range(1, args.runs + 1)]
    to_ray = [recorded for recorded, _ in figures]
    to_line = [line for _, line in figures]
    print("submitter overhead, cluster ready -> job submitted (Ray's start_time), seconds:")
    for index, (recorded, line) in enumerate(figures, 1):
        print(f"  run {index}: {recorded:.3f} (submitter's 'submitted' line at {line:.3f})")
    median = statistics.median(to_ray)
    print(f"median {median:.3f}  max {max(to_ray):.3f}  line median {statistics.median(to_line):.3f}")
    print(f"target < {TARGET_SECONDS:g} s: {'met' if max(to_ray) < TARGET_SECONDS else 'NOT met'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
