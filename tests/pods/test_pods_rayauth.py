"""Tier 7: Ray's token authentication on the real node (global.rayAuth.tokenSecret, the Ray 2.60 image): KubeRay
hands the token from the user's Secret to the Ray containers, the head's dashboard refuses a request without it,
and the submitter, the helm test pod and the pre-delete hook, given it by reference, do their work."""

from __future__ import annotations

import secrets

import pytest
from kubernetes import client

from support.podrelease import installed
from support.realnode import VALUES, python_in, ray_jobs
from lab.localcluster.pods import terminated_exit_code

RELEASE, NAMESPACE, SECRET = "auth", "auth", "ray-token"
TOKEN = secrets.token_urlsafe(32)
AUTH = ["-f", str(VALUES), "--set", f"global.rayAuth.tokenSecret={SECRET}", "--set", "raycluster.rayVersion=2.60.0"]


@pytest.fixture(scope="module")
def release(pod_cluster):
    def create_secret(_volume) -> None:
        client.CoreV1Api(pod_cluster.api).create_namespaced_secret(NAMESPACE, client.V1Secret(
            metadata=client.V1ObjectMeta(name=SECRET), string_data={"auth_token": TOKEN}))

    with installed(pod_cluster, RELEASE, NAMESPACE, AUTH, before_install=create_secret) as r:
        yield r


def test_kuberay_hands_the_token_to_the_ray_containers_by_reference(release):
    for node_type in ("head", "worker"):
        env = {e.name: e for e in release.pod(node_type).spec.containers[0].env}
        assert env["RAY_AUTH_MODE"].value == "token"
        assert env["RAY_AUTH_TOKEN"].value_from.secret_key_ref.name == SECRET and env["RAY_AUTH_TOKEN"].value is None


def test_the_head_refuses_a_request_without_the_token(release):
    result = python_in(release.api, NAMESPACE, release.head, """
        import os, urllib.error, urllib.request
        def status(headers):
            try:
                jobs = urllib.request.Request("http://127.0.0.1:8265/api/jobs/", headers=headers)
                return urllib.request.urlopen(jobs, timeout=30).status
            except urllib.error.HTTPError as error:
                return error.code
        print(status({}), status({"X-Ray-Authorization": "Bearer " + os.environ["RAY_AUTH_TOKEN"]}))
    """)
    assert result.code == 0, result.output
    assert result.output.strip().splitlines()[-1] == "401 200"


def test_the_submitter_with_the_token_runs_the_job(release):
    job = release.submitter_jobs()[-1]
    finished = release.finished_job(job.metadata.name)
    assert finished.status.succeeded == 1, finished.status
    [pod] = release.job_pods(job.metadata.name)
    assert terminated_exit_code(pod) == 0
    logs = release.core.read_namespaced_pod_log(pod.metadata.name, NAMESPACE)
    assert "stand-in driver: done, exiting 0" in logs, logs  # the log tail's websocket carried the token too
    assert ray_jobs(release.api, NAMESPACE, release.head)[f"{job.metadata.name}-a1"]["status"] == "SUCCEEDED"


def test_helm_test_passes_with_the_token(release):
    result = release.helm.run("test", RELEASE, "--namespace", NAMESPACE, "--logs", check=False, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr


def test_the_pre_delete_hook_stops_the_run_with_the_token(release):
    known = {j.metadata.name for j in release.submitter_jobs()}
    release.upgrade("--set-string", "ppo-job.runtimeEnv.env.STAND_IN_SECONDS=601")
    running = f"{release.new_job_after(known)}-a1"
    release.wait_ray_job(running, {"RUNNING"})
    uninstall, seen = release.uninstall_watching(running, {"X-Ray-Authorization": f"Bearer {TOKEN}"})
    assert uninstall.returncode == 0, uninstall.stderr
    assert seen and seen[0] == "RUNNING" and seen[-1] == "STOPPED", seen
