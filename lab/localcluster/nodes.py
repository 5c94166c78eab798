"""Fake nodes, played by kwok: GPU nodes of a catalog shape (capacity and allocatable from the
catalog: GPUs, CPU, memory, RDMA; the shape's labels and taints) and a CPU node for everything else."""

from __future__ import annotations

import json

from kubernetes import client

from generator.catalog import GpuShape
from generator.discover import GPU_RESOURCE, RDMA_RESOURCE
from lab.localcluster.cluster import KWOK_ANNOTATION

# Pods per node, as a kubelet's default maxPods.
MAX_PODS = "110"
# Every node carries its instance type, as cloud nodes do. The catalog's shapes with no GPU-type
# label (the vendor guide's seed) are found by it: `generator discover` groups by it, and a
# release of such a shape on a mixed cluster selects it (see tests/cluster/test_cluster_shapes.py).
INSTANCE_TYPE_LABEL = "node.kubernetes.io/instance-type"
# GPU pools are commonly tainted with the GPU resource name, so only pods that tolerate it (the Ray
# pods: the generator's values do) land there; the submitter and other helpers go to CPU nodes.
GPU_TAINT = {"key": GPU_RESOURCE, "effect": "NoSchedule"}
# The CPU node: room for the release's small pods.
CPU_NODE = {"cpu": "16", "memory": "64Gi", "pods": MAX_PODS}


def _node(name: str, labels: dict[str, str], taints: list[dict], resources: dict[str, str]) -> dict:
    labels = {**labels, "kubernetes.io/hostname": name, "kubernetes.io/os": "linux", "kubernetes.io/arch": "amd64",
              "type": "kwok"}
    return {
        "apiVersion": "v1", "kind": "Node",
        "metadata": {"name": name, "labels": labels, "annotations": {KWOK_ANNOTATION[0]: KWOK_ANNOTATION[1]}},
        "spec": {"taints": taints},
        # Capacity equals allocatable: the catalog's figures are what pods may ask for.
        "status": {"capacity": resources, "allocatable": resources},
    }


def node_body(shape: GpuShape, name: str) -> dict:
    resources = {"cpu": shape.allocatable_cpu, "memory": shape.allocatable_memory,
                 GPU_RESOURCE: str(shape.gpus_per_node), "pods": MAX_PODS}
    if shape.rdma:
        # One RDMA device per GPU (one NIC per GPU on the vendors' 8-GPU RDMA nodes).
        resources[RDMA_RESOURCE] = str(shape.gpus_per_node)
    taints = [GPU_TAINT] + [dict(taint) for taint in shape.taints if taint["key"] != GPU_TAINT["key"]]
    return _node(name, {INSTANCE_TYPE_LABEL: shape.name, **shape.node_labels}, taints, resources)


def create_cpu_node(api: client.ApiClient, name: str = "cpu-0") -> str:
    client.CoreV1Api(api).create_node(_node(name, {INSTANCE_TYPE_LABEL: "cpu-16c"}, [], CPU_NODE))
    return name


def create_nodes(api: client.ApiClient, shape: GpuShape, count: int) -> list[str]:
    core = client.CoreV1Api(api)
    names = [f"{shape.name}-{index}" for index in range(count)]
    for name in names:
        # The answer read as bytes: turning it into a client object costs more here than the request.
        core.create_node(node_body(shape, name), _preload_content=False).read()
    return names


def ready_nodes(api: client.ApiClient, names: list[str]) -> bool:
    """True when kwok has initialized every named node (condition Ready). The list is read as plain
    JSON: client objects of 1,024 nodes take seconds of CPU to build."""
    wanted = set(names)
    for node in json.loads(client.CoreV1Api(api).list_node(_preload_content=False).data)["items"]:
        if node["metadata"]["name"] in wanted and any(
                c["type"] == "Ready" and c["status"] == "True" for c in node.get("status", {}).get("conditions", [])):
            wanted.discard(node["metadata"]["name"])
    return not wanted
