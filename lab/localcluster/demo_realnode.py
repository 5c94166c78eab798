"""`make demo` on the real node: the seed's release (a head and a worker with 2 logical GPUs each) with
its resources scaled to this machine, its containers running, its Job submitting a stand-in run, and
Ray's own view of the cluster; or, where this machine cannot run it, the reason (demo.py then uses kwok)."""

from __future__ import annotations

import time
from pathlib import Path

import yaml
from kubernetes import client

from lab.localcluster import processes
from lab.localcluster.cluster import LocalCluster
from lab.localcluster.machine import refuses_real_node
from lab.localcluster.nodes import INSTANCE_TYPE_LABEL
from lab.localcluster.parts import ROOT, parts, realnode_parts
from lab.localcluster.pods import run_in
from lab.localcluster.realnode import NAME, OWNER, memory_bytes
from lab.localcluster.release import (CHART, REALNODE_VALUES, Helm, plant_inputs, prepare, ray_pods, raycluster_ready)
from lab.localcluster.report import release_report


def unavailable(values_file: Path) -> str | None:
    """Why the demo cannot use the real node here, or None when it can."""
    refused = refuses_real_node(values_file)
    if refused:
        return refused
    missing = realnode_parts().missing()
    if missing:
        return "real node parts missing (lab/scripts/setup.sh builds them): " + ", ".join(map(str, missing))
    if OWNER.exists():
        owner = Path(OWNER.read_text().strip())
        if any(processes.running(owner).values()):
            return f"a real node already runs on this machine, from {owner}"
    return None


def _scaled(values_file: Path) -> str:
    ray = yaml.safe_load(REALNODE_VALUES.read_text())["raycluster"]
    original = yaml.safe_load(values_file.read_text())["raycluster"]
    return ", ".join(f"{role} {ray[role]['resources']['cpu']} CPU / {ray[role]['resources']['memory']} "
                     f"(the shape asks {original[role]['resources']['cpu']} / {original[role]['resources']['memory']})"
                     for role in ("head", "worker"))


def run_real_node_demo(state: Path, values_file: Path, helm_name: str, shape_name: str, gpus: int,
                       release: str, namespace: str) -> int:
    started = time.monotonic()
    cluster = LocalCluster(state, parts(helm_name)).start()
    try:
        cluster.start_real_node(gpus, {INSTANCE_TYPE_LABEL: shape_name})
        api = cluster.api()
        print(f"Local cluster with a real node up in {time.monotonic() - started:.0f}s: node {NAME} runs containers "
              "(kubelet, containerd + runc, CNI bridge, kube-proxy, CoreDNS, kube-router), "
              f"{gpus} logical nvidia.com/gpu")
        print(f"Resources scaled to fit this machine ({REALNODE_VALUES.relative_to(ROOT)}): {_scaled(values_file)}; "
              "the Ray job's driver is a stand-in (no GPU here)")
        helm = Helm(cluster.parts.helm, cluster.kubeconfig)
        values_args = ["-f", str(values_file), "-f", str(REALNODE_VALUES)]
        prepare(api, helm, release, namespace, values_args)
        plant_inputs(helm, release, namespace, values_args)
        print(f"$ helm install {release} charts/verl-ppo --namespace {namespace} "
              f"-f {values_file.resolve().relative_to(ROOT)} -f {REALNODE_VALUES.relative_to(ROOT)}")
        installed = time.monotonic()
        helm.run("install", release, str(CHART), "--namespace", namespace, *values_args)
        processes.wait_for("RayCluster ready", lambda: raycluster_ready(api, namespace), 420, interval=2)
        print(f"RayCluster ready with running containers {time.monotonic() - installed:.0f}s after helm install\n")
        job = _wait_submitter(api, namespace)
        print(release_report(api, namespace, release))
        head = next(p.metadata.name for p in ray_pods(api, namespace, release)
                    if p.metadata.labels["ray.io/node-type"] == "head")
        print(f"\nThe Ray cluster as Ray sees it ($ ray status, in {head}):")
        print(run_in(api, namespace, head, ["ray", "status"]).output.rstrip())
        print(f"\nThe submitter's log ({job}):")
        print(_submitter_log(api, namespace, job))
        figures = memory_bytes(state)
        used = ", ".join(f"{name} {size / 2**20:.0f} MiB" for name, size in figures.items())
        print(f"\nMemory of the real node: {used}; total {sum(figures.values()) / 2**30:.2f} GiB")
        print(f"Look around: export KUBECONFIG={cluster.kubeconfig}; stop everything: make demo-down")
    except BaseException:
        cluster.stop()
        raise
    return 0


def _wait_submitter(api: client.ApiClient, namespace: str) -> str:
    batch = client.BatchV1Api(api)

    def finished() -> bool:
        jobs = batch.list_namespaced_job(namespace, label_selector="app.kubernetes.io/component=ppo-job").items
        return bool(jobs) and all(j.status.succeeded or j.status.failed for j in jobs)

    processes.wait_for("the submitter Job to finish", finished, 300, interval=2)
    jobs = batch.list_namespaced_job(namespace, label_selector="app.kubernetes.io/component=ppo-job").items
    return jobs[0].metadata.name


def _submitter_log(api: client.ApiClient, namespace: str, job: str) -> str:
    core = client.CoreV1Api(api)
    pod = core.list_namespaced_pod(namespace, label_selector=f"batch.kubernetes.io/job-name={job}").items[0]
    return core.read_namespaced_pod_log(pod.metadata.name, namespace).rstrip()
