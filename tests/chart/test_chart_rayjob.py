"""Tier 2: RayJob mode (global.mode=RayJob) renders one ray.io/v1 RayJob, valid against KubeRay's RayJob CRD,
whose cluster spec is the RayCluster mode's (one named template builds both) and whose submitter pod is the
submitter Job's; queue labels land on whichever object Kueue manages."""

from __future__ import annotations

import copy
import re
from collections import Counter

import pytest

from support import helm as helm_cli
from support.tools import ROOT

RAYJOB = ["--set", "global.mode=RayJob"]
SHAPES = sorted((ROOT / "values").glob("*.yaml"))


def render(helm, validator, *args: str) -> list[dict]:
    return helm_cli.rendered_valid(helm, validator, *args)


def only(documents: list[dict], kind: str) -> dict:
    found = [doc for doc in documents if doc["kind"] == kind]
    assert len(found) == 1, [doc["kind"] for doc in documents]
    return found[0]


def without_rayjob_label(spec: dict) -> dict:
    spec = copy.deepcopy(spec)
    for template in [spec["headGroupSpec"]["template"]] + [g["template"] for g in spec["workerGroupSpecs"]]:
        assert template["metadata"]["labels"].pop("verl-ppo.io/ray-job") == "verl-ppo"
    return spec


@pytest.mark.parametrize("path", SHAPES, ids=[p.stem for p in SHAPES])
def test_every_shape_renders_a_valid_rayjob_and_no_long_lived_cluster(helm, validator, path):
    documents = render(helm, validator, "-f", str(path), *RAYJOB)
    kinds = Counter(doc["kind"] for doc in documents)
    assert kinds["RayJob"] == 1 and kinds["RayCluster"] == 0
    # KubeRay creates the submitter Job; its finalizer stops the run on deletion (no stop hook, no Job RBAC):
    # the one ServiceAccount is the Ray pods' own, without a token.
    assert kinds["Job"] == 0 and kinds["Role"] == 0
    accounts = [doc for doc in documents if doc["kind"] == "ServiceAccount"]
    tokens = [(a["metadata"]["name"], a.get("automountServiceAccountToken")) for a in accounts]
    assert tokens == [("verl-ppo-ray", False)]
    assert kinds["ConfigMap"] >= 1 and kinds["NetworkPolicy"] == 1


def test_the_rayjob_embeds_the_rayclusters_spec_and_the_submitter_jobs_pod(helm, validator):
    cluster_mode = render(helm, validator, "-f", str(ROOT / "values" / "h800-80g-x8.yaml"))
    job_mode = render(helm, validator, "-f", str(ROOT / "values" / "h800-80g-x8.yaml"), *RAYJOB)
    rayjob = only(job_mode, "RayJob")
    assert without_rayjob_label(rayjob["spec"]["rayClusterSpec"]) == only(cluster_mode, "RayCluster")["spec"]
    submitter_job = next(doc for doc in cluster_mode if doc["kind"] == "Job" and "helm.sh/hook" not in
                         (doc["metadata"].get("annotations") or {}))
    ours, theirs = rayjob["spec"]["submitterPodTemplate"]["spec"], submitter_job["spec"]["template"]["spec"]
    assert ours["containers"][0]["command"] == theirs["containers"][0]["command"] == [
        "python3", "/etc/verl-ppo/submitter.py"]
    assert ours["volumes"] == theirs["volumes"]
    # KubeRay's RAY_JOB_SUBMISSION_ID names the run: no Job-name prefix, and no API token (KubeRay stops the run).
    names = {env["name"] for env in ours["containers"][0]["env"]}
    assert "VERL_PPO_SUBMISSION_PREFIX" not in names and "RAY_DASHBOARD_URL" in names
    assert ours["automountServiceAccountToken"] is False and "serviceAccountName" not in ours


