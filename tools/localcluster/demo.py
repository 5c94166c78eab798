"""`make demo`: the local cluster with nodes of one GPU shape, the release installed from its
values file, and what a user wants to see once the RayCluster is ready."""

from __future__ import annotations

import time
from pathlib import Path

import yaml

from generator.catalog import load_catalog
from generator.checks import effective_values
from tools.localcluster import processes
from tools.localcluster.cluster import LocalCluster
from tools.localcluster.nodes import create_nodes, ready_nodes
from tools.localcluster.parts import parts, pinned
from tools.localcluster.release import Helm, pod_security_level, prepare, raycluster_ready
from tools.localcluster.report import release_report

RELEASE = NAMESPACE = "verl-ppo"


def run_demo(state: Path, values_file: Path, helm_name: str = "helm4") -> int:
    values = effective_values([yaml.safe_load(values_file.read_text()) or {}])
    shape = load_catalog().shapes[values["gpuShape"]["name"]]
    node_count = values["global"]["gpu"]["nodes"]
    versions = pinned()
    started = time.monotonic()
    cluster = LocalCluster(state, parts(helm_name)).start()
    print(f"Local cluster up in {time.monotonic() - started:.0f}s: Kubernetes {versions['KUBERNETES_VERSION']} "
          f"(etcd {versions['ETCD_DEB_VERSION']}), kwok {versions['KWOK_VERSION']} nodes, "
          f"KubeRay operator {versions['KUBERAY_VERSION']}; state under {state}")
    api = cluster.api()
    names = create_nodes(api, shape, node_count)
    processes.wait_for("nodes", lambda: ready_nodes(api, names), 60)
    print(f"Nodes: {node_count} x {shape.name} ({shape.gpus_per_node} x {shape.gpu_model}, "
          f"{shape.allocatable_cpu} CPU, {shape.allocatable_memory} allocatable): {', '.join(names)}")

    helm = Helm(cluster.parts.helm, cluster.kubeconfig)
    values_args = ["-f", str(values_file)]
    level = pod_security_level(values)
    prepare(api, helm, RELEASE, NAMESPACE, values_args, enforce=level)
    print(f"Namespace {NAMESPACE}: Pod Security '{level}' enforced; a volume reserved for the claim")
    command = ["install", RELEASE, "charts/verl-ppo", "--namespace", NAMESPACE, *values_args]
    print(f"$ helm {' '.join(command)}")
    installed = time.monotonic()
    helm.run(*command)
    took = processes.wait_for("RayCluster ready", lambda: raycluster_ready(api, NAMESPACE), 300)
    print(f"RayCluster ready {time.monotonic() - installed:.0f}s after helm install "
          f"(the operator's state 'ready' after {took:.0f}s of waiting)\n")
    print(release_report(api, NAMESPACE, RELEASE))
    print("\nkwok plays the nodes: pods are Running and Ready without containers (no veRL run happens);"
          " it marks Job pods complete a moment after they start.")
    print(f"Look around: export KUBECONFIG={cluster.kubeconfig}; stop everything: make demo-down")
    return 0
