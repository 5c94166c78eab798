"""The GPU-shape catalog: node types and model profiles, validated by their own schema."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import jsonschema
import yaml

from generator import paths


# The model `shapes` and `render` size for unless told another (the vendor guide's).
DEFAULT_MODEL = "qwen2.5-0.5b"


@dataclass(frozen=True)
class GpuShape:
    name: str
    gpu_model: str
    gpu_memory_gib: float
    gpus_per_node: int
    allocatable_cpu: str
    allocatable_memory: str
    default_nodes: int
    node_labels: dict[str, str]
    taints: list[dict[str, str]]
    rdma: bool
    documented: bool
    source: str
    vendor_guide: bool = False  # keeps the chart's defaults: the guide's veRL on the guide's image


@dataclass(frozen=True)
class VerlRelease:
    """The veRL release the node types' values run, and the image veRL publishes for it."""

    version: str
    image_repository: str
    image_tag: str


@dataclass(frozen=True)
class ModelProfile:
    name: str
    path: str
    params_billion: float
    # LoRA parameters per unit of rank, all-linear (inputs + outputs over the decoder's linear layers); 0: unknown.
    adapter_params_per_rank: int = 0
    hub_id: str = ""  # its repository at the hub (ppo-job.prepare.model.id); "": not known, the values name none


@dataclass(frozen=True)
class Catalog:
    shapes: dict[str, GpuShape]
    models: dict[str, ModelProfile]
    verl: VerlRelease


def load_catalog(path: Path = paths.CATALOG) -> Catalog:
    data = yaml.safe_load(path.read_text())
    schema = yaml.safe_load(paths.CATALOG_SCHEMA.read_text())
    jsonschema.Draft7Validator(schema).validate(data)
    shapes = {
        entry["name"]: GpuShape(
            name=entry["name"],
            gpu_model=entry["gpuModel"],
            gpu_memory_gib=entry["gpuMemoryGiB"],
            gpus_per_node=entry["gpusPerNode"],
            allocatable_cpu=entry["allocatable"]["cpu"],
            allocatable_memory=entry["allocatable"]["memory"],
            default_nodes=entry["defaultNodes"],
            node_labels=entry["nodeLabels"],
            taints=entry["taints"],
            rdma=entry["rdma"],
            documented=entry["documented"],
            source=" ".join(entry["source"].split()),
            vendor_guide=entry.get("vendorGuide", False),
        )
        for entry in data["shapes"]
    }
    models = {
        entry["name"]: ModelProfile(entry["name"], entry["path"], entry["paramsBillion"],
                                    entry.get("adapterParamsPerRank", 0), entry.get("hubId", ""))
        for entry in data["models"]
    }
    release = data["verl"]
    verl = VerlRelease(str(release["version"]), release["image"]["repository"], release["image"]["tag"])
    return Catalog(shapes, models, verl)
