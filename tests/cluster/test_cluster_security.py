"""Tier 6: Pod Security through the real apiserver's admission. The Ray pods of an RDMA shape add
IPC_LOCK, which `baseline` forbids: a baseline namespace refuses them, and with ipcLock off the
same release runs there. (The submitter's `restricted` check runs for every shape in
test_cluster_shapes.py.)"""

from __future__ import annotations

from generator import paths
from support.cluster import wait_ready, warnings
from lab.localcluster import processes
from lab.localcluster.parts import parts
from lab.localcluster.release import CHART, ray_pods

RELEASE = "verl-ppo"
RDMA_SHAPE = "h800-80g-x8"


def test_baseline_refuses_ipc_lock_and_admits_the_release_without_it(local_cluster):
    helm = local_cluster.helm(parts().helm)
    args = ["-f", str(paths.VALUES_DIR / f"{RDMA_SHAPE}.yaml")]
    with local_cluster.release_namespace(helm, RELEASE, "rdma-baseline", args, enforce="baseline") as namespace:
        helm.run("install", RELEASE, str(CHART), "--namespace", namespace, *args)
        processes.wait_for("PodSecurity refusal", lambda: "IPC_LOCK" in warnings(local_cluster.api, namespace), 120)
        assert "violates PodSecurity \"baseline" in warnings(local_cluster.api, namespace)
        assert not ray_pods(local_cluster.api, namespace, RELEASE)

        helm.run("upgrade", RELEASE, str(CHART), "--namespace", namespace, *args,
                 "--set", "raycluster.rdma.ipcLock=false")
        wait_ready(local_cluster, namespace)
