"""Tier 6: `generator discover` reads the local cluster's kwok nodes through the Kubernetes API, and
values rendered from what it wrote install onto the nodes it found."""

from __future__ import annotations

import subprocess
import sys

import pytest
from kubernetes import client

from generator import paths
from generator.catalog import load_catalog
from generator.discover import GPU_MEMORY_LABEL, DiscoveryError, NodeFacts, group_gpu_nodes, shape_entry
from generator.quantity import cpu_millis, memory_bytes
from support.cluster import wait_ready
from lab.localcluster.nodes import GPU_TAINT, INSTANCE_TYPE_LABEL
from lab.localcluster.parts import parts
from lab.localcluster.release import CHART, pod_security_level, ray_pods, release_values

CATALOG = load_catalog()
# GPU feature discovery's memory label (MiB of one GPU) on the nodes of one shape, as a real A100 40GB
# node reports it: unlike the catalog's round 40 GiB, and unlike each other (discover takes the smallest).
LABELLED_SHAPE = "a100-40g-x8"
GPU_MEMORY_MIB = ["40960", "40537"]


@pytest.fixture(scope="module")
def gpu_memory_labels(local_cluster):
    core = client.CoreV1Api(local_cluster.api)
    names = local_cluster.nodes[LABELLED_SHAPE]
    assert len(names) == len(GPU_MEMORY_MIB)
    for name, mib in zip(names, GPU_MEMORY_MIB, strict=True):
        core.patch_node(name, {"metadata": {"labels": {GPU_MEMORY_LABEL: mib}}})
    yield
    for name in names:
        core.patch_node(name, {"metadata": {"labels": {GPU_MEMORY_LABEL: None}}})


@pytest.fixture(scope="module")
def discovered(local_cluster, gpu_memory_labels, tmp_path_factory):
    output = tmp_path_factory.mktemp("discover") / "catalog.yaml"
    run = subprocess.run([sys.executable, "-m", "generator", "discover",
                          "--kubeconfig", str(local_cluster.cluster.kubeconfig),
                          "--gpu-memory-gib", "seed-2gpu=24", "--output", str(output)],
                         capture_output=True, text=True, cwd=paths.ROOT)
    assert run.returncode == 0, run.stderr
    return output


def test_one_entry_per_node_type_with_the_nodes_figures(discovered):
    found = load_catalog(discovered).shapes.values()
    assert len(found) == len(CATALOG.shapes)
    for shape in CATALOG.shapes.values():
        # Shapes with a GPU-type label are found by it; the seed by its instance type.
        labels = shape.node_labels or {INSTANCE_TYPE_LABEL: shape.name}
        entry = next(e for e in found if e.node_labels == labels)
        assert entry.gpus_per_node == shape.gpus_per_node
        assert cpu_millis(entry.allocatable_cpu) == cpu_millis(shape.allocatable_cpu)
        assert memory_bytes(entry.allocatable_memory) == memory_bytes(shape.allocatable_memory)
        assert entry.rdma == shape.rdma
        assert entry.taints == [GPU_TAINT, *shape.taints]
        if shape.name == LABELLED_SHAPE:  # read from the nodes' label, not copied from the catalog
            assert entry.gpu_memory_gib == min(map(int, GPU_MEMORY_MIB)) / 1024 != shape.gpu_memory_gib
            assert f"GPU memory from {GPU_MEMORY_LABEL}" in entry.source
        else:
            assert entry.gpu_memory_gib == shape.gpu_memory_gib
        assert entry.default_nodes == 2 * shape.default_nodes  # every node of the type in the cluster


def test_gpu_nodes_without_a_type_label_are_named():
    node = NodeFacts("gpu-7", {}, (), 8, 96000, 2**40, False)
    with pytest.raises(DiscoveryError, match="gpu-7"):
        group_gpu_nodes([node])


def test_gpu_memory_label_counts_only_when_every_node_carries_it():
    """One node of the type without the label: the catalog entry with the same label decides, not a guess
    from the others; without such an entry the error names the option that supplies the figure."""
    shape = CATALOG.shapes[LABELLED_SHAPE]
    ((label, value),) = shape.node_labels.items()
    labelled = NodeFacts("gpu-0", {label: value, GPU_MEMORY_LABEL: "20480"}, (), 8, 96000, 2**40, False)
    bare = NodeFacts("gpu-1", {label: value}, (), 8, 96000, 2**40, False)
    key = (label, value, 8)
    assert shape_entry(key, [labelled, bare], CATALOG, {})["gpuMemoryGiB"] == shape.gpu_memory_gib
    assert shape_entry(key, [labelled], CATALOG, {})["gpuMemoryGiB"] == 20
    assert shape_entry(key, [labelled], CATALOG, {value: 39.5})["gpuMemoryGiB"] == 39.5  # the option wins
    unknown = ("nvidia.com/gpu.product", "NVIDIA-B200", 8)
    with pytest.raises(DiscoveryError, match="--gpu-memory-gib NVIDIA-B200="):
        shape_entry(unknown, [NodeFacts("gpu-2", {unknown[0]: unknown[1]}, (), 8, 96000, 2**40, False)], CATALOG, {})


@pytest.mark.parametrize("item", ["24", "NVIDIA-A10=x", "NVIDIA-A10=0", "=24"])
def test_gpu_memory_gib_wants_label_value_equals_gib(item):
    run = subprocess.run([sys.executable, "-m", "generator", "discover", "--gpu-memory-gib", item],
                         capture_output=True, text=True, cwd=paths.ROOT)
    assert run.returncode == 2 and f"--gpu-memory-gib: '{item}' is not LABEL_VALUE=GIB" in run.stderr, run.stderr


@pytest.mark.parametrize("shape_name", ["seed-2gpu", "h20-96g-x8"])
def test_values_rendered_from_discovery_install(shape_name, discovered, local_cluster, tmp_path):
    shape = CATALOG.shapes[shape_name]
    labels = shape.node_labels or {INSTANCE_TYPE_LABEL: shape.name}
    entry = next(e for e in load_catalog(discovered).shapes.values() if e.node_labels == labels)
    render = subprocess.run([sys.executable, "-m", "generator", "render", entry.name, "--catalog", str(discovered),
                             "--output", str(tmp_path)], capture_output=True, text=True, cwd=paths.ROOT)
    assert render.returncode == 0, render.stderr
    values = tmp_path / f"{entry.name}.yaml"
    check = subprocess.run([sys.executable, "-m", "generator", "check", str(values)], capture_output=True, text=True,
                           cwd=paths.ROOT)
    assert check.returncode == 0, check.stdout

    helm = local_cluster.helm(parts().helm)
    args = ["-f", str(values)]
    level = pod_security_level(release_values(values))
    with local_cluster.release_namespace(helm, "verl-ppo", f"discovered-{shape_name}", args, level) as namespace:
        helm.run("install", "verl-ppo", str(CHART), "--namespace", namespace, *args)
        wait_ready(local_cluster, namespace)
        placed = {pod.spec.node_name for pod in ray_pods(local_cluster.api, namespace, "verl-ppo")}
        assert len(placed) == entry.default_nodes and placed <= set(local_cluster.nodes[shape_name])
