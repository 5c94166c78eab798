"""Tier 1: `generator summarize`, what `make demo-render` prints for a rendered release."""

from __future__ import annotations

import subprocess
import sys

import pytest

from generator import paths
from support import helm as helm_cli
from support.tools import helm_binaries


def accelerators(limits: dict) -> dict:
    return {key: value for key, value in limits.items() if key not in ("cpu", "memory")}


@pytest.mark.parametrize("shape", ["seed-2gpu", "h200-141g-x8"])  # nodes of any kind; nodes selected by label
def test_summary_names_every_object_the_ray_pods_and_the_entrypoint(shape):
    rendered = helm_cli.template(helm_binaries()["helm4"], "-f", str(paths.VALUES_DIR / f"{shape}.yaml"))
    assert rendered.returncode == 0, rendered.output
    documents = [d for d in rendered.documents() if d]
    run = subprocess.run([sys.executable, "-m", "generator", "summarize"], input=rendered.stdout, capture_output=True,
                         text=True, cwd=paths.ROOT)
    assert run.returncode == 0, run.stderr
    lines = run.stdout.splitlines()
    assert lines[0] == f"{len(documents)} objects would be created:"
    for document in documents:
        assert f"  {document['kind']:<22} {document['metadata']['name']}" in lines
    cluster = next(d for d in documents if d["kind"] == "RayCluster")
    head = cluster["spec"]["headGroupSpec"]["template"]["spec"]["containers"][0]["resources"]["limits"]
    assert f"RayCluster {cluster['metadata']['name']}:" in lines
    assert f"  head:    cpu {head['cpu']}, memory {head['memory']}, extra {accelerators(head) or 'none'}" in lines
    group = cluster["spec"]["workerGroupSpecs"][0]
    spec = group["template"]["spec"]
    limits = spec["containers"][0]["resources"]["limits"]
    assert (f"  {group['groupName']}: {group['replicas']} x (cpu {limits['cpu']}, memory {limits['memory']}, "
            f"{accelerators(limits)}) "
            f"on nodes {spec.get('nodeSelector') or 'any'}") in lines
    entry = lines.index("Ray job entrypoint:")
    assert lines[entry + 1].startswith("  python3 -m verl.trainer.main_ppo")
    assert len(lines) > entry + 10 and all(line.startswith("    '") for line in lines[entry + 2:])
