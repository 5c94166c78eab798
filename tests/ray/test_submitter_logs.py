"""Tier 4: the submitter prints the Ray job's log exactly (every byte once, in order) and fetches it once,
not once per poll: its cost stays flat as a long run's log grows. A proxy in front of the real dashboard
counts the bytes the submitter gets back, and cuts its connections as a dashboard restart would."""

from __future__ import annotations

import hashlib
import time
from pathlib import Path

import pytest

from support.byteproxy import byte_proxy
from support.rayhead import ray_head
from support.submitter_run import GPUS, finish, jobs, start_submitter, wait_for_status

STAND_IN_LOGS = Path(__file__).resolve().parents[1] / "support" / "stand_in_logs.py"
LOG_BYTES, CHUNKS, SECONDS = 4_000_000, 80, 8.0
MARK = b"[verl-ppo submitter] "


@pytest.fixture(scope="module")
def head(tmp_path_factory):
    temp_dir = tmp_path_factory.mktemp("ray")
    with ray_head(temp_dir, gpus=GPUS) as url:
        yield url, temp_dir


def run_log_job(head, tmp_path, prefix, during=None) -> tuple[bytes, bytes, dict[str, int]]:
    """(the job's log file, what the submitter printed of it, bytes the submitter got back per path)."""
    url, temp_dir = head
    driver = tmp_path / "driver.py"
    driver.write_text(f"import runpy, sys\nsys.argv = ['', '{LOG_BYTES}', '{CHUNKS}', '{SECONDS}']\n"
                      f"runpy.run_path({str(STAND_IN_LOGS)!r}, run_name='__main__')\n")
    with byte_proxy(url) as proxy:
        process = start_submitter(proxy.url, tmp_path, prefix, driver=driver)
        if during:
            during(url, prefix, proxy)
        code, output = finish(process)
        received = dict(proxy.received)
    assert code == 0, output
    log = (temp_dir / "session_latest" / "logs" / f"job-driver-{prefix}-a1.log").read_bytes()
    raw = output.encode()
    start = raw.index(b"\n", raw.index(MARK + f"submitted {prefix}-a1".encode())) + 1
    printed = raw[start:raw.rindex(MARK)]
    return log, printed, received


def same_bytes(log: bytes, printed: bytes) -> None:
    assert (len(printed), hashlib.sha256(printed).hexdigest()) == (len(log), hashlib.sha256(log).hexdigest())


def test_the_followed_log_is_the_jobs_log_fetched_once(head, tmp_path):
    log, printed, received = run_log_job(head, tmp_path, "logs-ppo-job-0001")
    assert len(log) >= LOG_BYTES
    same_bytes(log, printed)
    # Polling the whole log (GET .../logs every 0.5 s while it grows over 8 s) gets it back about 8 times.
    assert sum(received.values()) < 1.2 * len(log) + 500_000, received


def test_cut_connections_lose_and_repeat_nothing(head, tmp_path):
    """A dashboard restart drops the log tail mid-stream: the submitter follows it anew, skipping what it printed."""
    cuts = []

    def cut_while_running(url, prefix, proxy):
        wait_for_status(url, prefix, "RUNNING")
        while len(cuts) < 2 and jobs(url, prefix)[0]["status"] == "RUNNING":
            time.sleep(SECONDS / 4)
            if proxy.received[f"/api/jobs/{prefix}-a1/logs/tail"] and proxy.cut():
                cuts.append(time.monotonic())
    log, printed, _ = run_log_job(head, tmp_path, "cut-ppo-job-0001", during=cut_while_running)
    assert cuts, "the job ended before a connection could be cut"
    same_bytes(log, printed)
