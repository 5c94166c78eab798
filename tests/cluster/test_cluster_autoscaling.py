"""Tier 6: an autoscaling release upgrades after the Ray autoscaler has scaled it. The autoscaler (Ray's KubeRay
node provider) writes a worker group's replicas with a JSON patch of the RayCluster; KubeRay v1.6.2's CRD
declares no list type for workerGroupSpecs, so the whole list is one atomic field, now the autoscaler's. Helm 4's
server-side apply then refuses any upgrade that applies the RayCluster; client-side apply (the NOTES' advice)
passes and keeps the autoscaler's count."""

from __future__ import annotations

from kubernetes import client

from generator import paths
from support.tools import helm_binaries
from lab.localcluster.release import CHART, rayclusters

RELEASE, NAMESPACE = "verl-ppo", "autoscaling"
VALUES = ["-f", str(paths.VALUES_DIR / "seed-2gpu.yaml"), "--set", "raycluster.worker.autoscaling.enabled=true",
          "--set", "raycluster.worker.autoscaling.minReplicas=1",
          "--set", "raycluster.worker.autoscaling.maxReplicas=3"]


def scale_as_the_autoscaler(api: client.ApiClient, namespace: str, name: str, replicas: int) -> None:
    api.call_api(f"/apis/ray.io/v1/namespaces/{namespace}/rayclusters/{name}", "PATCH",
                 header_params={"Content-Type": "application/json-patch+json"},
                 query_params=[("fieldManager", "autoscaler")],
                 body=[{"op": "replace", "path": "/spec/workerGroupSpecs/0/replicas", "value": replicas}],
                 auth_settings=["BearerToken"], _preload_content=False)


def worker_replicas(api: client.ApiClient, namespace: str) -> int:
    return rayclusters(api, namespace)[0]["spec"]["workerGroupSpecs"][0]["replicas"]


def test_an_upgrade_after_the_autoscaler_scaled_needs_client_side_apply(local_cluster):
    helm = local_cluster.helm(helm_binaries()["helm4"])
    with local_cluster.release_namespace(helm, RELEASE, NAMESPACE, VALUES) as namespace:
        installed = helm.run("install", RELEASE, str(CHART), "--namespace", namespace, *VALUES)
        assert "--server-side=false" in installed.stdout, installed.stdout  # the NOTES say how to upgrade
        [cluster] = rayclusters(local_cluster.api, namespace)
        assert worker_replicas(local_cluster.api, namespace) == 1
        scale_as_the_autoscaler(local_cluster.api, namespace, cluster["metadata"]["name"], 2)
        changed_run = ["--set", "ppo-job.trainer.totalEpochs=2"]
        refused = helm.run("upgrade", RELEASE, str(CHART), "--namespace", namespace, *VALUES, *changed_run, check=False)
        assert refused.returncode == 1 and 'conflict with "autoscaler"' in refused.stderr \
            and ".spec.workerGroupSpecs" in refused.stderr, refused.stderr
        helm.run("upgrade", RELEASE, str(CHART), "--namespace", namespace, *VALUES, *changed_run, "--server-side=false")
        assert worker_replicas(local_cluster.api, namespace) == 2  # the autoscaler's count kept
        # The release remembers client-side apply: the next upgrade needs no flag.
        helm.run("upgrade", RELEASE, str(CHART), "--namespace", namespace, *VALUES,
                 "--set", "ppo-job.trainer.totalEpochs=3")
        assert worker_replicas(local_cluster.api, namespace) == 2
