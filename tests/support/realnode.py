"""The local cluster with a real node for test tier 7 (one per test session), and what its tests ask
the release's running pods."""

from __future__ import annotations

import json
import textwrap
import time
from dataclasses import dataclass
from pathlib import Path

from kubernetes import client

from lab.localcluster.cluster import LocalCluster
from lab.localcluster.nodes import INSTANCE_TYPE_LABEL
from lab.localcluster.parts import parts
from lab.localcluster.pods import Executed, run_in
from lab.localcluster.release import REALNODE_VALUES, Helm

VALUES = REALNODE_VALUES  # the real node's values, as the tier 7 tests name them
GPUS = 4  # the seed's two Ray nodes with 2 GPUs each


@dataclass
class PodCluster:
    cluster: LocalCluster
    api: client.ApiClient

    def helm(self) -> Helm:
        return Helm(self.cluster.parts.helm, self.cluster.kubeconfig)


def start_pod_cluster(state: Path) -> PodCluster:
    cluster = LocalCluster(state, parts()).start()
    cluster.start_real_node(GPUS, {INSTANCE_TYPE_LABEL: "seed-2gpu"})
    return PodCluster(cluster, cluster.api())


def python_in(api: client.ApiClient, namespace: str, pod: str, source: str, timeout: float = 120) -> Executed:
    """Runs a Python program in the pod's Ray container."""
    return run_in(api, namespace, pod, ["python3", "-c", textwrap.dedent(source)], timeout=timeout)


def ray_jobs(api: client.ApiClient, namespace: str, head: str, patience: float = 120) -> dict[str, dict]:
    """The Ray jobs by submission id, as the head's dashboard reports them (asked inside the head pod). A head
    replaced under GCS fault tolerance times out or answers 500 on its job list for a while: asked again
    for up to `patience` seconds."""
    deadline = time.monotonic() + patience
    while True:
        result = python_in(api, namespace, head, """
            import json, os, urllib.request
            token = os.environ.get("RAY_AUTH_TOKEN")  # KubeRay's, where Ray's token authentication is on
            headers = {"X-Ray-Authorization": f"Bearer {token}"} if token else {}
            request = urllib.request.Request("http://127.0.0.1:8265/api/jobs/", headers=headers)
            with urllib.request.urlopen(request, timeout=30) as response:
                print(json.dumps({j["submission_id"]: j for j in json.load(response) if j.get("submission_id")}))
        """)
        if result.code == 0:
            return json.loads(result.output.strip().splitlines()[-1])
        if time.monotonic() >= deadline:
            raise AssertionError(f"dashboard of {head} not answering for {patience:g}s: {result.output}")
        time.sleep(3)


def connects(api: client.ApiClient, namespace: str, pod: str, address: str, ports: list[int]) -> dict[int, bool]:
    """Whether a TCP connection from the pod to address reaches each port (3 s each)."""
    result = python_in(api, namespace, pod, f"""
        import json, socket
        reached = {{}}
        for port in {ports!r}:
            try:
                socket.create_connection(({address!r}, port), timeout=3).close()
                reached[port] = True
            except OSError:
                reached[port] = False
        print(json.dumps(reached))
    """)
    assert result.code == 0, result.output
    return {int(port): ok for port, ok in json.loads(result.output.strip().splitlines()[-1]).items()}
