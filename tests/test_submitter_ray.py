"""Tier 4: the submitter against a real Ray head (CPU, logical GPUs) with a stand-in entrypoint.
The outcome is the Ray job's status; a restarted submitter re-attaches; one submission per attempt."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from support.rayhead import ray_head

ROOT = Path(__file__).resolve().parents[1]
SUBMITTER = ROOT / "charts" / "verl-ppo" / "charts" / "ppo-job" / "files" / "submitter.py"
STAND_IN = Path(__file__).resolve().parent / "support" / "stand_in.py"
GPUS = 4


@pytest.fixture(scope="module")
def dashboard(tmp_path_factory):
    with ray_head(tmp_path_factory.mktemp("ray"), gpus=GPUS) as url:
        yield url


def jobs(dashboard: str, prefix: str) -> list[dict]:
    with urllib.request.urlopen(dashboard + "/api/jobs/", timeout=10) as response:
        return [j for j in json.load(response) if (j.get("submission_id") or "").startswith(prefix + "-a")]


def start_submitter(dashboard, tmp_path, prefix, seconds=1.0, code=0, expected_gpus=GPUS, timeout=60,
                    attempts=3) -> subprocess.Popen:
    spec = tmp_path / f"{prefix}.json"
    spec.write_text(json.dumps({"entrypoint": f"{sys.executable} {STAND_IN} {seconds} {code}",
                                "runtime_env": {"env_vars": {"TORCH_NCCL_AVOID_RECORD_STREAMS": "1"}},
                                "metadata": {"release": "test"}}))
    env = {**os.environ, "RAY_DASHBOARD_URL": dashboard, "VERL_PPO_JOB_SPEC": str(spec),
           "VERL_PPO_SUBMISSION_PREFIX": prefix, "VERL_PPO_EXPECTED_GPUS": str(expected_gpus),
           "VERL_PPO_WAIT_TIMEOUT_SECONDS": str(timeout), "VERL_PPO_MAX_ATTEMPTS": str(attempts),
           "VERL_PPO_POLL_SECONDS": "0.5"}
    return subprocess.Popen([sys.executable, str(SUBMITTER)], env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True)


def finish(process: subprocess.Popen) -> tuple[int, str]:
    output, _ = process.communicate(timeout=180)
    return process.returncode, output


def wait_for_status(dashboard, prefix, status, timeout=60) -> dict:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = [j for j in jobs(dashboard, prefix) if j["status"] == status]
        if found:
            return found[0]
        time.sleep(0.3)
    raise AssertionError(f"no {status} job for {prefix}: {jobs(dashboard, prefix)}")


def test_success_exits_zero_with_the_logs(dashboard, tmp_path):
    code, output = finish(start_submitter(dashboard, tmp_path, "ok-r1"))
    assert code == 0, output
    assert "stand-in driver: done, exiting 0" in output and "status=SUCCEEDED" in output
    assert [j["submission_id"] for j in jobs(dashboard, "ok-r1")] == ["ok-r1-a1"]


def test_failure_exits_non_zero_with_the_driver_exit_code(dashboard, tmp_path):
    code, output = finish(start_submitter(dashboard, tmp_path, "fail-r1", code=3, attempts=1))
    assert code != 0, output
    assert "status=FAILED" in output and "driver_exit_code=3" in output


def test_restarted_submitter_reattaches_without_a_second_submission(dashboard, tmp_path):
    first = start_submitter(dashboard, tmp_path, "restart-r1", seconds=8)
    wait_for_status(dashboard, "restart-r1", "RUNNING")
    first.send_signal(signal.SIGKILL)
    first.wait(timeout=10)
    code, output = finish(start_submitter(dashboard, tmp_path, "restart-r1", seconds=8))
    assert code == 0, output
    assert "re-attaching to restart-r1-a1" in output
    assert [j["submission_id"] for j in jobs(dashboard, "restart-r1")] == ["restart-r1-a1"]


def test_stopped_job_is_a_failure(dashboard, tmp_path):
    process = start_submitter(dashboard, tmp_path, "stop-r1", seconds=30, attempts=1)
    wait_for_status(dashboard, "stop-r1", "RUNNING")
    request = urllib.request.Request(dashboard + "/api/jobs/stop-r1-a1/stop", method="POST")
    urllib.request.urlopen(request, timeout=10).read()
    code, output = finish(process)
    assert code != 0 and "status=STOPPED" in output, output


def test_too_few_gpus_times_out_with_what_it_saw(dashboard, tmp_path):
    started = time.monotonic()
    code, output = finish(start_submitter(dashboard, tmp_path, "short-r1", expected_gpus=8, timeout=3))
    assert code == 3, output
    assert f"expected 8 GPUs, saw {GPUS} GPUs" in output
    assert time.monotonic() - started < 30
    assert jobs(dashboard, "short-r1") == []


def test_retry_after_failure_starts_a_new_attempt(dashboard, tmp_path):
    code, _ = finish(start_submitter(dashboard, tmp_path, "retry-r1", code=1, attempts=2))
    assert code != 0
    code, output = finish(start_submitter(dashboard, tmp_path, "retry-r1", code=0, attempts=2))
    assert code == 0, output
    assert "starting attempt 2" in output
    assert sorted(j["submission_id"] for j in jobs(dashboard, "retry-r1")) == ["retry-r1-a1", "retry-r1-a2"]
    code, output = finish(start_submitter(dashboard, tmp_path, "retry-r1", code=0, attempts=2))
    assert code == 0 and "re-attaching to retry-r1-a2 (SUCCEEDED)" in output


def test_check_mode_waits_for_gpus_and_submits_nothing(dashboard, tmp_path):
    """The chart's helm test pod runs the submitter with --check."""
    spec = tmp_path / "check.json"
    spec.write_text(json.dumps({"entrypoint": "false"}))
    env = {**os.environ, "RAY_DASHBOARD_URL": dashboard, "VERL_PPO_JOB_SPEC": str(spec),
           "VERL_PPO_SUBMISSION_PREFIX": "check-r1", "VERL_PPO_EXPECTED_GPUS": str(GPUS),
           "VERL_PPO_WAIT_TIMEOUT_SECONDS": "10", "VERL_PPO_POLL_SECONDS": "0.5"}
    result = subprocess.run([sys.executable, str(SUBMITTER), "--check"], env=env, capture_output=True, text=True,
                            timeout=60)
    assert result.returncode == 0, result.stdout + result.stderr
    assert f"cluster ready: {GPUS} GPUs" in result.stdout
    assert jobs(dashboard, "check-r1") == []


