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


def start_rayjob_submitter(dashboard, tmp_path, submission_id, seconds=1.0, code=0,
                           **settings: str) -> subprocess.Popen:
    """The pod KubeRay starts from ppo-job.submitterPod: no job-name prefix, KubeRay's id and address."""
    spec = write_spec(tmp_path, submission_id, seconds, code)
    env = submitter_env(dashboard, spec, "unused-0000", max_attempts="3", **settings)
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


def submit(dashboard: str, submission_id: str, spec: dict) -> None:
    """A submission as another pod's submitter makes it (POST /api/jobs/)."""
    body = json.dumps({**spec, "submission_id": submission_id}).encode()
    request = urllib.request.Request(dashboard + "/api/jobs/", data=body, method="POST",
                                     headers={"Content-Type": "application/json"})
    urllib.request.urlopen(request, timeout=30).close()


def test_an_id_another_pod_submitted_at_the_same_moment_is_reattached(dashboard, tmp_path):
    """Two pods for one id (a second pod of the submitter Job, KubeRay's retried submitter) both look, find no
    run, and submit: the head takes the first; the second must follow that run to its end, not fail. The
    window is held open by a preflight that takes a few seconds (between the look and the submission)."""
    submission_id = "rj-race-h3j8k"
    preflight = tmp_path / "slow_preflight.py"
    preflight.write_text("import time\nNODES_LEFT = 75\ntime.sleep(4)\n")
    second = start_rayjob_submitter(dashboard, tmp_path, submission_id, seconds=3, preflight=str(preflight))
    deadline = time.monotonic() + 60
    while not any("-preflight-" in j["submission_id"] for j in submissions(dashboard, submission_id)):
        assert time.monotonic() < deadline and second.poll() is None, finish(second)
        time.sleep(0.2)
    submit(dashboard, submission_id, json.loads(write_spec(tmp_path, "first-pod", seconds=3).read_text()))
    code, output = finish(second)
    assert code == 0, output
    assert f"{submission_id} already exists (submitted by another pod at the same moment): re-attaching" in output
    assert f"{submission_id}: status=SUCCEEDED" in output, output
    runs = [j["submission_id"] for j in submissions(dashboard, submission_id)
            if "-preflight-" not in j["submission_id"]]
    assert runs == [submission_id]


def test_a_missing_preflight_program_fails_at_once_and_submits_nothing(dashboard, tmp_path):
    """Issue 28: reported as "the Jobs API failed; trying again" for VERL_PPO_DASHBOARD_TIMEOUT_SECONDS."""
    missing = tmp_path / "preflight.py"
    started = time.monotonic()
    code, output = finish(start_rayjob_submitter(dashboard, tmp_path, "rj-nopre-t5y6u", preflight=str(missing),
                                                 dashboard_timeout_seconds="120"))
    assert code == 2 and time.monotonic() - started < 30, output
    assert f"the preflight program {missing} (VERL_PPO_PREFLIGHT) cannot be used" in output, output
    assert "not tried again: no retry can mend it" in output and "trying again" not in output
    assert submissions(dashboard, "rj-nopre") == []
