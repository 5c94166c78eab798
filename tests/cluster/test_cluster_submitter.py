"""Tiers 4 + 6: deleting (or suspending) the submitter's Job stops its Ray job; an eviction does not.

The chart's own ServiceAccount, Role, RoleBinding and submitter Job are created in the real local
apiserver; the submitter runs here with a token of that ServiceAccount (TokenRequest), against a real
Ray head, and gets SIGTERM as the kubelet would send it."""

from __future__ import annotations

import signal
import urllib.error
import urllib.request
import ssl

import pytest
from kubernetes import client, utils

from support import helm as helm_cli
from support.rayhead import module_head
from support.tools import helm_binaries
from support.submitter_run import GPUS, finish, jobs, start_submitter, stop, wait_for_status

RBAC_AND_JOB = {"ServiceAccount", "Role", "RoleBinding", "Job"}


@pytest.fixture(scope="module")
def dashboard(tmp_path_factory):
    with module_head(tmp_path_factory.mktemp("ray"), gpus=GPUS) as url:
        yield url


def install_submitter_objects(api: client.ApiClient, release: str, namespace: str) -> str:
    """The chart's RBAC and submitter Job, as rendered, created in a fresh namespace; returns the Job's name."""
    client.CoreV1Api(api).create_namespace({"metadata": {"name": namespace}})
    result = helm_cli.template(helm_binaries()["helm4"], release=release, namespace=namespace)
    assert result.returncode == 0, result.output
    objects = [doc for doc in result.documents() if doc["kind"] in RBAC_AND_JOB
               and "helm.sh/hook" not in doc["metadata"].get("annotations", {})]
    assert {doc["kind"] for doc in objects} == RBAC_AND_JOB
    for doc in objects:
        utils.create_from_dict(api, doc, namespace=namespace)
    return next(doc["metadata"]["name"] for doc in objects if doc["kind"] == "Job")


def service_account_token(api: client.ApiClient, namespace: str, account: str, tmp_path) -> str:
    request = {"spec": {"audiences": [], "expirationSeconds": 3600}}
    token = client.CoreV1Api(api).create_namespaced_service_account_token(account, namespace, request).status.token
    path = tmp_path / "token"
    path.write_text(token)
    return str(path)


def kube_settings(local_cluster, token_file: str, namespace: str) -> dict[str, str]:
    return {"kube_api": local_cluster.cluster.apiserver_url, "kube_token_file": token_file,
            "kube_ca_file": str(local_cluster.cluster.pki_dir / "ca.crt"), "namespace": namespace}


@pytest.mark.parametrize("action, stops", [("delete", True), ("suspend", True), ("evict", False)])
def test_sigterm_stops_the_run_only_when_the_job_is_gone(local_cluster, dashboard, tmp_path, action, stops):
    release, namespace = f"sig-{action}", f"submitter-{action}"
    job_name = install_submitter_objects(local_cluster.api, release, namespace)
    token = service_account_token(local_cluster.api, namespace, f"{release}-ppo-job", tmp_path)
    process = start_submitter(dashboard, tmp_path, job_name, seconds=60, attempts=1,
                              **kube_settings(local_cluster, token, namespace))
    try:
        wait_for_status(dashboard, job_name, "RUNNING")
        batch = client.BatchV1Api(local_cluster.api)
        if action == "delete":
            batch.delete_namespaced_job(job_name, namespace, propagation_policy="Background")
        elif action == "suspend":
            batch.patch_namespaced_job(job_name, namespace, {"spec": {"suspend": True}})
        process.send_signal(signal.SIGTERM)
        code, output = finish(process)
    finally:
        stop(process)

    assert code == 143, output
    status = jobs(dashboard, job_name)[0]["status"]
    if stops:
        expected = "its Job was deleted" if action == "delete" else "its Job was suspended"
        assert expected in output and f"stopped {job_name}-a1" in output, output
        wait_for_status(dashboard, job_name, "STOPPED", timeout=30)  # Ray stops a job asynchronously
    else:
        assert "its Job remains" in output and "keeps running" in output, output
        assert status == "RUNNING"
        urllib.request.urlopen(urllib.request.Request(f"{dashboard}/api/jobs/{job_name}-a1/stop", method="POST"),
                               timeout=10).read()
    client.CoreV1Api(local_cluster.api).delete_namespace(namespace)


def test_the_submitter_token_reads_its_own_job_and_nothing_else(local_cluster, tmp_path):
    release, namespace = "sig-rbac", "submitter-rbac"
    job_name = install_submitter_objects(local_cluster.api, release, namespace)
    token = open(service_account_token(local_cluster.api, namespace, f"{release}-ppo-job", tmp_path)).read()
    context = ssl.create_default_context(cafile=str(local_cluster.cluster.pki_dir / "ca.crt"))
    base = f"{local_cluster.cluster.apiserver_url}/apis/batch/v1/namespaces/{namespace}/jobs"

    def status_of(url: str) -> int:
        request = urllib.request.Request(url, headers={"Authorization": f"Bearer {token}"})
        try:
            with urllib.request.urlopen(request, timeout=10, context=context) as response:
                return response.status
        except urllib.error.HTTPError as error:
            return error.code

    assert status_of(f"{base}/{job_name}") == 200
    assert status_of(base) == 403  # no list
    assert status_of(f"{base}/some-other-job") == 403
    assert status_of(f"{local_cluster.cluster.apiserver_url}/api/v1/namespaces/{namespace}/secrets") == 403
    client.CoreV1Api(local_cluster.api).delete_namespace(namespace)
