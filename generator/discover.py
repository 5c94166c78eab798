"""`generator discover`: catalog entries for the GPU node types of a real cluster, read through the
Kubernetes API (a kubeconfig, or the in-cluster service account)."""

from __future__ import annotations

import datetime
import os
import re
from collections import defaultdict
from dataclasses import dataclass
from typing import Any

import jsonschema
import yaml

from generator import paths
from generator.catalog import Catalog
from generator.quantity import cpu_millis, format_cpu, memory_bytes

GPU_RESOURCE = "nvidia.com/gpu"
RDMA_RESOURCE = "vke.volcengine.com/rdma"
# Labels that name a node's GPU type, most specific first: NVIDIA GPU feature discovery, VKE, the
# cloud instance type.
TYPE_LABELS = ("nvidia.com/gpu.product", "machine.cluster.vke.volcengine.com/gpu-name",
               "node.kubernetes.io/instance-type")
# GPU feature discovery publishes the memory of one GPU in MiB.
GPU_MEMORY_LABEL = "nvidia.com/gpu.memory"
# Taints the node lifecycle puts on and takes off by itself: not part of a node type.
TRANSIENT_TAINT_PREFIX = "node.kubernetes.io/"


class DiscoveryError(Exception):
    pass


@dataclass(frozen=True)
class NodeFacts:
    """What discovery needs of one node, from its labels, taints and allocatable."""
    name: str
    labels: dict[str, str]
    taints: tuple[tuple[str, str, str], ...]  # (key, value, effect)
    gpus: int
    cpu_millis: int
    memory_bytes: int
    rdma: bool

    @classmethod
    def from_node(cls, node: Any) -> "NodeFacts":
        allocatable = node.status.allocatable or {}
        taints = tuple(sorted((t.key, t.value or "", t.effect) for t in node.spec.taints or []
                              if not t.key.startswith(TRANSIENT_TAINT_PREFIX)))
        return cls(node.metadata.name, dict(node.metadata.labels or {}), taints,
                   int(allocatable.get(GPU_RESOURCE, "0")), cpu_millis(allocatable.get("cpu", "0")),
                   memory_bytes(allocatable.get("memory", "0")), int(allocatable.get(RDMA_RESOURCE, "0")) > 0)


def type_label(node: NodeFacts) -> tuple[str, str] | None:
    return next(((key, node.labels[key]) for key in TYPE_LABELS if node.labels.get(key)), None)


def group_gpu_nodes(nodes: list[NodeFacts]) -> dict[tuple[str, str, int], list[NodeFacts]]:
    """GPU nodes by (type label, its value, GPUs per node); nodes without any type label are an error:
    a values file could not select them."""
    groups: dict[tuple[str, str, int], list[NodeFacts]] = defaultdict(list)
    unnamed = []
    for node in nodes:
        if node.gpus <= 0:
            continue
        label = type_label(node)
        if label is None:
            unnamed.append(node.name)
            continue
        groups[(*label, node.gpus)].append(node)
    if unnamed:
        raise DiscoveryError(f"GPU nodes without any of the labels {', '.join(TYPE_LABELS)}: {', '.join(unnamed)}; "
                             "label them (e.g. node.kubernetes.io/instance-type) so a release can select them")
    return dict(sorted(groups.items()))


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")


def _memory(num_bytes: int) -> str:
    """The largest unit that states the figure exactly, rounded down to whole MiB."""
    mib = num_bytes // 2**20
    return f"{mib // 1024}Gi" if mib % 1024 == 0 else f"{mib}Mi"


