"""Tier 6: where KubeRay's operator runs, looked up (raycluster.networkPolicy.kubeRayOperator.namespace empty). In
RayJob mode the NetworkPolicy admits the operator's pods to the head's dashboard port; the chart finds them with
`lookup` against the real apiserver, as an operator's install leaves them (namespace kuberay-system, KubeRay's chart's
labels), and NOTES says where it found them. A user who may not list pods in every namespace cannot look: Helm's
lookup then fails the render with the apiserver's refusal (Forbidden is no "not found"), so the fix is the value."""

from __future__ import annotations

import yaml
from kubernetes import client

from support.tools import helm_binaries
from lab.localcluster import processes
from lab.localcluster.release import CHART

OPERATOR_NAMESPACE = "kuberay-system"
OPERATOR_LABELS = {"app.kubernetes.io/name": "kuberay-operator", "app.kubernetes.io/component": "kuberay-operator"}
RAYJOB = ["--set", "global.mode=RayJob"]


def operator_peers(manifest: str) -> list[dict]:
    """The peers the release's NetworkPolicy admits to the dashboard port through the operator's rule."""
    manifest = manifest.split("MANIFEST:", 1)[-1].split("\nNOTES:", 1)[0]  # helm install's output: the objects only
    for document in yaml.safe_load_all(manifest):
        if document and document.get("kind") == "NetworkPolicy" and document["metadata"]["name"].endswith("-ray"):
            return [peer for rule in document["spec"]["ingress"] for peer in rule.get("from", [])
                    if "namespaceSelector" in peer and "podSelector" in peer]
    raise AssertionError("no NetworkPolicy of the Ray pods")


def dry_run(helm, *args: str):
    """helm install --dry-run=server: the templates render against the cluster (lookup reads it), nothing is made."""
    return helm.run("install", "lookup", str(CHART), "--namespace", "default", "--dry-run=server", *RAYJOB, *args,
                    check=False)


def test_the_operator_is_found_where_its_pods_run_and_notes_say_so(local_cluster):
    core = client.CoreV1Api(local_cluster.api)
    core.create_namespace({"metadata": {"name": OPERATOR_NAMESPACE}})
    pod = {"metadata": {"name": "kuberay-operator-0", "labels": OPERATOR_LABELS},
           "spec": {"containers": [{"name": "operator", "image": "quay.io/kuberay/operator:v1.6.2"}]}}
    try:
        core.create_namespaced_pod(OPERATOR_NAMESPACE, pod)
        for binary in ("helm3", "helm4"):
            helm = local_cluster.helm(helm_binaries()[binary])
            result = dry_run(helm)
            assert result.returncode == 0, result.stderr
            peers = operator_peers(result.stdout)
            assert peers == [{"namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": OPERATOR_NAMESPACE}},
                              "podSelector": {"matchLabels": OPERATOR_LABELS}}], (binary, peers)
            assert f"from namespace {OPERATOR_NAMESPACE} (where its pods run)" in result.stdout, result.stdout
            # The value, when set, wins over what the cluster shows.
            chosen = dry_run(helm, "--set", "raycluster.networkPolicy.kubeRayOperator.namespace=ray-system")
            assert chosen.returncode == 0, chosen.stderr
            assert operator_peers(chosen.stdout)[0]["namespaceSelector"]["matchLabels"] == {
                "kubernetes.io/metadata.name": "ray-system"}
        # A pod posing as the operator in another namespace: the chart admits neither and names both.
        core.create_namespaced_pod("default", {**pod, "metadata": {"name": "posing", "labels": OPERATOR_LABELS}})
        refused = dry_run(local_cluster.helm(helm_binaries()["helm4"]))
        assert refused.returncode != 0
        field = 'raycluster.networkPolicy.kubeRayOperator.namespace="": is empty'
        assert f"{field} and pods with the KubeRay operator's labels run in 2 namespaces (default, " \
               f"{OPERATOR_NAMESPACE})" in refused.stderr, refused.stderr
    finally:
        # Gone at once (no grace period), not left to the namespace's deletion: the next case sees no operator pods.
        for found in core.list_pod_for_all_namespaces(label_selector="app.kubernetes.io/name=kuberay-operator").items:
            core.delete_namespaced_pod(found.metadata.name, found.metadata.namespace, grace_period_seconds=0)
        processes.wait_for("the operator's pods gone", lambda: not core.list_pod_for_all_namespaces(
            label_selector="app.kubernetes.io/name=kuberay-operator").items, 60)
        core.delete_namespace(OPERATOR_NAMESPACE)


def test_without_the_operators_pods_notes_name_the_namespace_assumed(local_cluster):
    result = dry_run(local_cluster.helm(helm_binaries()["helm4"]))
    assert result.returncode == 0, result.stderr
    assert operator_peers(result.stdout)[0]["namespaceSelector"]["matchLabels"] == {
        "kubernetes.io/metadata.name": "default"}
    assert "from namespace default, assumed" in result.stdout
    assert "--set raycluster.networkPolicy.kubeRayOperator.namespace=<its namespace>" in result.stdout


def test_a_user_who_may_not_list_pods_everywhere_is_told_by_the_apiserver(local_cluster):
    """Helm's lookup turns only "not found" into nothing: Forbidden fails the render, naming the right it lacks."""
    helm = local_cluster.helm(helm_binaries()["helm4"])
    result = dry_run(helm, "--kube-as-user", "alice")
    assert result.returncode != 0
    assert "pods is forbidden" in result.stderr and "cannot list resource \"pods\"" in result.stderr, result.stderr
