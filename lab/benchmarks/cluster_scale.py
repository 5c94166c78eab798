"""Scale on the local cluster: N fake 8-GPU nodes, a RayCluster of a head and N-1 workers, for each N given.
Prints, per N: `generator render` and `generator check` seconds for that size, the rendered release's
size (`helm template`), then on a fresh cluster the seconds from `helm install` to every Ray pod bound
to a node and to the RayCluster ready (the KubeRay operator's verdict), and where the time went (the
pace at which the operator created the pods and the scheduler bound them, and the operator's client
waits). Ends with a table of every size. The operator runs with lab/localcluster's OPERATOR_FLAGS.

    python -m lab.benchmarks.cluster_scale [--nodes 64 256 1024] [--helm helm3|helm4]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

import yaml
from kubernetes import client

from generator.catalog import load_catalog
from lab.localcluster import processes
from lab.localcluster.cluster import OPERATOR_FLAGS, LocalCluster
from lab.localcluster.nodes import create_cpu_node, create_nodes, ready_nodes
from lab.localcluster.parts import ROOT, parts
from lab.localcluster.release import (CHART, RELEASE_LABEL, Helm, pod_security_level, prepare, raycluster_ready,
                                      release_values)

SHAPE = "h800-80g-x8"
NAMESPACE = RELEASE = "verl-ppo"
# What client-go (v0.35, the operator's) logs at the default verbosity when its rate limiter held a request
# back over 1 s: at most one line per 10 s, so a count above 0 says the limit bound, 0 that it hardly did.
THROTTLED = "client-side throttling"


@dataclass
class Figures:
    nodes: int
    render_s: float
    check_s: float
    rendered_kib: float
    rendered_objects: int
    bound_s: float = 0.0
    ready_s: float = 0.0

    def line(self) -> str:
        return (f"{self.nodes:>6} {self.nodes * 8:>6} {self.render_s:>9.2f} {self.check_s:>8.2f} "
                f"{self.rendered_kib:>11.1f} {self.rendered_objects:>8} {self.bound_s:>9.1f} {self.ready_s:>9.1f}")


HEADER = (f"{'nodes':>6} {'GPUs':>6} {'render s':>9} {'check s':>8} {'rendered KiB':>11} {'objects':>8} "
          f"{'bound s':>9} {'ready s':>9}")


def timed(command: list[str]) -> float:
    started = time.monotonic()
    subprocess.run(command, cwd=ROOT, check=True, capture_output=True, text=True)
    return time.monotonic() - started


def generator_figures(nodes: int, helm: Path, work: Path) -> tuple[Figures, Path]:
    """`generator render` and `generator check` of this size, timed as a user runs them, and the
    rendered release's size; returns the values file too."""
    output = work / f"values-{nodes}"
    render_s = timed([sys.executable, "-m", "generator", "render", SHAPE, "--nodes", str(nodes),
                      "--output", str(output)])
    values = output / f"{SHAPE}.yaml"
    check_s = timed([sys.executable, "-m", "generator", "check", str(values)])
    rendered = subprocess.run([str(helm), "template", RELEASE, str(CHART), "--namespace", NAMESPACE, "-f", str(values)],
                              check=True, capture_output=True, text=True).stdout
    objects = sum(1 for document in yaml.safe_load_all(rendered) if document)
    return Figures(nodes, render_s, check_s, len(rendered.encode()) / 1024, objects), values


@dataclass
class RayPods:
    """Created (the API's timestamp) and bound (when the watch saw a node name) wall-clock seconds of
    the release's Ray pods, kept by one watch: listing 1,024 pods on every poll costs the apiserver
    more CPU than creating them, and parsing them into client objects costs seconds here."""
    created: dict[str, float]
    bound: dict[str, float]

    def add(self, pod: dict) -> None:
        name = pod["metadata"]["name"]
        self.created[name] = _seconds(pod["metadata"]["creationTimestamp"])
        if pod["spec"].get("nodeName"):
            self.bound.setdefault(name, time.time())

    def all_bound(self, wanted: int) -> bool:
        return len(self.created) == wanted and len(self.bound) == wanted


