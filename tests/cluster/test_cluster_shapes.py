"""Tier 6: every GPU shape in values/, with Helm 3 and Helm 4, on a real apiserver, scheduler and
controller-manager with kwok nodes of every shape at once and the real KubeRay operator."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from generator import paths
from generator.catalog import GpuShape, load_catalog
from generator.render import render_shape
from generator.sizing import RunShape
from support.cluster import dry_run_restricted, leftovers, wait_ready, warnings
from lab.localcluster import processes
from lab.localcluster.nodes import INSTANCE_TYPE_LABEL
from lab.localcluster.release import (CHART, POD_MONITORS, is_ray_pod, pod_security_level, ray_pods, release_pods,
                                      release_values)

from kubernetes import client

CATALOG = load_catalog()
SHAPES = sorted(path.stem for path in paths.VALUES_DIR.glob("*.yaml"))
RELEASE = "verl-ppo"
# Components of the pods besides the Ray nodes: submitter, preparation Job, TensorBoard.
HELPERS = {"ppo-job", "prepare", "tensorboard"}


EVERY_POD = Path(__file__).parents[1] / "data" / "cluster-every-pod.yaml"


def values_files(shape: GpuShape, main: Path, tmp_path: Path) -> list[str]:
    """-f arguments: the shape's file, then every optional pod switched on. A shape with no GPU-type
    label (the vendor guide's) selects nothing, and on this cluster of mixed GPU nodes the scheduler
    would put its pods on the larger, emptier nodes: its release selects the node type by instance
    type, as a user of a mixed cluster must."""
    files = [main, EVERY_POD]
    if not shape.node_labels:
        overlay = tmp_path / "select-instance-type.yaml"
        overlay.write_text(yaml.safe_dump({"raycluster": {"nodeSelector": {INSTANCE_TYPE_LABEL: shape.name}}}))
        files.append(overlay)
    return [arg for path in files for arg in ("-f", str(path))]


def assert_ray_pods_on_shape(local_cluster, namespace: str, shape: GpuShape, nodes: int) -> None:
    pods = ray_pods(local_cluster.api, namespace, RELEASE)
    placed = sorted(pod.spec.node_name for pod in pods)
    assert len(pods) == nodes, [pod.metadata.name for pod in pods]
    assert set(placed) <= set(local_cluster.nodes[shape.name]), f"Ray pods on {placed}, not all {shape.name} nodes"
    assert len(set(placed)) == nodes, f"a node holds two Ray pods: {placed}"
    assert all(pod.status.phase == "Running" for pod in pods)


def assert_pod_monitors_select_the_ray_pods(local_cluster, namespace: str, monitors: list[dict]) -> None:
    """Each PodMonitor's namespace and label selector, applied by the API server to the pods the KubeRay
    operator created (their labels are the operator's, not a copy in the test): the head monitor finds
    the head, the worker monitor every worker (none where the head trains alone), and each endpoint's port
    is a named port of those pods."""
    core = client.CoreV1Api(local_cluster.api)
    ray = {pod.metadata.name: pod for pod in ray_pods(local_cluster.api, namespace, RELEASE)}
    by_type: dict[str, set[str]] = {}
    for monitor in monitors:
        spec = monitor["spec"]
        assert namespace in spec["namespaceSelector"]["matchNames"], monitor["metadata"]["name"]
        selector = ",".join(f"{key}={value}" for key, value in spec["selector"]["matchLabels"].items())
        # None where the head trains alone.
        selected = core.list_namespaced_pod(namespace, label_selector=selector).items
        node_type = spec["selector"]["matchLabels"]["ray.io/node-type"]
        by_type[node_type] = {pod.metadata.name for pod in selected}
        for pod in selected:
            ports = {port.name for container in pod.spec.containers for port in container.ports or []}
            wanted = {endpoint["port"] for endpoint in spec["podMetricsEndpoints"]}
            assert wanted <= ports, f"{pod.metadata.name} lacks {wanted - ports}"
    workers = {name for name, pod in ray.items() if pod.metadata.labels.get("ray.io/node-type") == "worker"}
    assert by_type == {"head": set(ray) - workers, "worker": workers} and len(by_type["head"]) == 1, by_type


@pytest.mark.parametrize("shape_name", SHAPES)
def test_install_upgrade_uninstall(shape_name, helm, local_cluster, tmp_path):
    shape = CATALOG.shapes[shape_name]
    main = paths.VALUES_DIR / f"{shape_name}.yaml"
    values = release_values(main)
    args = values_files(shape, main, tmp_path)
    runner = local_cluster.helm(helm)
    namespace = f"{shape_name}-{helm.name}"
    nodes = values["global"]["gpu"]["nodes"]
    with local_cluster.release_namespace(runner, RELEASE, namespace, args, pod_security_level(values)):
        # Accepted server-side: CRD schemas, admission (PodSecurity), the chart's own checks.
        runner.run("install", RELEASE, str(CHART), "--namespace", namespace, *args)
        wait_ready(local_cluster, namespace)
        assert_ray_pods_on_shape(local_cluster, namespace, shape, nodes)

        def others() -> list:
            return [pod for pod in release_pods(local_cluster.api, namespace, RELEASE) if not is_ray_pod(pod)]

        def components() -> set:
            return {(pod.metadata.labels or {}).get("app.kubernetes.io/component") for pod in others()}

        try:  # the TensorBoard pod comes through a Deployment and its ReplicaSet, a moment later
            processes.wait_for("helper pods", lambda: HELPERS <= components(), 60)
        except TimeoutError:
            pass
        assert HELPERS <= components(), f"{components()}; warnings:\n{warnings(local_cluster.api, namespace)}"
        for pod in others():  # the submitter and any other helper: on the CPU node (no GPU toleration), `restricted`
            processes.wait_for(f"{pod.metadata.name} bound", lambda p=pod: client.CoreV1Api(local_cluster.api)
                               .read_namespaced_pod(p.metadata.name, namespace).spec.node_name, 60)
            node = client.CoreV1Api(local_cluster.api).read_namespaced_pod(pod.metadata.name, namespace).spec.node_name
            assert node == local_cluster.cpu_node, f"{pod.metadata.name} on {node}"
            dry_run_restricted(local_cluster.api, pod)
        monitors = client.CustomObjectsApi(local_cluster.api).list_namespaced_custom_object(
            *POD_MONITORS[:2], namespace, POD_MONITORS[2])["items"]
        assert monitors, "no PodMonitor although the cluster serves monitoring.coreos.com/v1"
        assert_pod_monitors_select_the_ray_pods(local_cluster, namespace, monitors)

        # Upgrade to twice the training nodes, values rendered by the generator for that size.
        bigger = tmp_path / "bigger.yaml"
        bigger.write_text(render_shape(shape, CATALOG.models["qwen2.5-0.5b"], RunShape(nodes=2 * nodes)))
        upgrade_args = ["-f", str(bigger), *args[2:]]
        runner.run("upgrade", RELEASE, str(CHART), "--namespace", namespace, *upgrade_args)
        wait_ready(local_cluster, namespace)
        assert_ray_pods_on_shape(local_cluster, namespace, shape, 2 * nodes)

        runner.run("uninstall", RELEASE, "--namespace", namespace)
        claim = f"PersistentVolumeClaim/{RELEASE}-data"
        try:
            processes.wait_for("only the claim left", lambda: leftovers(local_cluster.api, namespace) == [claim], 120)
        except TimeoutError:
            pass
        assert leftovers(local_cluster.api, namespace) == [claim]
        kept = client.CoreV1Api(local_cluster.api).read_namespaced_persistent_volume_claim(f"{RELEASE}-data", namespace)
        assert kept.status.phase == "Bound"
