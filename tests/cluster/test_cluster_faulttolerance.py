"""Tier 6: a release with KubeRay's GCS fault tolerance (raycluster.gcsFaultTolerance) upgrades under Helm 4's
server-side apply. With the option on, the real operator adds its Redis-cleanup finalizer by an Update of the
whole RayCluster, writing each field back as its Go types serialize it; a field the chart renders otherwise
(a GPU count as the number 2 where Go writes the string "2") then belongs to the kuberay-operator field
manager, and Helm 4 refuses the next upgrade as a conflict on it (seen on the real node: workerGroupSpecs and
the head's nvidia.com/gpu)."""

from __future__ import annotations

import json

from kubernetes import client

from generator import paths
from support.tools import helm_binaries
from lab.localcluster import processes
from lab.localcluster.release import CHART, rayclusters

RELEASE, NAMESPACE = "verl-ppo", "gcs-ft"
FINALIZER = "ray.io/gcs-ft-redis-cleanup-finalizer"  # KubeRay v1.6.2 utils.GCSFaultToleranceRedisCleanupFinalizer
VALUES = ["-f", str(paths.VALUES_DIR / "seed-2gpu.yaml"),
          "--set", "raycluster.gcsFaultTolerance.enabled=true",
          "--set", "raycluster.gcsFaultTolerance.redisAddress=redis.ray-infra:6379",
          "--set", "raycluster.gcsFaultTolerance.passwordSecret.secretName=redis-auth"]


def operator_spec_fields(cluster: dict) -> list[str]:
    """The spec fields the kuberay-operator field manager owns (its Update operations' fieldsV1 under f:spec)."""
    owned = [entry["fieldsV1"].get("f:spec") for entry in cluster["metadata"].get("managedFields", [])
             if entry["manager"].startswith("kuberay-operator") and entry["operation"] == "Update"]
    return [json.dumps(fields, sort_keys=True) for fields in owned if fields]


def test_an_upgrade_after_the_operators_finalizer_meets_no_conflict(local_cluster):
    helm = local_cluster.helm(helm_binaries()["helm4"])
    custom = client.CustomObjectsApi(local_cluster.api)
    with local_cluster.release_namespace(helm, RELEASE, NAMESPACE, VALUES) as namespace:
        helm.run("install", RELEASE, str(CHART), "--namespace", namespace, *VALUES)
        try:
            processes.wait_for("the operator's GCS fault-tolerance finalizer",
                               lambda: FINALIZER in rayclusters(local_cluster.api, namespace)[0]["metadata"]
                               .get("finalizers", []), 120, interval=1)
            [cluster] = rayclusters(local_cluster.api, namespace)
            assert operator_spec_fields(cluster) == [], "the operator's Update changed fields the chart renders"
            # A changed run: the submitter Job's spec changes, the RayCluster is applied again unchanged.
            helm.run("upgrade", RELEASE, str(CHART), "--namespace", namespace, *VALUES,
                     "--set", "ppo-job.trainer.totalEpochs=2")
        finally:
            # No Redis here for the operator's cleanup Job: let the RayCluster go without it.
            for cluster in rayclusters(local_cluster.api, namespace):
                custom.patch_namespaced_custom_object("ray.io", "v1", namespace, "rayclusters",
                                                      cluster["metadata"]["name"], {"metadata": {"finalizers": None}})
