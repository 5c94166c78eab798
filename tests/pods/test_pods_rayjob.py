"""Tier 7: a RayJob-mode release on the real node, with KubeRay's operator running as a pod (its chart's
labels, in the namespace its guide installs it to) and kube-router enforcing the release's NetworkPolicy.

KubeRay's RayJob controller follows the run through the head's Jobs API (port 8265): the policy must admit
the operator's pod there, or the controller never sees the run end and fails a run that succeeded (v1.6.0:
30 s after the submitter exits) and runs it again on a new cluster. Here the run succeeds once, the RayJob
reports it, and the cluster goes when the deletion policy says (shutdownAfterJobFinishes, after the TTL)."""

from __future__ import annotations

import shutil
import time

import pytest
import yaml

from support.podrelease import PodRelease, remove
from support.realnode import VALUES, connects
from lab.localcluster import processes
from lab.localcluster.kuberaypod import NAMESPACE as OPERATOR_NAMESPACE, operator_in_a_pod
from lab.localcluster.pods import terminated_exit_code
from lab.localcluster.release import CHART, claim_volume_path, plant_inputs, prepare, ray_pods, rayclusters, rayjob

RELEASE, NAMESPACE = "rayjob", "rayjob"
TTL_SECONDS = 45  # the finished cluster stays this long: time to look at what the operator reaches
ARGS = ["-f", str(VALUES), "--set", "global.mode=RayJob",
        "--set", f"ppo-job.rayJob.ttlSecondsAfterFinished={TTL_SECONDS}"]
DASHBOARD, OTHER_HEAD_PORTS = 8265, [6379, 10001]  # the Jobs API; GCS and Ray client


@pytest.fixture(scope="module")
def operator_pod(pod_cluster):
    image = "{repository}:{tag}".format(**yaml.safe_load(VALUES.read_text())["global"]["image"])
    with operator_in_a_pod(pod_cluster.cluster, pod_cluster.api, image) as name:
        yield name


@pytest.fixture(scope="module")
def release(pod_cluster, operator_pod):
    release = PodRelease(pod_cluster, RELEASE, NAMESPACE, ARGS)
    prepare(release.api, release.helm, RELEASE, NAMESPACE, ARGS)
    try:
        claim = release.helm.claim(RELEASE, NAMESPACE, *ARGS)[0]
        shutil.rmtree(claim_volume_path(NAMESPACE, claim), ignore_errors=True)
        release.volume = plant_inputs(release.helm, RELEASE, NAMESPACE, ARGS)
        yield release
    finally:
        remove(release, (NAMESPACE,))


def test_a_rayjob_run_succeeds_once_behind_the_enforced_policy_and_goes_after_the_ttl(release, operator_pod):
    started = time.monotonic()
    release.helm.run("install", RELEASE, str(CHART), "--namespace", NAMESPACE, *ARGS)
    clusters_seen: set[str] = set()

    def finished() -> bool:
        clusters_seen.update(c["metadata"]["name"] for c in rayclusters(release.api, NAMESPACE))
        status = rayjob(release.api, NAMESPACE, RELEASE).get("status", {})
        return status.get("jobDeploymentStatus") in ("Complete", "Failed")

    processes.wait_for("the RayJob finished", finished, 540, release.cluster.log("kuberay-operator"), interval=1)
    ended = time.monotonic() - started
    status = rayjob(release.api, NAMESPACE, RELEASE)["status"]
    assert (status["jobDeploymentStatus"], status.get("jobStatus")) == ("Complete", "SUCCEEDED"), status
    assert status.get("succeeded") == 1 and not status.get("failed"), status  # one attempt, not retried
    assert clusters_seen == {status["rayClusterName"]}, clusters_seen

    # Within the TTL the head still runs: the operator's pod reaches its Jobs API and nothing else, where the
    # release's own pods reach every port (the operator's refusals are the policy's, not closed ports).
    head = next(p for p in ray_pods(release.api, NAMESPACE, RELEASE) if p.metadata.labels["ray.io/node-type"] == "head")
    ports = [DASHBOARD, *OTHER_HEAD_PORTS]
    assert connects(release.api, NAMESPACE, release.worker, head.status.pod_ip, ports) == {p: True for p in ports}
    reached = connects(release.api, OPERATOR_NAMESPACE, operator_pod, head.status.pod_ip, ports)
    assert reached == {DASHBOARD: True, **{port: False for port in OTHER_HEAD_PORTS}}, reached

    # KubeRay's submitter Job ran our submitter once, which saw the run succeed.
    job = release.finished_job(RELEASE, timeout=60)
    assert job.status.succeeded == 1 and not job.status.failed, job.status
    [pod] = release.job_pods(RELEASE)
    assert terminated_exit_code(pod) == 0
    logs = release.core.read_namespaced_pod_log(pod.metadata.name, NAMESPACE)
    assert "stand-in driver: done, exiting 0" in logs and f"{status['jobId']}: status=SUCCEEDED" in logs, logs

    # shutdownAfterJobFinishes with ttlSecondsAfterFinished: the cluster stays for the TTL, then goes.
    assert rayclusters(release.api, NAMESPACE), "the cluster went before its TTL"
    gone = processes.wait_for("the RayJob's cluster and its pods deleted", lambda: not rayclusters(
        release.api, NAMESPACE) and not ray_pods(release.api, NAMESPACE, RELEASE), TTL_SECONDS + 120, interval=1)
    status = rayjob(release.api, NAMESPACE, RELEASE)["status"]
    assert status.get("succeeded") == 1 and not status.get("failed"), status
    print(f"\ntier 7 RayJob: Complete {ended:.0f}s after helm install, its cluster deleted {gone:.0f}s after that "
          f"(TTL {TTL_SECONDS}s)")
