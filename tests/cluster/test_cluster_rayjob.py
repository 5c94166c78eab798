"""Tier 6: RayJob mode with the real KubeRay operator: the operator creates a RayCluster for the run from
the RayJob's spec (on nodes of the release's shape) and starts our submitter as the RayJob's submitter Job
under its own submission id; the chart's head Service reaches the run's head; uninstalling the release
removes the RayJob and its cluster.

Under kwok no container runs and no Ray job exists, so the run's outcome is not this tier's: the submitter
against a real Ray head is tier 4's, and a RayJob's run succeeding once behind an enforcing NetworkPolicy,
its cluster deleted as its deletion policy says, is tier 7's (test_pods_rayjob.py)."""

from __future__ import annotations

from kubernetes import client

from generator import paths
from support.cluster import leftovers, wait_ready
from support.tools import helm_binaries
from lab.localcluster import processes
from lab.localcluster.release import CHART, ray_pods, rayclusters, rayjob

SHAPE = "a10-24g-x4"
RELEASE = "verl-ppo"
ARGS = ["-f", str(paths.VALUES_DIR / f"{SHAPE}.yaml"), "--set", "global.mode=RayJob"]


def head_service_pods(api: client.ApiClient, namespace: str) -> list[str]:
    """The ready pods behind the release's head Service, by its EndpointSlices."""
    slices = client.DiscoveryV1Api(api).list_namespaced_endpoint_slice(
        namespace, label_selector=f"kubernetes.io/service-name={RELEASE}-ray-head").items
    return sorted(endpoint.target_ref.name for endpoint_slice in slices for endpoint in endpoint_slice.endpoints or []
                  if endpoint.conditions.ready and endpoint.target_ref)


def test_operator_creates_the_cluster_for_the_run_and_uninstall_removes_it(local_cluster):
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

        # The chart's head Service (KubeRay's <RayJob>-head-svc selects a label the chart's pods do not carry):
        # the endpoints controller gives it the run's head, and only the head.
        (head,) = [pod.metadata.name for pod in pods if pod.metadata.labels["ray.io/node-type"] == "head"]
        processes.wait_for("the head behind the chart's head Service",
                           lambda: head_service_pods(api, namespace) == [head], 60)

        # KubeRay's submitter Job is ours, under the id KubeRay follows.
        batch = client.BatchV1Api(api)
        processes.wait_for("submitter Job", lambda: batch.read_namespaced_job(RELEASE, namespace), 60)
        container = batch.read_namespaced_job(RELEASE, namespace).spec.template.spec.containers[0]
        assert container.command == ["python3", "/etc/verl-ppo/submitter.py"]
        env = {e.name: e.value for e in container.env}
        assert env["RAY_JOB_SUBMISSION_ID"] == rayjob(api, namespace, RELEASE)["status"]["jobId"]
        assert env["RAY_JOB_SUBMISSION_ID"].startswith(f"{RELEASE}-")

        helm.run("uninstall", RELEASE, "-n", namespace)
        processes.wait_for("the RayJob's cluster and pods gone with it",
                           lambda: not rayclusters(api, namespace) and not ray_pods(api, namespace, RELEASE), 120)
        claim = f"PersistentVolumeClaim/{RELEASE}-data"
        processes.wait_for("only the claim left", lambda: leftovers(api, namespace) == [claim], 120)
