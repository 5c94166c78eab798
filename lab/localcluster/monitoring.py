"""prometheus-operator (cmd/operator of its Go module) as a local process against the local cluster's
apiserver (tier 7): it turns the PodMonitors a Prometheus object selects into that object's scrape
config, which it writes into the Secret prometheus-<name> (prometheus.yaml.gz), as in any cluster.

The Prometheus object asks for no pods (replicas 0): the pinned Prometheus binary runs the operator's
config unchanged on this machine, its Kubernetes service discovery listing the pods, which it reaches on
the real node's bridge. The object's apiserverConfig points that discovery at the local apiserver with
the admin certificate (files on this machine), where a Prometheus pod would use its ServiceAccount token."""

from __future__ import annotations

import base64
import gzip
import re
import urllib.request

import yaml
from kubernetes import client

from lab.pins import prometheus_dir
from lab.localcluster import processes
from lab.localcluster.cluster import LocalCluster, install_crds

MONITORING = ("monitoring.coreos.com", "v1")
NAMESPACE = "monitoring"
NAME = "local"
HOST = "127.0.0.1"
# The CRDs of the operator's Prometheus controller (PodMonitors and ServiceMonitors come with every cluster):
# it starts no controller whose kinds are absent (Alertmanager, ThanosRuler, PrometheusAgent).
PROMETHEUS_KINDS = ["prometheuses", "podmonitors", "servicemonitors", "probes", "prometheusrules", "scrapeconfigs"]


def prometheus_version() -> str:
    """The pinned Prometheus as the operator names versions (v3.16.0: the release setup.sh recorded beside it)."""
    return "v" + (prometheus_dir() / "VERSION").read_text().strip()


def start_prometheus_operator(cluster: LocalCluster) -> None:
    """Installs the Prometheus controller's CRDs the cluster lacks and starts the operator; returns once it
    serves its health check."""
    api = cluster.api()
    files = cluster.parts.prometheus_operator_files
    install_crds(api, [files / f"{MONITORING[0]}_{kind}.yaml" for kind in PROMETHEUS_KINDS], existing_ok=True)
    port, pki_dir = processes.free_port(), cluster.pki_dir
    processes.start(cluster.state, "prometheus-operator", [
        str(cluster.parts.prometheus_operator), f"--apiserver={_apiserver(api)}", f"--ca-file={pki_dir / 'ca.crt'}",
        f"--cert-file={pki_dir / 'admin.crt'}", f"--key-file={pki_dir / 'admin.key'}",
        f"--web.listen-address={HOST}:{port}", "--kubelet-endpoints=false",
    ])
    processes.wait_for("prometheus-operator", lambda: _healthy(port), 120, cluster.log("prometheus-operator"))


def create_prometheus(cluster: LocalCluster, pod_monitor_labels: dict[str, str], namespaces: list[str]) -> None:
    """The Prometheus object NAME in NAMESPACE, selecting the PodMonitors with those labels in those namespaces."""
    api, pki_dir = cluster.api(), cluster.pki_dir
    core = client.CoreV1Api(api)
    if not any(n.metadata.name == NAMESPACE for n in core.list_namespace().items):
        core.create_namespace({"metadata": {"name": NAMESPACE}})
    client.CustomObjectsApi(api).create_namespaced_custom_object(*MONITORING, NAMESPACE, "prometheuses", {
        "apiVersion": "/".join(MONITORING), "kind": "Prometheus", "metadata": {"name": NAME, "namespace": NAMESPACE},
        "spec": {
            "replicas": 0, "version": prometheus_version(),
            "podMonitorSelector": {"matchLabels": pod_monitor_labels},
            "podMonitorNamespaceSelector": {"matchExpressions": [
                {"key": "kubernetes.io/metadata.name", "operator": "In", "values": namespaces}]},
            "apiserverConfig": {"host": _apiserver(api), "tlsConfig": {
                "caFile": str(pki_dir / "ca.crt"), "certFile": str(pki_dir / "admin.crt"),
                "keyFile": str(pki_dir / "admin.key")}},
        },
    })


def delete_prometheus(cluster: LocalCluster) -> None:
    """Removes the object while the operator runs (it holds a finalizer on it)."""
    client.CustomObjectsApi(cluster.api()).delete_namespaced_custom_object(*MONITORING, NAMESPACE, "prometheuses", NAME)


# What the operator's config reloader (the sidecar beside Prometheus in its pod) expands in the config it
# writes: $(NAME) by the pod's environment; here the one pod of shard 0.
RELOADER_ENV = {"SHARD": "0", "POD_NAME": f"prometheus-{NAME}-0"}
RELOADER_VARIABLE = re.compile(r"\$\((\w+)\)")


def generated_config(api: client.ApiClient) -> dict:
    """The scrape config the operator wrote for the Prometheus object ({} before it has), expanded as its
    config reloader expands it."""
    try:
        secret = client.CoreV1Api(api).read_namespaced_secret(f"prometheus-{NAME}", NAMESPACE)
    except client.ApiException as error:
        if error.status == 404:
            return {}
        raise
    text = gzip.decompress(base64.b64decode(secret.data["prometheus.yaml.gz"])).decode()
    return yaml.safe_load(RELOADER_VARIABLE.sub(lambda match: RELOADER_ENV[match.group(1)], text))


def _apiserver(api: client.ApiClient) -> str:
    return api.configuration.host


def _healthy(port: int) -> bool:
    with urllib.request.urlopen(f"http://{HOST}:{port}/healthz", timeout=5) as response:
        return response.status == 200
