"""Benchmark: the submitter's cost while it follows a Ray job's log, before (every poll fetched the whole
log) and after (Ray's log tail: each byte fetched once), side by side.

Starts a real Ray head (CPU, logical GPUs) and, for each row, runs a submitter over a stand-in job that
writes MEGABYTES of log lines in 200 chunks over SECONDS. "before" is the submitter of commit
OLD_SUBMITTER_COMMIT (the last one that polled the whole log), in a temporary copy; "after" is
files/submitter.py. For each it prints the submitter process's CPU seconds (user + system) and peak
RSS (from wait4), per GB of log and per hour of run, and checks that it printed the whole log.
The old code is run on a smaller log by default: its cost grows with the square of the log (a 1 GB log
needs several GB in the submitter, whose pod is limited to 256 MiB). Prints figures; asserts nothing.

    python -m lab.benchmarks.log_follow [--megabytes 1024] [--old-megabytes 64] [--seconds 120]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests"))

from support.rayhead import ray_head  # noqa: E402
from support.submitter_run import GPUS, SUBMITTER, submitter_env, write_spec  # noqa: E402

OLD_SUBMITTER_COMMIT = "1c86b3b"
STAND_IN_LOGS = ROOT / "tests" / "support" / "stand_in_logs.py"
CHUNKS = 200


@dataclass
class Row:
    label: str
    log_bytes: int
    printed_bytes: int
    seconds: float
    cpu_seconds: float
    peak_rss_mib: float

    def line(self) -> str:
        gigabytes, hours = self.log_bytes / 2**30, self.seconds / 3600
        return (f"{self.label:<8} {self.log_bytes / 2**20:9.0f} {self.seconds:8.1f} {self.cpu_seconds:8.2f} "
                f"{self.cpu_seconds / gigabytes:10.1f} {self.cpu_seconds / hours:10.0f} {self.peak_rss_mib:9.1f}  "
                f"{'yes' if self.printed_bytes >= self.log_bytes else 'NO'}")


HEADER = (f"{'code':<8} {'log MiB':>9} {'run s':>8} {'CPU s':>8} {'CPU s/GB':>10} {'CPU s/h':>10} "
          f"{'peak MiB':>9}  whole log printed")


def old_submitter(work: Path) -> Path:
    """The submitter as it was before the log tail, from git, in a temporary copy."""
    source = subprocess.run(["git", "-C", str(ROOT), "show", f"{OLD_SUBMITTER_COMMIT}:{SUBMITTER.relative_to(ROOT)}"],
                            check=True, capture_output=True, text=True).stdout
    copy = work / "old" / "submitter.py"
    copy.parent.mkdir(parents=True, exist_ok=True)
    copy.write_text(source)
    return copy


def follow_once(dashboard: str, work: Path, program: Path, label: str, megabytes: int, seconds: float,
                index: int) -> Row:
    """One stand-in job followed by `program`; the head's temp dir is work/ray."""
    prefix = f"bench-log-{index:04x}"
    driver = work / f"{prefix}.py"
    driver.write_text(f"import runpy, sys\nsys.argv = ['', '{megabytes * 2**20}', '{CHUNKS}', '{seconds}']\n"
                      f"runpy.run_path({str(STAND_IN_LOGS)!r}, run_name='__main__')\n")
    env = submitter_env(dashboard, write_spec(work, prefix, driver=driver), prefix, poll_seconds="5")
    output = work / f"{prefix}.out"
    started = time.monotonic()
    with open(output, "wb") as sink:
        process = subprocess.Popen([sys.executable, str(program)], env=env, stdout=sink, stderr=subprocess.STDOUT)
        _, status, usage = os.wait4(process.pid, 0)
        process.returncode = os.waitstatus_to_exitcode(status)
    elapsed = time.monotonic() - started
    if process.returncode != 0:
        tail = output.read_bytes()[-3000:].decode(errors="replace")
        raise SystemExit(f"{label}: the submitter exited {process.returncode}; its output ended:\n{tail}")
    log = work / "ray" / "session_latest" / "logs" / f"job-driver-{prefix}-a1.log"
    log_bytes, printed = log.stat().st_size, output.stat().st_size
    output.unlink()
    return Row(label, log_bytes, printed, elapsed, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--megabytes", type=int, default=1024, help="log written for the new code")
    parser.add_argument("--old-megabytes", type=int, default=64, help="log for both, side by side")
    parser.add_argument("--seconds", type=float, default=120.0, help="how long each stand-in job writes")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="verl-ppo-bench-logs-") as scratch:
        work = Path(scratch)
        old = old_submitter(work)
        with ray_head(work / "ray", gpus=GPUS) as dashboard:
            runs = [(old, "before", args.old_megabytes), (SUBMITTER, "after", args.old_megabytes)]
            if args.megabytes != args.old_megabytes:
                runs.append((SUBMITTER, "after", args.megabytes))
            # Each row as soon as it is measured: a long row that runs out of time keeps the earlier ones.
            print(f"submitter following a Ray job's log (stand-in writing for {args.seconds:g} s, polls every 5 s; "
                  f"CPU and peak RSS of the submitter process):")
            print(HEADER, flush=True)
            for index, (program, label, megabytes) in enumerate(runs):
                print(follow_once(dashboard, work, program, label, megabytes, args.seconds, index).line(), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
