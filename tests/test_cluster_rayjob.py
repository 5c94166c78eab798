"""Tier 6: RayJob mode with the real KubeRay operator: the operator creates a RayCluster for the run from
the RayJob's spec (on nodes of the release's shape), starts our submitter as the RayJob's submitter Job
under its own submission id, and removes the cluster after the run; a failed run is retried on a new one.

Under kwok no container runs, so "the run finishes" means this: kwok plays the submitter pod, which
exits 0 at once (its stage for Job pods), and no Ray job exists. KubeRay then treats the RayJob as it
treats a submitter that ended without a terminal Ray job: 30 s later (its submitter-finished timeout)
the RayJob is Failed, the cluster is deleted (shutdownAfterJobFinishes, ttlSecondsAfterFinished=0), and
with attempts left the RayJob is retried on a fresh cluster. The deletion path is the same as after a
SUCCEEDED or FAILED Ray job; the real outcome of a real run is tier 4's (the submitter against a real
Ray head) and tier 7's."""

from __future__ import annotations

from kubernetes import client

from generator import paths
from support.cluster import leftovers, wait_ready
from support.tools import helm_binaries
from lab.localcluster import processes
from lab.localcluster.release import CHART, ray_pods, rayclusters, rayjob

SHAPE = "a10-24g-x4"
RELEASE = "verl-ppo"
ARGS = ["-f", str(paths.VALUES_DIR / f"{SHAPE}.yaml"), "--set", "global.mode=RayJob",
        "--set", "ppo-job.submitter.maxAttempts=2"]


def cluster_names(api, namespace: str) -> list[str]:
    return [c["metadata"]["name"] for c in rayclusters(api, namespace)]


def test_operator_creates_the_cluster_for_the_run_and_removes_it_after(local_cluster):
    api, helm = local_cluster.api, local_cluster.helm(helm_binaries()["helm4"])
    with local_cluster.release_namespace(helm, RELEASE, "rayjob-mode", ARGS) as namespace:
        helm.run("install", RELEASE, str(CHART), "-n", namespace, *ARGS)
        wait_ready(local_cluster, namespace)
        (first,) = rayclusters(api, namespace)
        owner = first["metadata"]["ownerReferences"][0]
        assert (owner["kind"], owner["name"]) == ("RayJob", RELEASE)
        assert first["metadata"]["name"].startswith(f"{RELEASE}-")
        pods = ray_pods(api, namespace, RELEASE)
        assert pods and all(pod.spec.node_name in local_cluster.nodes[SHAPE] for pod in pods)
        assert all(pod.metadata.labels["verl-ppo.io/ray-job"] == RELEASE for pod in pods)

        # KubeRay's submitter Job is ours, under the id KubeRay follows.
        batch = client.BatchV1Api(api)
        processes.wait_for("submitter Job", lambda: batch.read_namespaced_job(RELEASE, namespace), 60)
        container = batch.read_namespaced_job(RELEASE, namespace).spec.template.spec.containers[0]
        assert container.command == ["python3", "/etc/verl-ppo/submitter.py"]
        env = {e.name: e.value for e in container.env}
        assert env["RAY_JOB_SUBMISSION_ID"] == rayjob(api, namespace, RELEASE)["status"]["jobId"]
        assert env["RAY_JOB_SUBMISSION_ID"].startswith(f"{RELEASE}-")

        # The first attempt ends (see the module's docstring): a new cluster for the second attempt.
        processes.wait_for("a second cluster for the retry",
                           lambda: cluster_names(api, namespace) not in ([], [first["metadata"]["name"]]), 240)
        assert first["metadata"]["name"] not in cluster_names(api, namespace)
        # The last attempt ends: the RayJob failed for good and no cluster is left.
        processes.wait_for("the RayJob finished and its cluster removed",
                           lambda: rayjob(api, namespace, RELEASE).get("status", {}).get("jobDeploymentStatus") == "Failed"
                           and not rayclusters(api, namespace), 240)
        status = rayjob(api, namespace, RELEASE)["status"]
        assert status["failed"] == 2 and "did not reach terminal state" in status["message"], status
        processes.wait_for("Ray pods gone", lambda: not ray_pods(api, namespace, RELEASE), 120)

        helm.run("uninstall", RELEASE, "-n", namespace)
        claim = f"PersistentVolumeClaim/{RELEASE}-data"
        processes.wait_for("only the claim left", lambda: leftovers(api, namespace) == [claim], 120)
