"""A person-readable summary of a rendered release (the output of `helm template`)."""

from __future__ import annotations

from typing import Any, Iterable

import yaml


def _container_gpus(pod_spec: dict[str, Any]) -> dict[str, Any]:
    limits = pod_spec["containers"][0].get("resources", {}).get("limits", {})
    return {key: value for key, value in limits.items() if key not in ("cpu", "memory")}


def summarize(documents: Iterable[dict[str, Any]]) -> str:
    objects = [doc for doc in documents if doc]
    lines = [f"{len(objects)} objects would be created:"]
    for obj in objects:
        lines.append(f"  {obj['kind']:<22} {obj['metadata']['name']}")
    for cluster in (o for o in objects if o["kind"] == "RayCluster"):
        head = cluster["spec"]["headGroupSpec"]["template"]["spec"]
        lines.append(f"RayCluster {cluster['metadata']['name']}:")
        limits = head["containers"][0]["resources"]["limits"]
        extra = _container_gpus(head) or "none"
        lines.append(f"  head:    cpu {limits['cpu']}, memory {limits['memory']}, extra {extra}")
        for group in cluster["spec"].get("workerGroupSpecs", []):
            spec = group["template"]["spec"]
            limits = spec["containers"][0]["resources"]["limits"]
            lines.append(f"  {group['groupName']}: {group['replicas']} x (cpu {limits['cpu']}, memory "
                         f"{limits['memory']}, {_container_gpus(spec)}) on nodes {spec.get('nodeSelector') or 'any'}")
    for config in (o for o in objects if o["kind"] == "ConfigMap" and "job.json" in o.get("data", {})):
        job = yaml.safe_load(config["data"]["job.json"])
        lines.append("Ray job entrypoint:")
        lines.append("  " + job["entrypoint"].replace("' '", "'\n    '"))
    return "\n".join(lines)
