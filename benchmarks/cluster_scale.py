"""Scale on the local cluster: 64 fake 8-GPU nodes, a RayCluster of a head and 63 workers. Prints
the seconds from `helm install` to every Ray pod bound to a node and to the RayCluster ready (the
KubeRay operator's verdict). `python -m benchmarks.cluster_scale [--nodes N] [--helm helm3|helm4]`."""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path


from generator.catalog import load_catalog
from generator.helmvalues import chart_values
from generator.render import render_shape
from generator.sizing import RunShape
from tools.localcluster import processes
from tools.localcluster.cluster import LocalCluster
from tools.localcluster.nodes import create_cpu_node, create_nodes, ready_nodes
from tools.localcluster.parts import parts
from tools.localcluster.release import CHART, Helm, prepare, pod_security_level, ray_pods, raycluster_ready

SHAPE = "h800-80g-x8"
NAMESPACE = RELEASE = "verl-ppo"


def ray_pods_bound(api, wanted: int) -> bool:
    pods = ray_pods(api, NAMESPACE, RELEASE)
    return len(pods) == wanted and all(p.spec.node_name for p in pods)


def run(nodes: int, helm_name: str, work: Path) -> None:
    catalog = load_catalog()
    shape = catalog.shapes[SHAPE]
    values = work / f"{SHAPE}-{nodes}.yaml"
    # The generator sizes the batches for this many GPUs too (whole samples on every GPU).
    values.write_text(render_shape(shape, catalog.models["qwen2.5-0.5b"], RunShape(nodes=nodes)))
    args = ["-f", str(values)]

    started = time.monotonic()
    cluster = LocalCluster(work / "cluster", parts(helm_name)).start()
    try:
        print(f"cluster up: {time.monotonic() - started:.1f}s")
        api = cluster.api()
        started = time.monotonic()
        names = [*create_nodes(api, shape, nodes), create_cpu_node(api)]
        processes.wait_for("nodes Ready", lambda: ready_nodes(api, names), 300)
        print(f"{nodes} nodes of {SHAPE} Ready: {time.monotonic() - started:.1f}s")
        helm = Helm(cluster.parts.helm, cluster.kubeconfig)
        level = pod_security_level(chart_values(values))
        prepare(api, helm, RELEASE, NAMESPACE, args, level)
        started = time.monotonic()
        helm.run("install", RELEASE, str(CHART), "--namespace", NAMESPACE, *args)
        print(f"helm install ({helm_name}) returned: {time.monotonic() - started:.1f}s")
        processes.wait_for("Ray pods bound", lambda: ray_pods_bound(api, nodes), 900, interval=0.2)
        print(f"all {nodes} Ray pods bound to nodes: {time.monotonic() - started:.1f}s after helm install")
        processes.wait_for("RayCluster ready", lambda: raycluster_ready(api, NAMESPACE), 900, interval=0.2)
        print(f"RayCluster ready (head + {nodes - 1} workers): {time.monotonic() - started:.1f}s after helm install")
    finally:
        cluster.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--nodes", type=int, default=64)
    parser.add_argument("--helm", choices=["helm3", "helm4"], default="helm4")
    parser.add_argument("--work", type=Path, help="directory for the values and the cluster's state under "
                        "<work>/cluster (default: a temporary one); `python -m tools.localcluster --state "
                        "<work>/cluster down` stops a cluster a killed run left")
    args = parser.parse_args()
    if args.work:
        run(args.nodes, args.helm, args.work)
        return
    with tempfile.TemporaryDirectory(prefix="cluster-scale-") as work:
        run(args.nodes, args.helm, Path(work))


if __name__ == "__main__":
    main()