def watch_ray_pods(api, wanted: int, timeout: float) -> RayPods:
    """Follows the release's Ray pods until `wanted` are bound; raises TimeoutError past timeout."""
    core, selector = client.CoreV1Api(api), f"{RELEASE_LABEL}={RELEASE},ray.io/node-type"
    pods, deadline = RayPods({}, {}), time.monotonic() + timeout
    listed = json.loads(core.list_namespaced_pod(NAMESPACE, label_selector=selector, _preload_content=False).data)
    for pod in listed["items"]:
        pods.add(pod)
    version = listed["metadata"]["resourceVersion"]
    while not pods.all_bound(wanted):
        left = int(deadline - time.monotonic())
        if left <= 0:
            raise TimeoutError(f"{len(pods.bound)} of {wanted} Ray pods bound after {timeout:.0f}s")
        stream = core.list_namespaced_pod(NAMESPACE, label_selector=selector, watch=True, resource_version=version,
                                          timeout_seconds=min(left, 60), _preload_content=False)
        pending = b""
        for chunk in stream.stream(65536):
            *lines, pending = (pending + chunk).split(b"\n")
            for line in filter(None, lines):
                event = json.loads(line)
                if event["type"] == "ERROR":
                    raise RuntimeError(f"watch of the Ray pods failed: {event['object']}")
                pods.add(event["object"])
                version = event["object"]["metadata"]["resourceVersion"]
            if pods.all_bound(wanted):
                break
        stream.release_conn()
    return pods


def _seconds(timestamp: str) -> float:
    return datetime.fromisoformat(timestamp.replace("Z", "+00:00")).timestamp()


def mean_latency_ms(api, metric: str, *labels: str) -> float:
    """Mean of a latency histogram of the apiserver's /metrics (seconds) over the series carrying every
    one of labels (e.g. 'verb="POST"'), in milliseconds."""
    text = api.call_api("/metrics", "GET", auth_settings=["BearerToken"], _preload_content=False)[0].data.decode()
    totals = {"_sum": 0.0, "_count": 0.0}
    for line in text.splitlines():
        for suffix in totals:
            if line.startswith(metric + suffix + "{") and all(label in line for label in labels):
                totals[suffix] += float(line.rsplit(" ", 1)[1])
    return 1000 * totals["_sum"] / totals["_count"] if totals["_count"] else float("nan")


def request_profile(api) -> str:
    """Where a pod's creation waits: the operator creates a group's pods one after another, each
    request waiting for the one before it, so its pace is one over the apiserver's create latency."""
    pods = ('resource="pods"', 'group=""')
    create = mean_latency_ms(api, "apiserver_request_duration_seconds", 'verb="POST"', 'subresource=""', *pods)
    etcd = mean_latency_ms(api, "etcd_request_duration_seconds", 'operation="create"', *pods)
    binding = mean_latency_ms(api, "apiserver_request_duration_seconds", 'verb="POST"', 'subresource="binding"', *pods)
    return (f"pod create in the apiserver {create:.0f} ms mean (etcd's part {etcd:.0f} ms), "
            f"so at most {1000 / create:.0f} pods/s one after another; binding {binding:.0f} ms")


def cpu_seconds(state: Path) -> dict[str, float]:
    """CPU seconds (user + system) each part of the cluster has used so far (/proc/<pid>/stat)."""
    ticks = os.sysconf("SC_CLK_TCK")
    used = {}
    for name, pid in processes.pids(state).items():
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        used[name] = (int(fields[11]) + int(fields[12])) / ticks
    return used


def cpu_share(before: dict[str, float], after: dict[str, float], seconds: float) -> str:
    spent = sorted(((after[name] - before.get(name, 0.0), name) for name in after), reverse=True)
    shares = ", ".join(f"{name} {cpu:.1f}" for cpu, name in spent)
    return f"{shares} CPU s in {seconds:.1f} s on {os.cpu_count()} cores"


