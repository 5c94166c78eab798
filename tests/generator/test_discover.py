"""Tier 1: `generator discover`'s reading of nodes, on the Kubernetes client's own node objects (as
list_node returns them): what a node contributes, how a node type becomes a catalog entry, and the
errors that name what to do. The same against a real API server is tier 6 (test_cluster_discover.py)."""

from __future__ import annotations

import http.server
import json
import socket
import threading

import jsonschema
import pytest
import yaml
from kubernetes import client

from generator import paths
from generator.catalog import load_catalog
from generator.discover import DiscoveryError, NodeFacts, discover, read_nodes

CATALOG = load_catalog()
H800_LABEL = {"machine.cluster.vke.volcengine.com/gpu-name": "NVIDIA-H800"}


def node(name: str, labels: dict, allocatable: dict, taints: list[tuple[str, str | None, str]] = ()) -> client.V1Node:
    return client.V1Node(
        metadata=client.V1ObjectMeta(name=name, labels=labels),
        spec=client.V1NodeSpec(taints=[client.V1Taint(key=k, value=v, effect=e) for k, v, e in taints] or None),
        status=client.V1NodeStatus(allocatable=allocatable))


def gpu_node(name: str, cpu: str = "188", memory: str = "1900Gi", rdma: str | None = "8", **extra) -> client.V1Node:
    allocatable = {"cpu": cpu, "memory": memory, "nvidia.com/gpu": "8",
                   **({"vke.volcengine.com/rdma": rdma} if rdma else {})}
    return node(name, {**H800_LABEL, **extra.get("labels", {})}, allocatable, extra.get("taints", ()))


def test_a_node_contributes_its_type_gpus_allocatable_and_lasting_taints():
    facts = NodeFacts.from_node(gpu_node("gpu-0", cpu="95500m", memory="1023Mi", taints=[
        ("nvidia.com/gpu", None, "NoSchedule"), ("node.kubernetes.io/unreachable", None, "NoExecute"),
        ("pool", "train", "NoSchedule")]))
    assert facts == NodeFacts("gpu-0", H800_LABEL,
                              (("nvidia.com/gpu", "", "NoSchedule"), ("pool", "train", "NoSchedule")),
                              8, 95500, 1023 * 2**20, True)
    bare = NodeFacts.from_node(node("cpu-0", {}, {"cpu": "4", "memory": "8Gi"}))
    assert (bare.gpus, bare.rdma, bare.taints) == (0, False, ())


def test_a_node_type_becomes_one_entry_sized_by_its_smallest_node(tmp_path):
    nodes = [gpu_node("b-1", cpu="190", memory="2000Gi",
                      taints=[("nvidia.com/gpu", None, "NoSchedule"), ("pool", "a", "NoSchedule")]),
             gpu_node("b-0", cpu="187500m", memory="1900Gi",
                      taints=[("pool", "a", "NoSchedule"), ("nvidia.com/gpu", None, "NoSchedule")]),
             node("cpu-0", {}, {"cpu": "16", "memory": "64Gi"})]
    document = discover(nodes, CATALOG, {})
    jsonschema.Draft7Validator(yaml.safe_load(paths.CATALOG_SCHEMA.read_text())).validate(document)
    (entry,) = document["shapes"]
    h800 = CATALOG.shapes["h800-80g-x8"]
    assert entry["name"] == "nvidia-h800-x8"
    assert (entry["gpuModel"], entry["gpuMemoryGiB"]) == (h800.gpu_model, h800.gpu_memory_gib)  # from the catalog
    assert entry["allocatable"] == {"cpu": "187500m", "memory": "1900Gi"}
    assert (entry["gpusPerNode"], entry["defaultNodes"], entry["rdma"]) == (8, 2, True)
    assert entry["nodeLabels"] == H800_LABEL
    assert entry["taints"] == [{"key": "nvidia.com/gpu", "effect": "NoSchedule"},
                               {"key": "pool", "value": "a", "effect": "NoSchedule"}]
    assert "from 2 node(s) through the Kubernetes API: b-0, b-1." in entry["source"]
    assert "GPU memory from the catalog entry with the same label" in entry["source"]
    assert [m["name"] for m in document["models"]] == list(CATALOG.models)
    # Everything render reads of a model: a discovered catalog sizes LoRA and names the hub's model as the catalog does.
    written = tmp_path / "catalog.yaml"
    written.write_text(yaml.safe_dump(document))
    assert load_catalog(written).models == CATALOG.models


