"""Tier 6: a release with a rollout pool (issue 36) on the local cluster's kwok nodes of several GPU types: training on
the H800 node type (the head and one worker, with RDMA), the pool's worker group on the L20 node type, placed by the
values a user writes (the L20 values file's selector, tolerations, resources and RDMA under
raycluster.rolloutPool). The real scheduler puts the pool's pods on L20 nodes only and the training pods on H800
nodes only, one pod a node, and the real KubeRay operator makes the RayCluster of both groups ready."""

from __future__ import annotations

import yaml
from kubernetes import client

from generator import paths
from support.cluster import wait_ready
from support.tools import helm_binaries
from lab.localcluster.release import CHART, pod_security_level, ray_pods, release_values

RELEASE = "verl-ppo"
TRAINING, POOL = "h800-80g-x8", "l20-48g-x8"


def pool_values(tmp_path) -> str:
    """The pool on the L20 node type, as its values file places and sizes a Ray pod there."""
    l20 = yaml.safe_load((paths.VALUES_DIR / f"{POOL}.yaml").read_text())
    ray = l20["raycluster"]
    overlay = {"global": {"gpu": {"nodes": 2}, "rolloutPool": {"enabled": True, "nodes": 1,
                                                               "perNode": l20["global"]["gpu"]["perNode"]}},
               "raycluster": {"rolloutPool": {"nodeSelector": ray["nodeSelector"], "tolerations": ray["tolerations"],
                                              "resources": ray["worker"]["resources"], "rdma": ray["rdma"]}},
               # The generated values ask vLLM for the final output only, which separate_async cannot use.
               "ppo-job": {"trainer": {"mode": "separate_async"}, "rollout": {"finalOutputOnly": False}}}
    path = tmp_path / "rollout-pool.yaml"
    path.write_text(yaml.safe_dump(overlay))
    return str(path)


def test_the_pool_and_training_land_on_their_own_node_types(local_cluster, tmp_path):
    runner = local_cluster.helm(helm_binaries()["helm4"])
    args = ["-f", str(paths.VALUES_DIR / f"{TRAINING}.yaml"), "-f", pool_values(tmp_path)]
    namespace = "rollout-pool"
    # The H800 node type's RDMA adds IPC_LOCK, which only the privileged level admits.
    enforce = pod_security_level(release_values(paths.VALUES_DIR / f"{TRAINING}.yaml"))
    with local_cluster.release_namespace(runner, RELEASE, namespace, args, enforce):
        runner.run("install", RELEASE, str(CHART), "--namespace", namespace, *args)
        wait_ready(local_cluster, namespace)
        pods = ray_pods(local_cluster.api, namespace, RELEASE)
        groups: dict[str, list[str]] = {}
        for pod in pods:
            group = pod.metadata.labels.get("ray.io/group", "")
            groups.setdefault(group, []).append(pod.spec.node_name)
        assert sorted(groups) == ["headgroup", "rolloutpool", "workergroup"], groups
        training = groups["headgroup"] + groups["workergroup"]
        assert set(training) <= set(local_cluster.nodes[TRAINING]) and len(set(training)) == 2, groups
        assert set(groups["rolloutpool"]) <= set(local_cluster.nodes[POOL]) and len(groups["rolloutpool"]) == 1, groups
        core = client.CoreV1Api(local_cluster.api)
        pool_pod = next(pod for pod in pods if pod.metadata.labels.get("ray.io/group") == "rolloutpool")
        limits = core.read_namespaced_pod(pool_pod.metadata.name, namespace).spec.containers[0].resources.limits
        assert limits["nvidia.com/gpu"] == "8" and limits["cpu"] == "99", limits