def pace(label: str, stamps: list[float], since: float) -> str:
    """When the first and last of stamps fell (seconds after since) and how many a second in between
    (the API's timestamps have whole seconds)."""
    first, last = min(stamps) - since, max(stamps) - since
    rate = (len(stamps) - 1) / (last - first) if last > first else float("inf")
    return f"{label} {first:.0f}-{last:.0f} s after helm install ({rate:.1f}/s)"


def cluster_figures(figures: Figures, values: Path, helm_name: str, work: Path) -> None:
    """helm install on a fresh cluster of figures.nodes GPU nodes; fills in the bound and ready seconds."""
    nodes = figures.nodes
    shape = load_catalog().shapes[SHAPE]
    args = ["-f", str(values)]
    started = time.monotonic()
    cluster = LocalCluster(work / f"cluster-{nodes}", parts(helm_name)).start()
    try:
        print(f"cluster up: {time.monotonic() - started:.1f}s (operator {' '.join(OPERATOR_FLAGS)})")
        api = cluster.api()
        started = time.monotonic()
        names = [*create_nodes(api, shape, nodes), create_cpu_node(api)]
        processes.wait_for("nodes Ready", lambda: ready_nodes(api, names), 600)
        print(f"{nodes} nodes of {SHAPE} Ready: {time.monotonic() - started:.1f}s")
        helm = Helm(cluster.parts.helm, cluster.kubeconfig)
        prepare(api, helm, RELEASE, NAMESPACE, args, pod_security_level(release_values(values)))
        installed_at, started, cpu_before = time.time(), time.monotonic(), cpu_seconds(cluster.state)
        helm.run("install", RELEASE, str(CHART), "--namespace", NAMESPACE, *args)
        print(f"helm install ({helm_name}) returned: {time.monotonic() - started:.1f}s")
        pods = watch_ray_pods(api, nodes, 900)
        figures.bound_s, cpu_after = time.monotonic() - started, cpu_seconds(cluster.state)
        print(f"all {nodes} Ray pods bound to nodes: {figures.bound_s:.1f}s after helm install")
        print(f"  {pace('created by the operator', list(pods.created.values()), installed_at)}; "
              f"{pace('bound by the scheduler', list(pods.bound.values()), installed_at)}; "
              f"operator requests held over 1 s by its client rate limit: "
              f"{cluster.log('kuberay-operator').read_text(errors='replace').count(THROTTLED)} logged")
        print(f"  {request_profile(api)}")
        print(f"  CPU from helm install to bound: {cpu_share(cpu_before, cpu_after, figures.bound_s)}; "
              f"load average {os.getloadavg()[0]:.1f}")
        processes.wait_for("RayCluster ready", lambda: raycluster_ready(api, NAMESPACE), 900, interval=0.5)
        figures.ready_s = time.monotonic() - started
        print(f"RayCluster ready (head + {nodes - 1} workers): {figures.ready_s:.1f}s after helm install", flush=True)
    finally:
        cluster.stop()


def run(sizes: list[int], helm_name: str, work: Path) -> None:
    rows = []
    for nodes in sizes:
        figures, values = generator_figures(nodes, parts(helm_name).helm, work)
        print(f"{nodes} nodes: generator render {figures.render_s:.2f}s, generator check {figures.check_s:.2f}s, "
              f"rendered {figures.rendered_objects} objects, {figures.rendered_kib:.1f} KiB", flush=True)
        cluster_figures(figures, values, helm_name, work)
        rows.append(figures)
    print(HEADER)
    for figures in rows:
        print(figures.line())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, nargs="+", default=[64, 256, 1024], help="GPU nodes, one run each")
    parser.add_argument("--helm", choices=["helm3", "helm4"], default="helm4")
    parser.add_argument("--work", type=Path, help="directory for the values and each cluster's state under "
                        "<work>/cluster-<nodes> (default: a temporary one); `python -m lab.localcluster --state "
                        "<work>/cluster-<nodes> down` stops a cluster a killed run left")
    args = parser.parse_args()
    if args.work:
        run(args.nodes, args.helm, args.work)
        return
    with tempfile.TemporaryDirectory(prefix="cluster-scale-") as work:
        run(args.nodes, args.helm, Path(work))


if __name__ == "__main__":
    main()
