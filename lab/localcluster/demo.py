"""`make demo`: the local cluster with nodes of one GPU shape, the release installed from its
values file, and what a user wants to see once the RayCluster is ready."""

from __future__ import annotations

import time
from pathlib import Path

from kubernetes import client

from generator.catalog import load_catalog
from lab.localcluster import processes
from lab.localcluster.cluster import LocalCluster
from lab.localcluster.demo_realnode import run_real_node_demo, unavailable
from lab.localcluster.nodes import GPU_TAINT, create_cpu_node, create_nodes, ready_nodes
from lab.pins import pinned_versions
from lab.localcluster.parts import ROOT, parts
from lab.localcluster.release import CHART, Helm, pod_security_level, prepare, raycluster_ready, release_values
from lab.localcluster.report import release_report

RELEASE = NAMESPACE = "verl-ppo"


def _shown(path: Path) -> str:
    """A path as typed from the repository root where it lies under it."""
    return str(path.resolve().relative_to(ROOT)) if path.resolve().is_relative_to(ROOT) else str(path)


def _jobs_done(api) -> bool:
    return all(job.status.succeeded for job in client.BatchV1Api(api).list_namespaced_job(NAMESPACE).items)


def run_demo(state: Path, values_file: Path, helm_name: str = "helm4", real_node: bool = True) -> int:
    values = release_values(values_file)
    shape = load_catalog().shapes[values["raycluster"]["gpuShape"]["name"]]
    node_count = values["global"]["gpu"]["nodes"]
    why_not = unavailable(values_file) if real_node else "asked for kwok nodes (--kwok)"
    if why_not is None:
        return run_real_node_demo(state, values_file, helm_name, shape.name,
                                  node_count * values["global"]["gpu"]["perNode"], RELEASE, NAMESPACE)
    print(f"No real node: {why_not}; kwok plays the nodes.")
    versions = pinned_versions()
    started = time.monotonic()
    cluster = LocalCluster(state, parts(helm_name)).start()
    print(f"Local cluster up in {time.monotonic() - started:.0f}s: Kubernetes {versions['KUBERNETES_VERSION']} "
          f"(etcd {versions['ETCD_VERSION']}), kwok {versions['KWOK_VERSION']} nodes, "
          f"KubeRay operator {versions['KUBERAY_VERSION']}; state under {state}")
    try:
        api = cluster.api()
        names = create_nodes(api, shape, node_count)
        cpu_node = create_cpu_node(api)
        processes.wait_for("nodes", lambda: ready_nodes(api, [*names, cpu_node]), 60)
        print(f"Nodes: {node_count} x {shape.name} ({shape.gpus_per_node} x {shape.gpu_model}, "
              f"{shape.allocatable_cpu} CPU, {shape.allocatable_memory} allocatable, tainted {GPU_TAINT['key']}): "
              f"{', '.join(names)}; a CPU node for the rest: {cpu_node}")

        helm = Helm(cluster.parts.helm, cluster.kubeconfig)
        values_args = ["-f", str(values_file)]
        level = pod_security_level(values)
        prepare(api, helm, RELEASE, NAMESPACE, values_args, enforce=level)
        why = " (the Ray pods add IPC_LOCK for RDMA, which baseline forbids)" if level == "privileged" else ""
        print(f"Namespace {NAMESPACE}: Pod Security '{level}' enforced{why}; a volume reserved for the claim")
        print(f"$ helm install {RELEASE} charts/verl-ppo --namespace {NAMESPACE} -f {_shown(values_file)}")
        installed = time.monotonic()
        helm.run("install", RELEASE, str(CHART), "--namespace", NAMESPACE, *values_args)
        processes.wait_for("RayCluster ready", lambda: raycluster_ready(api, NAMESPACE), 300)
        print(f"RayCluster ready (state 'ready', as the KubeRay operator reports it) "
              f"{time.monotonic() - installed:.0f}s after helm install\n")
        try:  # kwok completes the submitter's pod a moment later; show the Job settled where it does
            processes.wait_for("Job complete", lambda: _jobs_done(api), 30)
        except TimeoutError:
            pass
        print(release_report(api, NAMESPACE, RELEASE))
        print("\nkwok plays the nodes: pods are Running and Ready without containers (no veRL run happens);"
              " it marks Job pods complete a moment after they start.")
        print(f"Look around: export KUBECONFIG={cluster.kubeconfig}; stop everything: make demo-down")
    except BaseException:
        cluster.stop()  # a failed demo leaves nothing running
        raise
    return 0
