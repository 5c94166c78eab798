"""Tier 2: checkov's Kubernetes checks over the rendered release (defaults and both platform overlays), the Ray
pods included (KubeRay's RayCluster is a custom resource checkov does not read: its head and worker pod templates
are scanned as the Pods KubeRay makes of them). Every finding must be listed, with its reason, in
tests/data/checkov-exceptions.yaml; a new finding fails, and so does an exception nothing needs any more."""

from __future__ import annotations

import json
import re
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml

from support import helm as helm_cli
from support.tools import ROOT, checkov_binary, helm_binaries

EXCEPTIONS = Path(__file__).parents[1] / "data" / "checkov-exceptions.yaml"
PLATFORMS = {
    "defaults": [],
    "vke": ["-f", str(ROOT / "values" / "platforms" / "vke.yaml"), "--set", "storage.tos.bucket=b",
            "--set", "storage.tos.secretName=tos-credentials"],
    "generic": ["-f", str(ROOT / "values" / "platforms" / "generic.yaml")],
}
# A Job's and the preparation Job's names end in a hash of their run: findings name the object without it.
_HASH = re.compile(r"-[0-9a-f]{8}$")


@dataclass(frozen=True)
class Finding:
    check: str
    resource: str  # Kind/name

    def __str__(self) -> str:
        return f"{self.check} {self.resource}"


def ray_pods(cluster: dict) -> list[dict]:
    """The Pods KubeRay makes of a RayCluster's head and worker group templates, with the label KubeRay adds
    (ray.io/cluster, which the chart's NetworkPolicy selects)."""
    name = cluster["metadata"]["name"]
    spec = cluster["spec"]
    templates = [(f"{name}-head", spec["headGroupSpec"]["template"])]
    templates += [(f"{name}-{group['groupName']}-worker", group["template"])
                  for group in spec.get("workerGroupSpecs", [])]
    pods = []
    for pod, template in templates:
        metadata = template.get("metadata", {})
        labels = {**metadata.get("labels", {}), "ray.io/cluster": name}
        pods.append({"apiVersion": "v1", "kind": "Pod", "spec": template["spec"],
                     "metadata": {**metadata, "labels": labels, "name": pod,
                                  "namespace": cluster["metadata"]["namespace"]}})
    return pods


def rendered_objects(args: list[str]) -> list[dict]:
    result = helm_cli.template(helm_binaries()["helm4"], *args)
    assert result.returncode == 0, result.output
    documents = result.documents()
    return documents + [pod for doc in documents if doc["kind"] == "RayCluster" for pod in ray_pods(doc)]


def resource_of(checkov_resource: str) -> str:
    kind, _namespace, name = checkov_resource.split(".", 2)
    name = name.split(".app.kubernetes.io/", 1)[0]  # graph checks append the pod's labels
    return f"{kind}/{_HASH.sub('', name)}"


def findings(directory: Path) -> set[Finding]:
    binary = checkov_binary()
    if not binary.exists():
        pytest.fail(f"{binary} missing: run lab/scripts/setup.sh (make setup)")
    done = subprocess.run([str(binary), "--directory", str(directory), "--framework", "kubernetes", "--output", "json",
                           "--quiet", "--skip-download"], capture_output=True, text=True, timeout=600,
                          env={"PATH": "/usr/bin:/bin", "BC_SKIP_MAPPING": "TRUE", "HOME": str(directory)})
    reports = json.loads(done.stdout or "[]")
    reports = reports if isinstance(reports, list) else [reports]
    failed = [check for report in reports for check in report.get("results", {}).get("failed_checks", [])]
    assert done.returncode in (0, 1) and (failed or done.returncode == 0), done.stderr[-2000:]
    return {Finding(check["check_id"], resource_of(check["resource"])) for check in failed}


def allowed() -> dict[Finding, str]:
    entries = yaml.safe_load(EXCEPTIONS.read_text())
    return {Finding(entry["check"], resource): entry["reason"] for entry in entries for resource in entry["resources"]}


@pytest.fixture(scope="module")
def found(tmp_path_factory) -> set[Finding]:
    directory = tmp_path_factory.mktemp("checkov")
    for platform, args in PLATFORMS.items():
        (directory / f"{platform}.yaml").write_text(yaml.safe_dump_all(rendered_objects(args)))
    return findings(directory)


def test_every_exception_has_a_reason():
    assert all(len(reason.split()) >= 5 for reason in allowed().values())


def test_no_finding_without_an_exception(found):
    new = sorted(map(str, found - allowed().keys()))
    assert new == [], ("new checkov findings (fix them, or add them with a reason to "
                       "tests/data/checkov-exceptions.yaml):\n" + "\n".join(new))


def test_no_exception_without_a_finding(found):
    stale = sorted(map(str, allowed().keys() - found))
    assert stale == [], "exceptions nothing needs any more (remove them):\n" + "\n".join(stale)


def test_the_ray_pods_are_scanned(found):
    """The Ray pods' findings are there (the vendor image's tag, no digest): they were scanned, not skipped."""
    assert Finding("CKV_K8S_43", "Pod/verl-ppo-head") in found
