"""A real Prometheus (the pinned module's build) whose scrape config is derived from rendered PodMonitors.

prometheus-operator turns a PodMonitor endpoint into a kubernetes_sd scrape job plus relabelings; here the
same relabelings are built from the PodMonitor objects, and static targets carry the meta labels that
kubernetes_sd would attach to each pod port (pod labels, namespace, container port name) (tier 5).
Tier 7 runs the config the operator itself writes (prometheus_with_config), its Kubernetes service
discovery included.
"""

from __future__ import annotations

import json
import re
import subprocess
import time
import urllib.parse
import urllib.request
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator

import yaml

from support.rayhead import free_port
from support.tools import prometheus_binaries


@dataclass(frozen=True)
class PodTarget:
    """One pod as kubernetes_sd sees it: its labels, and each named container port's reachable address."""
    namespace: str
    name: str
    container: str
    labels: dict[str, str]
    ports: dict[str, str]  # container port name -> host:port
    phase: str = "Running"


def _sanitize(label: str) -> str:
    """Kubernetes label name -> Prometheus meta label suffix, as kubernetes_sd writes it."""
    return re.sub(r"[^a-zA-Z0-9_]", "_", label)


def _snake(key: str) -> str:
    return re.sub(r"(?<!^)([A-Z])", r"_\1", key).lower()


def relabel_config(relabeling: dict[str, Any]) -> dict[str, Any]:
    """A PodMonitor RelabelConfig (camelCase, action in any case) as Prometheus' relabel_config."""
    config = {_snake(key): value for key, value in relabeling.items()}
    if "action" in config:
        config["action"] = config["action"].lower()
    return config


def _meta_labels(pod: PodTarget, port_name: str) -> dict[str, str]:
    labels = {"__meta_kubernetes_namespace": pod.namespace, "__meta_kubernetes_pod_name": pod.name,
              "__meta_kubernetes_pod_container_name": pod.container,
              "__meta_kubernetes_pod_container_port_name": port_name, "__meta_kubernetes_pod_phase": pod.phase}
    for key, value in pod.labels.items():
        labels[f"__meta_kubernetes_pod_label_{_sanitize(key)}"] = value
        labels[f"__meta_kubernetes_pod_labelpresent_{_sanitize(key)}"] = "true"
    return labels


def scrape_configs(monitors: list[dict], pods: list[PodTarget], interval: str) -> list[dict]:
    """The operator's scrape jobs for the monitors' endpoints (selection, port, target labels, the monitor's
    relabelings and metric relabelings), over static targets for the pods. `interval` replaces the
    monitors' own (a test cannot wait 30 s between scrapes)."""
    jobs = []
    for monitor in monitors:
        name, namespace, spec = monitor["metadata"]["name"], monitor["metadata"]["namespace"], monitor["spec"]
        selector = spec["selector"].get("matchLabels", {})
        namespaces = spec.get("namespaceSelector", {})
        for index, endpoint in enumerate(spec["podMetricsEndpoints"]):
            port = endpoint["port"]
            relabels = [{"action": "keep", "source_labels": [f"__meta_kubernetes_pod_label_{_sanitize(key)}",
                                                             f"__meta_kubernetes_pod_labelpresent_{_sanitize(key)}"],
                         "regex": f"({value});true"} for key, value in selector.items()]
            if not namespaces.get("any"):
                relabels.append({"action": "keep", "source_labels": ["__meta_kubernetes_namespace"],
                                 "regex": "|".join(namespaces.get("matchNames", [namespace]))})
            relabels += [
                {"action": "keep", "source_labels": ["__meta_kubernetes_pod_container_port_name"], "regex": port},
                {"source_labels": ["__meta_kubernetes_namespace"], "target_label": "namespace"},
                {"source_labels": ["__meta_kubernetes_pod_container_name"], "target_label": "container"},
                {"source_labels": ["__meta_kubernetes_pod_name"], "target_label": "pod"},
                {"target_label": "job", "replacement": f"{namespace}/{name}"},
            ]
            if spec.get("jobLabel"):
                relabels.append({"source_labels": [f"__meta_kubernetes_pod_label_{_sanitize(spec['jobLabel'])}"],
                                 "target_label": "job", "regex": "(.+)", "replacement": "${1}"})
            relabels.append({"target_label": "endpoint", "replacement": port})
            relabels += [relabel_config(r) for r in endpoint.get("relabelings", [])]
            job = {"job_name": f"podMonitor/{namespace}/{name}/{index}", "scrape_interval": interval,
                   "static_configs": [{"targets": [address], "labels": _meta_labels(pod, port_name)}
                                      for pod in pods for port_name, address in pod.ports.items()],
                   "relabel_configs": relabels}
            # An endpoint's path, URL parameters and label precedence (the federating one sets all three).
            for key, setting in (("path", "metrics_path"), ("params", "params"), ("honorLabels", "honor_labels")):
                if key in endpoint:
                    job[setting] = endpoint[key]
            if endpoint.get("metricRelabelings"):
                job["metric_relabel_configs"] = [relabel_config(r) for r in endpoint["metricRelabelings"]]
            jobs.append(job)
    return jobs


class Prometheus:
    def __init__(self, url: str):
        self.url = url

    def get(self, path: str, **params: Any) -> Any:
        query = urllib.parse.urlencode(params, doseq=True)
        with urllib.request.urlopen(f"{self.url}{path}?{query}", timeout=10) as response:
            body = json.load(response)
        assert body["status"] == "success", body
        return body["data"]

    def query(self, expr: str) -> list[dict]:
        return self.get("/api/v1/query", query=expr)["result"]

    def label_values(self, label: str, match: str) -> list[str]:
        """What Grafana's label_values(<match>, <label>) asks Prometheus."""
        return self.get(f"/api/v1/label/{label}/values", **{"match[]": match})

    def targets_up(self) -> dict[str, str]:
        return {f"{t['labels'].get('job')}/{t['labels'].get('endpoint')}": t["health"]
                for t in self.get("/api/v1/targets")["activeTargets"]}


def prometheus(workdir: Path, jobs: list[dict]) -> Iterator[Prometheus]:
    """Prometheus scraping these jobs."""
    return prometheus_with_config(workdir, {"global": {"evaluation_interval": "1s"}, "scrape_configs": jobs})


@contextmanager
def prometheus_with_config(workdir: Path, settings: dict) -> Iterator[Prometheus]:
    """Prometheus running this whole configuration (prometheus.yml's content)."""
    workdir.mkdir(parents=True, exist_ok=True)
    config = workdir / "prometheus.yml"
    config.write_text(yaml.safe_dump(settings))
    port = free_port()
    log = workdir / "prometheus.log"
    with log.open("w") as log_file:
        process = subprocess.Popen(
            [str(prometheus_binaries()["prometheus"]), f"--config.file={config}",
             f"--storage.tsdb.path={workdir / 'tsdb'}", f"--web.listen-address=127.0.0.1:{port}", "--log.level=warn"],
            stdout=subprocess.DEVNULL, stderr=log_file)
    server = Prometheus(f"http://127.0.0.1:{port}")
    try:
        wait_until_serving(server, process, log, "prometheus")
        yield server
    finally:
        process.terminate()
        process.wait(timeout=30)


def wait_until_serving(server: "Prometheus", process: subprocess.Popen, log: Path, what: str) -> None:
    """Until the server answers its build info; its log in the error when it exits or 30 s pass first."""
    deadline = time.monotonic() + 30
    while True:
        try:
            server.get("/api/v1/status/buildinfo")
            return
        except OSError:
            if process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"{what} did not start: {log.read_text()}") from None
            time.sleep(0.3)