def test_run_attempts_and_deletion_settings(helm, validator):
    documents = render(helm, validator, *RAYJOB, "--set", "ppo-job.submitter.maxAttempts=4",
                       "--set", "ppo-job.submitter.backoffLimit=1",
                       "--set", "ppo-job.rayJob.ttlSecondsAfterFinished=300",
                       "--set", "ppo-job.rayJob.activeDeadlineSeconds=86400",
                       "--set", "ppo-job.rayJob.preRunningDeadlineSeconds=3600")
    spec = only(documents, "RayJob")["spec"]
    assert spec["submissionMode"] == "K8sJobMode"
    assert spec["backoffLimit"] == 3 and spec["submitterConfig"] == {"backoffLimit": 1}
    assert spec["shutdownAfterJobFinishes"] is True and spec["ttlSecondsAfterFinished"] == 300
    assert spec["activeDeadlineSeconds"] == 86400 and spec["preRunningDeadlineSeconds"] == 3600


def test_deletion_rules_replace_shutdown(helm, validator, tmp_path):
    values = tmp_path / "rules.yaml"
    values.write_text("""
global: {mode: RayJob}
ppo-job:
  rayJob:
    shutdownAfterJobFinishes: false
    deletionStrategy:
      deletionRules:
        - {policy: DeleteWorkers, condition: {jobStatus: FAILED, ttlSeconds: 0}}
        - {policy: DeleteCluster, condition: {jobStatus: FAILED, ttlSeconds: 600}}
        - {policy: DeleteCluster, condition: {jobStatus: SUCCEEDED, ttlSeconds: 0}}
""")
    spec = only(render(helm, validator, "-f", str(values)), "RayJob")["spec"]
    assert spec["shutdownAfterJobFinishes"] is False and "ttlSecondsAfterFinished" not in spec
    assert [rule["policy"] for rule in spec["deletionStrategy"]["deletionRules"]] == [
        "DeleteWorkers", "DeleteCluster", "DeleteCluster"]


@pytest.mark.parametrize("mode,kind", [("RayCluster", "RayCluster"), ("RayJob", "RayJob")])
def test_queue_labels_go_on_the_object_kueue_manages(helm, validator, mode, kind):
    documents = render(helm, validator, "--set", f"global.mode={mode}", "--set", "raycluster.queue.kueue=team-a",
                       "--set", "raycluster.queue.workloadPriorityClass=research-high")
    labels = only(documents, kind)["metadata"]["labels"]
    assert labels["kueue.x-k8s.io/queue-name"] == "team-a"
    assert labels["kueue.x-k8s.io/priority-class"] == "research-high"
    unqueued = only(render(helm, validator, "--set", f"global.mode={mode}"), kind)["metadata"]["labels"]
    assert not [key for key in unqueued if key.startswith("kueue.x-k8s.io/")]


def test_policy_and_monitors_select_the_rayjobs_pods(helm, validator):
    documents = render(helm, validator, *RAYJOB)
    spec = only(documents, "RayJob")["spec"]["rayClusterSpec"]
    pod_labels = spec["headGroupSpec"]["template"]["metadata"]["labels"]
    selector = only(documents, "NetworkPolicy")["spec"]["podSelector"]["matchLabels"]
    assert selector == {"verl-ppo.io/ray-job": "verl-ppo"} and selector.items() <= pod_labels.items()
    for monitor in (doc for doc in documents if doc["kind"] == "PodMonitor"):
        assert monitor["spec"]["selector"]["matchLabels"]["verl-ppo.io/ray-job"] == "verl-ppo"


def test_notes_name_the_rayjob_and_the_queue():
    notes = helm_cli.notes(*RAYJOB, "--set", "raycluster.queue.kueue=team-a")
    assert "kubectl -n training get rayjob verl-ppo" in notes
    assert "kubectl -n training logs -f job/verl-ppo" in notes
    assert 'LocalQueue "team-a" holds the RayJob suspended' in notes and "get workloads" in notes


INGRESS = ["--set", "raycluster.ingress.enabled=true", "--set", "raycluster.ingress.className=nginx",
           "--set", "raycluster.ingress.accessControl.sourceRanges={10.0.0.0/8}",
           "--set", "raycluster.ingress.accessControl.basicAuthSecret=dashboard-users",
           "--set-json", 'raycluster.networkPolicy.dashboardFrom=[{"namespaceSelector":{"matchLabels":'
                         '{"kubernetes.io/metadata.name":"ingress-nginx"}}}]']


