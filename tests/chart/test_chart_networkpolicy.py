"""Tier 2: the NetworkPolicy admits every pod of the release that speaks to Ray, the Ray head and
workers among them (under an enforcing CNI a Ray pod without the release label is cut off from the
others), and selects the pods KubeRay creates for the release's RayCluster. Whom the policy admits (KubeRay's
operator in RayJob mode only, to the dashboard port): charts/verl-ppo/tests/networkpolicy_test.yaml."""

from __future__ import annotations

from pathlib import Path

import pytest

from generator.catalog import load_catalog
from generator.render import render_shape
from generator.sizing import RunShape
from support import helm as helm_cli

CATALOG = load_catalog()


# Cases given as --set flags: the defaults (the guide's two nodes), and the preparation Job (off by default).
SET_CASES = {"defaults": (), "prepare-job": ("--set", "ppo-job.prepare.enabled=true")}
CASES = [*SET_CASES, "h800-80g-x8"]


def values_args(case: str, tmp_path: Path) -> tuple[str, ...]:
    """A case's --set flags, or a shape's values rendered for three nodes."""
    if case in SET_CASES:
        return SET_CASES[case]
    values = tmp_path / f"{case}.yaml"
    values.write_text(render_shape(CATALOG.shapes[case], CATALOG.models["qwen2.5-0.5b"], RunShape(nodes=3)))
    return ("-f", str(values))


def pod_templates(documents: list[dict]) -> dict[str, dict]:
    """Pod template labels by where they are: the RayCluster's head and worker groups, the Jobs, the Pods."""
    found = {}
    for document in documents:
        kind, name = document["kind"], document["metadata"]["name"]
        if kind == "RayCluster":
            found[f"{name}/head"] = document["spec"]["headGroupSpec"]["template"]["metadata"].get("labels", {})
            for group in document["spec"].get("workerGroupSpecs", []):
                found[f"{name}/{group['groupName']}"] = group["template"]["metadata"].get("labels", {})
        elif kind == "Job":
            found[f"Job/{name}"] = document["spec"]["template"]["metadata"].get("labels", {})
        elif kind == "Pod":
            found[f"Pod/{name}"] = document["metadata"].get("labels", {})
    return found


@pytest.mark.parametrize("case", CASES)
def test_every_pod_that_speaks_to_ray_carries_the_admitted_labels(helm, case, tmp_path):
    result = helm_cli.template(helm, *values_args(case, tmp_path))
    assert result.returncode == 0, result.output
    documents = result.documents()
    policy = next(d for d in documents if d["kind"] == "NetworkPolicy")
    cluster = next(d for d in documents if d["kind"] == "RayCluster")
    # KubeRay labels every pod of a RayCluster ray.io/cluster=<its name>: that is what the policy guards.
    assert policy["spec"]["podSelector"]["matchLabels"] == {"ray.io/cluster": cluster["metadata"]["name"]}
    admitted = policy["spec"]["ingress"][0]["from"][0]["podSelector"]["matchLabels"]
    assert admitted, "the policy's first rule must name the release's pods"
    templates = pod_templates(documents)
    ray_groups = [where for where in templates if where.startswith(f"{cluster['metadata']['name']}/")]
    assert len(ray_groups) >= 2, f"{case}: no worker group to check: {ray_groups}"
    missing = {where: labels for where, labels in templates.items() if not admitted.items() <= labels.items()}
    assert missing == {}, f"pods the policy would cut off from Ray (needs {admitted})"


@pytest.mark.parametrize("case", CASES)
def test_every_pod_template_carries_the_releases_selector_labels(helm, case, tmp_path):
    """What selects the release's pods (kubectl -l, the tests' release_pods, a user's policies):
    app.kubernetes.io/name and /instance, and a component, on the Ray pods as on the others."""
    result = helm_cli.template(helm, *values_args(case, tmp_path), release="team")
    assert result.returncode == 0, result.output
    for where, labels in pod_templates(result.documents()).items():
        assert labels.get("app.kubernetes.io/name") == "verl-ppo", where
        assert labels.get("app.kubernetes.io/instance") == "team", where
        assert labels.get("app.kubernetes.io/component"), where


@pytest.mark.parametrize("override, field", [
    ("namespace: Ray_System", "raycluster.networkPolicy.kubeRayOperator.namespace"),
    ("podLabels: {'bad key': x}", "raycluster.networkPolicy.kubeRayOperator.podLabels"),
])
def test_an_operator_peer_the_api_would_refuse_is_refused_by_the_schema(helm, tmp_path, override, field):
    """A namespace or label the API refuses would fail the install; Helm's schema check names the field first."""
    values = tmp_path / "operator.yaml"
    values.write_text("global: {mode: RayJob}\n"
                      f"raycluster:\n  networkPolicy:\n    kubeRayOperator:\n      {override}\n")
    result = helm_cli.template(helm, "-f", str(values))
    assert result.returncode != 0
    assert field.rsplit(".", 1)[-1] in result.output, result.output
