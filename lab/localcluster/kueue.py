"""Kueue's controller (cmd/kueue of sigs.k8s.io/kueue) on the local cluster, for the queue tests: its
CRDs, its webhooks for Kueue's own kinds and for RayJobs and RayClusters (served on 127.0.0.1 with a
certificate of their own CA, which the webhook configurations carry), managing only those two kinds;
and the queue objects an administrator creates: a ResourceFlavor, a ClusterQueue with a GPU quota and
a LocalQueue."""

from __future__ import annotations

import base64
import urllib.request
from pathlib import Path

import yaml
from kubernetes import client

from lab.localcluster import pki, processes
from lab.localcluster.cluster import LocalCluster, install_crds

KUEUE = ("kueue.x-k8s.io", "v1beta2")
NAMESPACE = "kueue-system"
FRAMEWORKS = ["ray.io/rayjob", "ray.io/raycluster"]
# Webhook paths of what Kueue serves with those frameworks: its own kinds, RayJobs and RayClusters.
SERVED = ("-kueue-x-k8s-io-", "-ray-io-v1-rayjob", "-ray-io-v1-raycluster")
HOST = "127.0.0.1"
FLAVOR = "default-flavor"
METRICS_CERTS = Path("/etc/kueue/metrics/certs")


def _configuration(webhook_port: int, probe_port: int, cert_dir: Path) -> dict:
    return {
        "apiVersion": "config.kueue.x-k8s.io/v1beta2", "kind": "Configuration", "namespace": NAMESPACE,
        "health": {"healthProbeBindAddress": f"{HOST}:{probe_port}"},
        "metrics": {"bindAddress": "0"},
        "webhook": {"host": HOST, "port": webhook_port, "certDir": str(cert_dir)},
        "leaderElection": {"leaderElect": False},
        # The certificates are ours (pki.write_webhook_pki): no Secret and no rotation in the cluster.
        "internalCertManagement": {"enable": False},
        "integrations": {"frameworks": FRAMEWORKS},
    }


def webhook_configurations(manifests: Path, port: int, ca_bundle: bytes) -> list[dict]:
    """Kueue's webhook configurations, reduced to what it serves here and pointed at its local server."""
    bundle = base64.b64encode(ca_bundle).decode()
    documents = []
    for document in yaml.safe_load_all(manifests.read_text()):
        if not document:
            continue
        kept = []
        for webhook in document["webhooks"]:
            path = webhook["clientConfig"]["service"]["path"]
            if any(part in path for part in SERVED):
                webhook["clientConfig"] = {"url": f"https://{HOST}:{port}{path}", "caBundle": bundle}
                kept.append(webhook)
        kind = document["kind"]
        document["metadata"] = {"name": f"kueue-local-{kind.removesuffix('WebhookConfiguration').lower()}"}
        document["webhooks"] = kept
        documents.append(document)
    return documents


def start_kueue(cluster: LocalCluster) -> None:
    """Starts Kueue's controller and returns once its webhooks serve; stop_kueue undoes it."""
    state, files = cluster.state / "kueue", cluster.parts.kueue_files
    cert_dir = state / "certs"
    ca_bundle = pki.write_webhook_pki(cert_dir, HOST)
    webhook_port, probe_port = processes.free_port(), processes.free_port()
    config_file = state / "config.yaml"
    config_file.write_text(yaml.safe_dump(_configuration(webhook_port, probe_port, cert_dir)))
    api = cluster.api()
    install_crds(api, sorted(files.glob("kueue.x-k8s.io_*.yaml")))
    client.CoreV1Api(api).create_namespace({"metadata": {"name": NAMESPACE}})
    # Without its internal certificate management Kueue reads a metrics certificate from a fixed path,
    # even with metrics off: in a mount namespace of its own that path shows our certificate directory
    # (the host keeps an empty directory there, nothing else).
    METRICS_CERTS.mkdir(parents=True, exist_ok=True)
    processes.start(cluster.state, "kueue", [
        "unshare", "--mount", "--propagation", "private", "sh", "-c",
        f'mount --bind "$0" {METRICS_CERTS} && exec "$@"', str(cert_dir),
        str(cluster.parts.kueue), f"--config={config_file}", f"--kubeconfig={cluster.kubeconfig}",
        # The on-demand visibility API would bind a fixed port; the tests read Workloads instead.
        "--feature-gates=VisibilityOnDemand=false",
    ])
    processes.wait_for("kueue", lambda: _ready(probe_port), 180, cluster.log("kueue"))
    registrations = client.AdmissionregistrationV1Api(api)
    for document in webhook_configurations(files / "manifests.yaml", webhook_port, ca_bundle):
        if document["kind"] == "MutatingWebhookConfiguration":
            registrations.create_mutating_webhook_configuration(document)
        else:
            registrations.create_validating_webhook_configuration(document)


def stop_kueue(cluster: LocalCluster) -> None:
    """Removes the webhook configurations first (with no server behind them every RayCluster create
    would fail), then stops the controller."""
    registrations = client.AdmissionregistrationV1Api(cluster.api())
    registrations.delete_mutating_webhook_configuration("kueue-local-mutating")
    registrations.delete_validating_webhook_configuration("kueue-local-validating")
    processes.stop_one(cluster.state, "kueue")


def _ready(port: int) -> bool:
    with urllib.request.urlopen(f"http://{HOST}:{port}/readyz", timeout=5) as response:
        return response.status == 200


def create_queue(api: client.ApiClient, name: str, namespaces: list[str], gpus: int, gpu_resource: str) -> None:
    """A ClusterQueue `name` whose whole GPU quota is `gpus` (CPU and memory ample), and a LocalQueue
    `name` pointing at it in each namespace; the ResourceFlavor they use is created once."""
    custom = client.CustomObjectsApi(api)
    flavors = custom.list_cluster_custom_object(*KUEUE, "resourceflavors")["items"]
    if not any(flavor["metadata"]["name"] == FLAVOR for flavor in flavors):
        custom.create_cluster_custom_object(*KUEUE, "resourceflavors", {
            "apiVersion": "/".join(KUEUE), "kind": "ResourceFlavor", "metadata": {"name": FLAVOR}})
    resources = [{"name": "cpu", "nominalQuota": "1000"}, {"name": "memory", "nominalQuota": "10Ti"},
                 {"name": gpu_resource, "nominalQuota": gpus}]
    custom.create_cluster_custom_object(*KUEUE, "clusterqueues", {
        "apiVersion": "/".join(KUEUE), "kind": "ClusterQueue", "metadata": {"name": name},
        "spec": {"namespaceSelector": {}, "resourceGroups": [{
            "coveredResources": [r["name"] for r in resources],
            "flavors": [{"name": FLAVOR, "resources": resources}]}]},
    })
    for namespace in namespaces:
        custom.create_namespaced_custom_object(*KUEUE, namespace, "localqueues", {
            "apiVersion": "/".join(KUEUE), "kind": "LocalQueue", "metadata": {"name": name, "namespace": namespace},
            "spec": {"clusterQueue": name}})


def workloads(api: client.ApiClient, namespace: str) -> list[dict]:
    return client.CustomObjectsApi(api).list_namespaced_custom_object(*KUEUE, namespace, "workloads")["items"]


def condition(workload: dict, kind: str) -> dict:
    """A Workload's condition of that type (QuotaReserved, Admitted, Finished, ...), {} when it has none."""
    return next((c for c in (workload.get("status") or {}).get("conditions", []) if c["type"] == kind), {})