def dashboard_users(documents: list[dict]) -> tuple[str, str]:
    """The Service the dashboard Ingress routes to, and the URL the helm test pod checks."""
    ingress = only(documents, "Ingress")
    backend = ingress["spec"]["rules"][0]["http"]["paths"][0]["backend"]["service"]
    test_pod = next(doc for doc in documents if doc["kind"] == "Pod"
                    and doc["metadata"].get("annotations", {}).get("helm.sh/hook") == "test")
    env = {e["name"]: e.get("value") for e in test_pod["spec"]["containers"][0]["env"]}
    return backend["name"], env["RAY_DASHBOARD_URL"]


def test_the_dashboard_goes_through_a_head_service_the_chart_renders(helm, validator):
    # KubeRay's <RayJob>-head-svc selects by app.kubernetes.io/name: kuberay, a label the chart's pods do not
    # carry: the Ingress, helm test and NOTES name the chart's own Service, selecting the run's head.
    documents = render(helm, validator, *RAYJOB, *INGRESS)
    name, url = dashboard_users(documents)
    assert url == f"http://{name}.training.svc:8265"
    (service,) = [doc for doc in documents if doc["kind"] == "Service" and doc["metadata"]["name"] == name]
    # Not a name KubeRay derives: its head Service, or <RayJob>-<5 random characters>[-...] of its clusters.
    assert name != "verl-ppo-head-svc" and not re.fullmatch(r"verl-ppo-[a-z0-9]{5}(-.*)?", name), name
    assert service["spec"]["type"] == "ClusterIP"
    spec = only(documents, "RayJob")["spec"]["rayClusterSpec"]
    head = spec["headGroupSpec"]["template"]
    # KubeRay adds ray.io/node-type to each pod it creates from a group's template.
    head_labels = {**head["metadata"]["labels"], "ray.io/node-type": "head"}
    selector = service["spec"]["selector"]
    assert selector.items() <= head_labels.items(), selector
    for group in spec["workerGroupSpecs"]:
        worker_labels = {**group["template"]["metadata"]["labels"], "ray.io/node-type": "worker"}
        assert not selector.items() <= worker_labels.items()
    # Each port a named port of the head container, the dashboard's where the Ingress and the test pod go.
    head_ports = {p["name"]: p["containerPort"] for p in head["spec"]["containers"][0]["ports"]}
    ports = {p["name"]: (p["port"], p["targetPort"]) for p in service["spec"]["ports"]}
    assert ports == {"gcs-server": (6379, "gcs-server"), "dashboard": (8265, "dashboard"), "client": (10001, "client")}
    assert all(head_ports[target] == port for port, target in ports.values())
    # The policy covers the pods behind it: the Ingress controller's peers reach the dashboard port.
    policy = only(documents, "NetworkPolicy")
    assert policy["spec"]["podSelector"]["matchLabels"].items() <= selector.items()
    assert {"ports": [{"port": 8265}], "from": [{"namespaceSelector": {"matchLabels": {
        "kubernetes.io/metadata.name": "ingress-nginx"}}}]} in policy["spec"]["ingress"]
    notes = helm_cli.notes(*RAYJOB)
    assert f"port-forward svc/{name} 8265:8265" in notes


def test_a_published_head_service_keeps_its_type_in_rayjob_mode(helm, validator):
    documents = render(helm, validator, *RAYJOB, "--set", "raycluster.head.serviceType=NodePort",
                       "--set", "raycluster.head.allowUnauthenticatedService=true")
    (service,) = [doc for doc in documents if doc["kind"] == "Service"
                  and doc["metadata"]["labels"]["app.kubernetes.io/component"] == "ray-head"]
    assert service["spec"]["type"] == "NodePort"


def test_raycluster_mode_uses_kuberays_head_service(helm, validator):
    documents = render(helm, validator, *INGRESS)
    assert dashboard_users(documents) == ("verl-ppo-head-svc", "http://verl-ppo-head-svc.training.svc:8265")
    assert not [doc for doc in documents if doc["kind"] == "Service"
                and doc["metadata"]["labels"]["app.kubernetes.io/component"] == "ray-head"]
