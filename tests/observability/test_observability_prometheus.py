"""Tier 5: a real Prometheus scrapes a real Ray head (CPU) through the chart's rendered PodMonitors
(same ports, same selection and relabeling, translated as prometheus-operator does), and the default Ray
dashboard's queries return data: its Cluster variable lists the release's cluster, and the share of
queries with data is printed (GPU/TPU hardware panels excepted on a CPU machine)."""

import subprocess
import sys
import time

import pytest

from support import dashboards
from support import helm as helm_cli
from support.prometheus import PodTarget, prometheus, scrape_configs
from support.rayhead import free_port, ray_head
from support.tools import ROOT, helm_binaries, prometheus_binaries

TARGET_SHARE = 0.6
# Ray's defaults for the ports the chart names on the head: metrics (--metrics-export-port),
# as-metrics (the autoscaler's AUTOSCALER_METRIC_PORT), dash-metrics (the dashboard's DASHBOARD_METRIC_PORT).
METRICS, AUTOSCALER, DASHBOARD = 8080, 44217, 44227
# Labels KubeRay puts on every head pod it creates, besides the template's.
KUBERAY_HEAD_LABELS = {"ray.io/node-type": "head", "ray.io/group": "headgroup", "ray.io/is-ray-node": "yes"}


def rendered():
    result = helm_cli.template(helm_binaries()["helm4"])
    assert result.returncode == 0, result.output
    documents = result.documents()
    return ([d for d in documents if d["kind"] == "PodMonitor"],
            next(d for d in documents if d["kind"] == "RayCluster"))


def head_pod(cluster: dict, local_ports: dict[int, int]) -> PodTarget:
    """The head pod KubeRay would create from the rendered RayCluster, its named ports on this machine."""
    template = cluster["spec"]["headGroupSpec"]["template"]
    container = template["spec"]["containers"][0]
    name = cluster["metadata"]["name"]
    labels = {**template["metadata"]["labels"], **KUBERAY_HEAD_LABELS, "ray.io/cluster": name}
    # A port with no local counterpart (GCS, client, dashboard) points nowhere: the monitors must drop it.
    ports = {p["name"]: f"127.0.0.1:{local_ports.get(p['containerPort'], 9)}" for p in container["ports"]}
    return PodTarget(cluster["metadata"]["namespace"], f"{name}-head-abcde", container["name"], labels, ports)


def with_data(server, queries, cluster_name):
    """The queries that return series, filled in as Grafana does with this release's cluster selected."""
    return [q for q in queries if server.query(dashboards.fill(q.expr, {"Cluster": cluster_name}))]


@pytest.fixture(scope="module", autouse=True)
def _prometheus_installed():
    if not prometheus_binaries()["prometheus"].exists():
        pytest.fail("prometheus is missing: run lab/scripts/setup.sh (make setup) first")


def test_default_dashboard_has_data_from_a_ray_head_scraped_through_the_pod_monitors(tmp_path, tmp_path_factory):
    monitors, cluster = rendered()
    cluster_name = cluster["metadata"]["name"]
    local = {METRICS: free_port(), AUTOSCALER: free_port(), DASHBOARD: free_port()}
    pod = head_pod(cluster, local)
    jobs = scrape_configs(monitors, [pod], interval="1s")
    env = {"AUTOSCALER_METRIC_PORT": str(local[AUTOSCALER]), "DASHBOARD_METRIC_PORT": str(local[DASHBOARD]),
           "RAY_metrics_report_interval_ms": "1000"}
    queries = dashboards.panel_queries(dashboards.DASHBOARDS / "default.json")
    counted = [q for q in queries if not q.needs_accelerator]
    gcs_port = free_port()
    # A short temp dir: Ray's Unix sockets live under it, and their paths have a length limit.
    with ray_head(tmp_path_factory.mktemp("ray"), gpus=2, extra_env=env, metrics_port=local[METRICS],
                  gcs_port=gcs_port):
        workload = subprocess.Popen([sys.executable, str(ROOT / "tests" / "support" / "metrics_workload.py"),
                                     f"127.0.0.1:{gcs_port}"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            with prometheus(tmp_path / "prometheus", jobs) as server:
                deadline = time.monotonic() + 90
                while True:
                    time.sleep(3)
                    clusters = server.label_values("ray_io_cluster", "ray_node_network_receive_speed{}")
                    answered = with_data(server, counted, cluster_name)
                    if (clusters and len(answered) >= TARGET_SHARE * len(counted)) or time.monotonic() > deadline:
                        break
                targets = server.targets_up()
        finally:
            workload.kill()
            workload.wait(timeout=30)
    share = len(answered) / len(counted)
    print(f"\ndefault dashboard: {len(answered)}/{len(counted)} queries return data ({share:.0%}); "
          f"{len(queries) - len(counted)} GPU/TPU hardware queries excepted; targets {targets}")
    print("no data:", sorted({q.where for q in counted if q not in answered}))
    assert sorted(key.split("/")[-1] for key, health in targets.items() if health == "up") == \
        ["as-metrics", "dash-metrics", "metrics"], targets
    assert clusters == [cluster_name]
    assert share >= TARGET_SHARE