def test_stop_mode_stops_every_active_job_of_the_release(dashboard, tmp_path):
    """The chart's pre-delete hook: all revisions of this release, no other release's jobs."""
    running = start_submitter(dashboard, tmp_path, "gone-r1", seconds=60, attempts=1)
    other = start_submitter(dashboard, tmp_path, "gone2-r1", seconds=3, attempts=1)
    wait_for_status(dashboard, "gone-r1", "RUNNING")
    wait_for_status(dashboard, "gone2-r1", "RUNNING")
    spec = tmp_path / "stop.json"
    spec.write_text(json.dumps({"entrypoint": "false"}))
    env = {**os.environ, "RAY_DASHBOARD_URL": dashboard, "VERL_PPO_JOB_SPEC": str(spec),
           "VERL_PPO_SUBMISSION_PREFIX": "gone-r2", "VERL_PPO_EXPECTED_GPUS": str(GPUS)}
    result = subprocess.run([sys.executable, str(SUBMITTER), "--stop"], env=env, capture_output=True, text=True,
                            timeout=60)
    assert result.returncode == 0 and "stopped gone-r1-a1" in result.stdout, result.stdout + result.stderr
    code, output = finish(running)
    assert code != 0 and "status=STOPPED" in output
    code, output = finish(other)
    assert code == 0, output


def test_stop_mode_never_blocks_uninstall_when_the_head_is_gone(tmp_path):
    spec = tmp_path / "stop.json"
    spec.write_text(json.dumps({"entrypoint": "false"}))
    from support.rayhead import free_port

    env = {**os.environ, "RAY_DASHBOARD_URL": f"http://127.0.0.1:{free_port()}", "VERL_PPO_JOB_SPEC": str(spec),
           "VERL_PPO_SUBMISSION_PREFIX": "gone-r2", "VERL_PPO_EXPECTED_GPUS": "1"}
    result = subprocess.run([sys.executable, str(SUBMITTER), "--stop"], env=env, capture_output=True, text=True,
                            timeout=60)
    assert result.returncode == 0 and "could not stop" in result.stdout
