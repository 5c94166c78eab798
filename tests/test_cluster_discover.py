"""Tier 6: `generator discover` reads the local cluster's kwok nodes through the Kubernetes API, and
values rendered from what it wrote install onto the nodes it found."""

from __future__ import annotations

import subprocess
import sys

import pytest

from generator import paths
from generator.catalog import load_catalog
from generator.helmvalues import chart_values
from generator.discover import DiscoveryError, NodeFacts, group_gpu_nodes
from generator.quantity import cpu_millis, memory_bytes
from support.cluster import wait_ready
from tools.localcluster.nodes import GPU_TAINT, INSTANCE_TYPE_LABEL
from tools.localcluster.parts import parts
from tools.localcluster.release import CHART, pod_security_level, ray_pods

CATALOG = load_catalog()


@pytest.fixture(scope="module")
def discovered(local_cluster, tmp_path_factory):
    output = tmp_path_factory.mktemp("discover") / "catalog.yaml"
    run = subprocess.run([sys.executable, "-m", "generator", "discover", "--kubeconfig", str(local_cluster.cluster.kubeconfig),
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
        assert entry.gpu_memory_gib == shape.gpu_memory_gib
        assert entry.default_nodes == 2 * shape.default_nodes  # every node of the type in the cluster


def test_gpu_nodes_without_a_type_label_are_named():
    node = NodeFacts("gpu-7", {}, (), 8, 96000, 2**40, False)
    with pytest.raises(DiscoveryError, match="gpu-7"):
        group_gpu_nodes([node])


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
    level = pod_security_level(chart_values(values))
    with local_cluster.release_namespace(helm, "verl-ppo", f"discovered-{shape_name}", args, level) as namespace:
        helm.run("install", "verl-ppo", str(CHART), "--namespace", namespace, *args)
        wait_ready(local_cluster, namespace)
        placed = {pod.spec.node_name for pod in ray_pods(local_cluster.api, namespace, "verl-ppo")}
        assert len(placed) == entry.default_nodes and placed <= set(local_cluster.nodes[shape_name])
