"""Tier 4: Ray's token authentication against a real Ray head that has it (Ray 2.52 and later, the pinned Ray of
requirements-test.txt), started as KubeRay's authOptions start the chart's Ray pods (RAY_AUTH_MODE=token,
RAY_AUTH_TOKEN). The dashboard and the Jobs API refuse a request without the token or with another; the
submitter, given the token as the chart gives it (RAY_AUTH_TOKEN from the Secret), runs, follows the log through
the tail websocket, checks the cluster (helm test) and stops the release's jobs (uninstall hook)."""

from __future__ import annotations

import json
import secrets
import subprocess
import sys
import urllib.error
import urllib.request

import pytest

from support.rayhead import ray_head
from support.submitter_run import GPUS, SUBMITTER, finish, start_submitter, submitter_env, write_spec

sys.path.insert(0, str(SUBMITTER.parent))
import submitter  # noqa: E402  (the chart's file, as the Job's python3 runs it: its directory on the path)

TOKEN = secrets.token_urlsafe(32)


@pytest.fixture(scope="module")
def dashboard(tmp_path_factory):
    with ray_head(tmp_path_factory.mktemp("ray"), gpus=GPUS, auth_token=TOKEN) as url:
        yield url


@pytest.fixture
def with_token(monkeypatch):
    monkeypatch.setenv("RAY_AUTH_TOKEN", TOKEN)


def status_of(url: str, headers: dict[str, str]) -> int:
    try:
        with urllib.request.urlopen(urllib.request.Request(url, headers=headers), timeout=10) as response:
            return response.status
    except urllib.error.HTTPError as error:
        return error.code


def listed_jobs(dashboard: str) -> list[dict]:
    request = urllib.request.Request(dashboard + "/api/jobs/", headers={"X-Ray-Authorization": f"Bearer {TOKEN}"})
    with urllib.request.urlopen(request, timeout=10) as response:
        return json.load(response)


@pytest.mark.parametrize("path", ["/api/jobs/", "/api/version", "/api/cluster_status"])
def test_the_dashboard_refuses_requests_without_the_token(dashboard, path):
    assert status_of(dashboard + path, {}) == 401
    assert status_of(dashboard + path, {"X-Ray-Authorization": "Bearer not-the-token"}) == 403
    assert status_of(dashboard + path, {"X-Ray-Authorization": f"Bearer {TOKEN}"}) == 200


def test_the_submitter_with_the_token_runs_and_follows_the_log(dashboard, tmp_path, with_token):
    code, output = finish(start_submitter(dashboard, tmp_path, "auth-ppo-job-0001", seconds=2))
    assert code == 0, output
    assert "stand-in driver: done, exiting 0" in output and "status=SUCCEEDED" in output
    assert [j["submission_id"] for j in listed_jobs(dashboard)
            if j["submission_id"].startswith("auth-ppo-job-0001")] == ["auth-ppo-job-0001-a1"]


def test_the_preflight_package_reaches_a_head_that_asks_for_the_token(dashboard, tmp_path, with_token):
    """The preflight program travels to the head through the Jobs API's package upload, which token auth guards
    as it guards submissions: uploaded with the token, then run on the node."""
    program = SUBMITTER.with_name("preflight.py")
    expected = {"mountPath": str(tmp_path), "inputs": [], "gpusPerNode": GPUS, "gpuNodes": 1, "ncclEnv": {}}
    code, output = finish(start_submitter(dashboard, tmp_path, "auth-ppo-job-0004", preflight=str(program),
                                          preflight_expected=json.dumps(expected)))
    assert code == 0 and "preflight passed on 1 nodes" in output, output
    name, _ = submitter.preflight_package(program.read_text())
    package = f"{dashboard}/api/packages/gcs/{name}"
    assert status_of(package, {}) == 401
    assert status_of(package, {"X-Ray-Authorization": f"Bearer {TOKEN}"}) == 200


def test_the_submitter_without_the_token_submits_nothing(dashboard, tmp_path, monkeypatch):
    monkeypatch.delenv("RAY_AUTH_TOKEN", raising=False)
    code, output = finish(start_submitter(dashboard, tmp_path, "noauth-ppo-job-0001", timeout=5))
    assert code != 0, output
    assert "401" in output
    assert not [j for j in listed_jobs(dashboard) if j["submission_id"].startswith("noauth-ppo-job-0001")]


def test_helm_test_and_uninstall_modes_with_the_token(dashboard, tmp_path, with_token):
    spec = write_spec(tmp_path, "check")
    env = submitter_env(dashboard, spec, "auth-ppo-job-0002", expected_gpus=str(GPUS), wait_timeout_seconds="30")
    check = subprocess.run([sys.executable, str(SUBMITTER), "--check"], env=env, capture_output=True, text=True,
                           timeout=120)
    assert check.returncode == 0, check.stdout + check.stderr
    running = start_submitter(dashboard, tmp_path, "auth-ppo-job-0003", seconds=60)
    try:
        for _ in range(120):
            states = {j["submission_id"]: j["status"] for j in listed_jobs(dashboard)}
            if states.get("auth-ppo-job-0003-a1") == "RUNNING":
                break
            subprocess.run(["sleep", "0.5"], check=True)
        stop_env = submitter_env(dashboard, spec, "auth-ppo-job-0003")
        stopped = subprocess.run([sys.executable, str(SUBMITTER), "--stop"], env=stop_env, capture_output=True,
                                 text=True, timeout=120)
        assert stopped.returncode == 0, stopped.stdout + stopped.stderr
        assert "auth-ppo-job-0003-a1" in stopped.stdout + stopped.stderr
    finally:
        finish(running)
    states = {j["submission_id"]: j["status"] for j in listed_jobs(dashboard)}
    assert states["auth-ppo-job-0003-a1"] == "STOPPED"
