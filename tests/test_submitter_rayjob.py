"""Tier 4: the submitter as a KubeRay RayJob's submitter pod (RayJob mode), against a real Ray head.
KubeRay names the one submission id (RAY_JOB_SUBMISSION_ID, <RayJob>-<5 random characters>) and
follows it for the RayJob's status: the submitter must submit exactly that id, once, re-attach when a
retried pod finds it, never start a second attempt itself (a RayJob retry is a new cluster), and exit
with the Ray job's outcome (KubeRay's own submitter exits 0 on a failed job, kuberay issue 3211)."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
import urllib.request

import pytest

from support.rayhead import module_head
from support.submitter_run import GPUS, SUBMITTER, finish, submitter_env, write_spec


@pytest.fixture(scope="module")
def dashboard(tmp_path_factory):
    with module_head(tmp_path_factory.mktemp("ray"), gpus=GPUS) as url:
        yield url


def submissions(dashboard: str, rayjob: str) -> list[dict]:
    """Every Ray job whose id starts with the RayJob's name: KubeRay's and any the submitter made up."""
    with urllib.request.urlopen(dashboard + "/api/jobs/", timeout=10) as response:
        return [job for job in json.load(response) if (job.get("submission_id") or "").startswith(rayjob)]


def start_rayjob_submitter(dashboard, tmp_path, submission_id, seconds=1.0, code=0) -> subprocess.Popen:
    """The pod KubeRay starts from ppo-job.submitterPod: no job-name prefix, KubeRay's id and address."""
    spec = write_spec(tmp_path, submission_id, seconds, code)
    env = submitter_env(dashboard, spec, "unused-0000", max_attempts="3")
    del env["VERL_PPO_SUBMISSION_PREFIX"]
    env["RAY_JOB_SUBMISSION_ID"] = submission_id
    return subprocess.Popen([sys.executable, str(SUBMITTER)], env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True)


def wait_running(dashboard, submission_id) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if any(j["status"] == "RUNNING" for j in submissions(dashboard, submission_id)):
            return
        time.sleep(0.3)
    raise AssertionError(f"{submission_id} never RUNNING: {submissions(dashboard, submission_id)}")


@pytest.mark.parametrize("submission_id,driver_code,status", [("rj-ok-x7k2p", 0, "SUCCEEDED"),
                                                            ("rj-fail-q9w3e", 3, "FAILED")])
def test_submits_kuberays_id_once_and_exits_with_the_outcome(dashboard, tmp_path, submission_id, driver_code, status):
    """One attempt even with VERL_PPO_MAX_ATTEMPTS=3: in this mode that figure is the RayJob's backoffLimit + 1."""
    code, output = finish(start_rayjob_submitter(dashboard, tmp_path, submission_id, code=driver_code))
    assert code == (0 if status == "SUCCEEDED" else 1), output
    assert f"submitted {submission_id}" in output and f"status={status}" in output
    assert [j["submission_id"] for j in submissions(dashboard, submission_id.rsplit("-", 1)[0])] == [submission_id]


def test_retried_pod_reattaches_without_a_second_run(dashboard, tmp_path):
    first = start_rayjob_submitter(dashboard, tmp_path, "rj-retry-m4n5b", seconds=8)
    wait_running(dashboard, "rj-retry-m4n5b")
    first.send_signal(signal.SIGKILL)
    first.wait(timeout=10)
    code, output = finish(start_rayjob_submitter(dashboard, tmp_path, "rj-retry-m4n5b", seconds=8))
    assert code == 0, output
    assert "re-attaching to rj-retry-m4n5b (RUNNING)" in output
    assert [j["submission_id"] for j in submissions(dashboard, "rj-retry")] == ["rj-retry-m4n5b"]


def test_sigterm_leaves_the_run_to_kuberay(dashboard, tmp_path):
    """KubeRay stops the Ray job when the RayJob is deleted; an evicted submitter pod must not."""
    first = start_rayjob_submitter(dashboard, tmp_path, "rj-term-z8c1v", seconds=6)
    wait_running(dashboard, "rj-term-z8c1v")
    first.send_signal(signal.SIGTERM)
    code, output = finish(first)
    assert code == 143 and "KubeRay's RayJob owns the run" in output, output
    assert submissions(dashboard, "rj-term")[0]["status"] == "RUNNING"