def test_an_unknown_type_takes_its_name_from_the_label_and_memory_from_the_option():
    labels = {"nvidia.com/gpu.product": "NVIDIA-B200-SXM"}
    nodes = [node(f"n{i}", labels, {"cpu": "200", "memory": "1.5Ti", "nvidia.com/gpu": "8"}) for i in range(10)]
    (entry,) = discover(nodes, CATALOG, {"NVIDIA-B200-SXM": 180})["shapes"]
    assert (entry["name"], entry["gpuModel"], entry["gpuMemoryGiB"]) == ("nvidia-b200-sxm-x8", "NVIDIA-B200-SXM", 180)
    assert entry["allocatable"]["memory"] == "1536Gi" and entry["rdma"] is False
    assert "from 10 node(s)" in entry["source"] and "n0, n1, n2, n3, n4, n5, n6, n7 ..." in entry["source"]
    assert "GPU memory from --gpu-memory-gib" in entry["source"]


def test_memory_that_is_no_whole_gib_is_written_in_mib():
    (entry,) = discover([gpu_node("a", memory="1000000Ki")], CATALOG, {})["shapes"]
    assert entry["allocatable"]["memory"] == "976Mi"  # rounded down to whole MiB


def test_nodes_of_one_type_with_other_taints_are_an_error():
    nodes = [gpu_node("a", taints=[("pool", "a", "NoSchedule")]), gpu_node("b")]
    with pytest.raises(DiscoveryError, match="differ in their taints"):
        discover(nodes, CATALOG, {})


def test_a_cluster_without_gpus_is_an_error():
    with pytest.raises(DiscoveryError, match="no node offers nvidia.com/gpu"):
        discover([node("cpu-0", {}, {"cpu": "16", "memory": "64Gi"})], CATALOG, {})


def test_no_cluster_to_read_names_the_option(tmp_path):
    with pytest.raises(DiscoveryError, match="no cluster to read: .*pass --kubeconfig or set KUBECONFIG"):
        read_nodes(str(tmp_path / "missing-kubeconfig"))


def test_one_gpu_or_one_rdma_device_counts():
    """A node with a single GPU is a GPU node; a single RDMA device is RDMA."""
    nodes = [node("one", H800_LABEL,
                  {"cpu": "16", "memory": "64Gi", "nvidia.com/gpu": "1", "vke.volcengine.com/rdma": "1"})]
    (entry,) = discover(nodes, CATALOG, {"NVIDIA-H800": 80})["shapes"]
    assert (entry["gpusPerNode"], entry["rdma"], entry["name"]) == (1, True, "nvidia-h800-x1")


def test_nodes_are_all_read_whatever_comes_first():
    """A CPU node listed first is passed over, not the end of the list; every unlabelled GPU node is named."""
    nodes = [node("cpu-0", {}, {"cpu": "16", "memory": "64Gi"}), gpu_node("gpu-0")]
    assert [e["defaultNodes"] for e in discover(nodes, CATALOG, {})["shapes"]] == [1]
    unlabelled = [node(f"bare-{i}", {}, {"cpu": "16", "memory": "64Gi", "nvidia.com/gpu": "8"}) for i in range(2)]
    with pytest.raises(DiscoveryError, match="without any of the labels .*: bare-0, bare-1; label them"):
        discover(unlabelled + [gpu_node("gpu-0")], CATALOG, {})


@pytest.mark.parametrize("gpus", ["4", "16"])
def test_a_catalog_entry_counts_only_with_the_same_gpus_per_node(gpus):
    """H800 nodes of another size are another node type: the catalog's 8-GPU entry says nothing of their GPUs."""
    nodes = [node("odd", H800_LABEL, {"cpu": "96", "memory": "900Gi", "nvidia.com/gpu": gpus})]
    with pytest.raises(DiscoveryError, match="GPU memory of .*=NVIDIA-H800 unknown"):
        discover(nodes, CATALOG, {})


