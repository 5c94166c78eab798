"""Tier 6: pods too big for their nodes are caught by `generator check` and by the chart before
install, and the real scheduler agrees: the same pods stay Pending for want of CPU."""

from __future__ import annotations

import subprocess
import sys

import yaml
from kubernetes import client

from generator import paths
from lab.localcluster import processes
from lab.localcluster.parts import parts
from lab.localcluster.release import CHART, ray_pods

RELEASE = "verl-ppo"
SHAPE = "a10-24g-x4"  # 60 allocatable CPU in the catalog and on its kwok nodes


def unschedulable_reason(api: client.ApiClient, namespace: str) -> str:
    """The scheduler's message on the release's Ray pods that it could not place."""
    for pod in ray_pods(api, namespace, RELEASE):
        for condition in pod.status.conditions or []:
            if condition.type == "PodScheduled" and condition.status == "False" and condition.reason == "Unschedulable":
                return condition.message
    return ""


def test_too_big_for_the_node(local_cluster, tmp_path):
    main = paths.VALUES_DIR / f"{SHAPE}.yaml"
    too_big = tmp_path / "too-big.yaml"
    too_big.write_text(yaml.safe_dump({"raycluster": {"head": {"resources": {"cpu": "64"}},
                                                      "worker": {"resources": {"cpu": "64"}}}}))
    check = subprocess.run([sys.executable, "-m", "generator", "check", str(main), str(too_big), "--together"],
                           capture_output=True, text=True, cwd=paths.ROOT)
    assert check.returncode == 1 and "raycluster.head.resources.cpu" in check.stdout, check.stdout

    helm = local_cluster.helm(parts().helm)
    args = ["-f", str(main), "-f", str(too_big)]
    # The same pods get past the chart's guard when the values claim the node is bigger than it is.
    claimed = tmp_path / "claimed-bigger-node.yaml"
    claimed.write_text(yaml.safe_dump({"raycluster": {"gpuShape": {"allocatable": {"cpu": "64"}}}}))
    past_the_guard = [*args, "-f", str(claimed)]
    with local_cluster.release_namespace(helm, RELEASE, "too-big", past_the_guard) as namespace:
        refused = helm.run("install", RELEASE, str(CHART), "--namespace", namespace, *args, check=False)
        assert refused.returncode != 0 and "raycluster.head.resources.cpu" in refused.stderr, refused.stderr

        helm.run("install", RELEASE, str(CHART), "--namespace", namespace, *past_the_guard)
        processes.wait_for("scheduler's verdict", lambda: unschedulable_reason(local_cluster.api, namespace), 120)
        message = unschedulable_reason(local_cluster.api, namespace)
        assert "Insufficient cpu" in message, message
        assert all(not pod.spec.node_name for pod in ray_pods(local_cluster.api, namespace, RELEASE))