def shape_entry(key: tuple[str, str, int], nodes: list[NodeFacts], known: Catalog,
                gpu_memory_gib: dict[str, float]) -> dict[str, Any]:
    """One catalog entry; allocatable is the smallest of the group's nodes, so pods sized from it fit on every one."""
    label, value, gpus = key
    node_labels = {label: value}
    same = next((s for s in known.shapes.values() if s.node_labels == node_labels and s.gpus_per_node == gpus), None)
    memory_source = "the catalog entry with the same label"
    if value in gpu_memory_gib:
        memory, memory_source = gpu_memory_gib[value], "--gpu-memory-gib"
    elif all(GPU_MEMORY_LABEL in node.labels for node in nodes):
        memory, memory_source = min(int(node.labels[GPU_MEMORY_LABEL]) for node in nodes) / 1024, GPU_MEMORY_LABEL
    elif same:
        memory = same.gpu_memory_gib
    else:
        raise DiscoveryError(f"GPU memory of {label}={value} unknown (no {GPU_MEMORY_LABEL} label, no catalog entry "
                             f"with that label): pass --gpu-memory-gib {value}=<GiB of one GPU>")
    taint_sets = {node.taints for node in nodes}
    if len(taint_sets) > 1:
        raise DiscoveryError(f"nodes {label}={value} differ in their taints: {sorted(taint_sets)}")
    names = sorted(node.name for node in nodes)
    today = datetime.date.today().isoformat()
    return {
        "name": f"{_slug(value)}-x{gpus}"[:40].strip("-"),
        "gpuModel": same.gpu_model if same else value,
        "gpuMemoryGiB": memory,
        "gpusPerNode": gpus,
        "allocatable": {"cpu": format_cpu(min(n.cpu_millis for n in nodes)),
                        "memory": _memory(min(n.memory_bytes for n in nodes))},
        "defaultNodes": len(nodes),
        "nodeLabels": node_labels,
        "taints": [dict(zip(("key", "value", "effect"), taint, strict=True)) if taint[1]
                   else {"key": taint[0], "effect": taint[2]} for taint in sorted(taint_sets.pop())],
        "rdma": all(node.rdma for node in nodes),
        "documented": True,
        "source": f"Discovered {today} from {len(nodes)} node(s) through the Kubernetes API: {', '.join(names[:8])}"
                  f"{' ...' if len(names) > 8 else ''}. Allocatable is the smallest of them; GPU memory from "
                  f"{memory_source}.",
    }


def discover(nodes: list[Any], known: Catalog, gpu_memory_gib: dict[str, float]) -> dict[str, Any]:
    """A catalog document: the discovered shapes, and the models and veRL release of the known catalog (render
    needs them)."""
    groups = group_gpu_nodes([NodeFacts.from_node(node) for node in nodes])
    if not groups:
        raise DiscoveryError(f"no node offers {GPU_RESOURCE}")
    shapes = [shape_entry(key, members, known, gpu_memory_gib) for key, members in groups.items()]
    models = [{"name": m.name, "path": m.path, "paramsBillion": m.params_billion,
               **({"adapterParamsPerRank": m.adapter_params_per_rank} if m.adapter_params_per_rank else {}),
               **({"hubId": m.hub_id} if m.hub_id else {})} for m in known.models.values()]
    release = {"version": known.verl.version,
               "image": {"repository": known.verl.image_repository, "tag": known.verl.image_tag}}
    document = {"verl": release, "shapes": shapes, "models": models}
    jsonschema.Draft7Validator(yaml.safe_load(paths.CATALOG_SCHEMA.read_text())).validate(document)
    return document


def read_nodes(kubeconfig: str | None) -> list[Any]:
    """Every node, through a kubeconfig (the default one when None) or, inside a pod, the service account."""
    from kubernetes import client, config  # imported here: the other subcommands do not need the client
    from kubernetes.client.exceptions import ApiException
    from kubernetes.config.config_exception import ConfigException
    from urllib3.exceptions import HTTPError

    try:
        if kubeconfig is None and config.incluster_config.SERVICE_HOST_ENV_NAME in os.environ:
            config.load_incluster_config()
            api = client.ApiClient()
        else:
            api = config.new_client_from_config(config_file=kubeconfig)
        return client.CoreV1Api(api).list_node().items
    except (ConfigException, OSError) as error:
        raise DiscoveryError(f"no cluster to read: {error}; pass --kubeconfig or set KUBECONFIG") from error
    except ApiException as error:
        raise DiscoveryError(f"listing nodes failed: {error.status} {error.reason} "
                             "(needs get/list on nodes)") from error
    except HTTPError as error:
        raise DiscoveryError(f"cannot reach the API server: {error}") from error