def test_gpu_memory_from_the_label_keeps_its_fraction_of_a_gib():
    nodes = [gpu_node(f"g{i}", labels={"nvidia.com/gpu.memory": mib}) for i, mib in enumerate(["81559", "81920"])]
    (entry,) = discover(nodes, CATALOG, {})["shapes"]
    assert entry["gpuMemoryGiB"] == 81559 / 1024  # the smallest node's, not rounded to whole GiB
    assert "GPU memory from nvidia.com/gpu.memory" in entry["source"]


def test_a_long_label_value_is_cut_to_the_catalogs_40_characters():
    labels = {"nvidia.com/gpu.product": "X" * 50}
    (entry,) = discover([node("long", labels, {"cpu": "8", "memory": "8Gi", "nvidia.com/gpu": "8"})], CATALOG,
                        {"X" * 50: 40})["shapes"]
    assert entry["name"] == "x" * 40
    assert entry["documented"] is True  # the figures are the cluster's own


@pytest.mark.parametrize("count, listed",
                         [(8, "n0, n1, n2, n3, n4, n5, n6, n7."), (9, "n0, n1, n2, n3, n4, n5, n6, n7 ...")])
def test_the_source_lists_eight_node_names_then_an_ellipsis(count, listed):
    nodes = [gpu_node(f"n{i}") for i in range(count)]
    (entry,) = discover(nodes, CATALOG, {})["shapes"]
    assert f"from {count} node(s) through the Kubernetes API: {listed}" in entry["source"]


def test_in_a_pod_without_a_kubeconfig_the_service_account_is_used(monkeypatch, tmp_path):
    """Where a pod's environment names the API server, no kubeconfig means the pod's service account (here
    none is mounted, so that is what the error says); a kubeconfig given is read even there."""
    monkeypatch.setenv("KUBERNETES_SERVICE_HOST", "10.0.0.1")
    monkeypatch.setenv("KUBERNETES_SERVICE_PORT", "443")
    monkeypatch.setenv("HOME", str(tmp_path))  # no default kubeconfig to fall back on
    with pytest.raises(DiscoveryError, match="no cluster to read: .*token"):
        read_nodes(None)
    with pytest.raises(DiscoveryError, match="cannot reach the API server"):  # the kubeconfig's server, not the pod's
        read_nodes(_kubeconfig(tmp_path, f"http://127.0.0.1:{_closed_port()}"))


class _Forbidden(http.server.BaseHTTPRequestHandler):
    def do_GET(self):  # noqa: N802 (the handler's name is http.server's)
        body = json.dumps({"kind": "Status", "apiVersion": "v1", "status": "Failure", "reason": "Forbidden",
                           "code": 403, "message": "nodes is forbidden"}).encode()
        self.send_response(403, "Forbidden")
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


def _closed_port() -> int:
    """A port nothing listens on."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _kubeconfig(tmp_path, server: str):
    path = tmp_path / "kubeconfig"
    path.write_text(yaml.safe_dump({
        "apiVersion": "v1", "kind": "Config", "current-context": "c",
        "clusters": [{"name": "c", "cluster": {"server": server}}],
        "contexts": [{"name": "c", "context": {"cluster": "c", "user": "u"}}],
        "users": [{"name": "u", "user": {"token": "t"}}]}))
    return str(path)


def test_an_api_server_that_refuses_the_listing_is_named_with_the_permission_needed(tmp_path):
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Forbidden)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        with pytest.raises(DiscoveryError, match=r"listing nodes failed: 403 Forbidden \(needs get/list on nodes\)"):
            read_nodes(_kubeconfig(tmp_path, f"http://127.0.0.1:{server.server_port}"))
    finally:
        server.shutdown()


def test_an_api_server_that_does_not_answer_is_named(tmp_path):
    with pytest.raises(DiscoveryError, match="cannot reach the API server"):
        read_nodes(_kubeconfig(tmp_path, f"http://127.0.0.1:{_closed_port()}"))
