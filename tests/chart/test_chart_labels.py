"""Labels and environment from values never replace the chart's own: every pod template the chart renders
(head, workers, submitter, preparation Job, uninstall hook, helm test pod, TensorBoard, and the RayJob's
pods) keeps its selector labels and the release's pod label when values give the same keys (pod labels of
the head and workers, global.commonLabels), and keeps the variables the chart sets on the Ray pods. A label
from values that names no chart key still arrives."""

from __future__ import annotations

import re

import pytest

from support import helm as helm_cli

RELEASE = "verl-ppo"
# Every key the chart sets on some pod, each given a hostile value through values.
HOSTILE = {"app.kubernetes.io/name": "other", "app.kubernetes.io/instance": "other",
           "app.kubernetes.io/component": "other", "verl-ppo.io/release": "other", "verl-ppo.io/ray-job": "other",
           "app.kubernetes.io/managed-by": "other", "helm.sh/chart": "other"}
EVERY_POD = ("--set", "ppo-job.prepare.enabled=true", "--set", "global.tensorboard.enabled=true")


def hostile_args(*sections: str) -> list[str]:
    args = []
    for section in sections:
        for key, value in {**HOSTILE, "team": "research"}.items():
            args += ["--set", f"{section}.{key.replace('.', chr(92) + '.')}={value}"]
    return args


def pod_labels(documents: list[dict]) -> dict[str, dict]:
    """Labels of every pod template by where it is."""
    found = {}
    for document in documents:
        kind, name, spec = document["kind"], document["metadata"]["name"], document.get("spec", {})
        cluster = spec.get("rayClusterSpec", spec) if kind in ("RayCluster", "RayJob") else None
        if cluster is not None:
            found[f"{kind}/head"] = cluster["headGroupSpec"]["template"]["metadata"]["labels"]
            for group in cluster["workerGroupSpecs"]:
                found[f"{kind}/{group['groupName']}"] = group["template"]["metadata"]["labels"]
            if kind == "RayJob":
                found["RayJob/submitter"] = spec["submitterPodTemplate"]["metadata"]["labels"]
        elif kind in ("Job", "Deployment"):
            found[f"{kind}/{name}"] = spec["template"]["metadata"]["labels"]
        elif kind == "Pod":
            found[f"Pod/{name}"] = document["metadata"]["labels"]
    return found


def where(name: str) -> str:
    """A pod's place without the hash a Job's name carries (labels from values change the pod's text)."""
    return re.sub(r"-[0-9a-f]{8}$", "", name)


@pytest.mark.parametrize("mode", ["RayCluster", "RayJob"])
def test_user_labels_cannot_replace_the_charts_on_any_pod(helm, mode):
    plain = helm_cli.template(helm, *EVERY_POD, "--set", f"global.mode={mode}")
    hostile = helm_cli.template(helm, *EVERY_POD, "--set", f"global.mode={mode}",
                                *hostile_args("global.commonLabels", "raycluster.head.labels",
                                              "raycluster.worker.labels"))
    assert plain.returncode == 0 and hostile.returncode == 0, plain.output + hostile.output
    charts = {where(name): labels for name, labels in pod_labels(plain.documents()).items()}
    given = {where(name): labels for name, labels in pod_labels(hostile.documents()).items()}
    expected = {"RayCluster/head", "RayCluster/workergroup", "Pod/verl-ppo-test", "Job/verl-ppo-prepare",
                "Deployment/verl-ppo-tensorboard", "Job/verl-ppo-ppo-stop", "Job/verl-ppo-ppo-job"}
    if mode == "RayJob":
        expected = expected - {"RayCluster/head", "RayCluster/workergroup", "Job/verl-ppo-ppo-stop",
                               "Job/verl-ppo-ppo-job"} | {"RayJob/head", "RayJob/workergroup", "RayJob/submitter"}
    assert set(charts) == set(given) == expected, sorted(given)
    for name, own in charts.items():
        assert {"app.kubernetes.io/instance", "verl-ppo.io/release"} <= set(own), f"{name}: {own}"
        kept = {key: given[name].get(key) for key in own}
        assert kept == own, f"{name}: a label from values replaced the chart's: {kept}"
        assert given[name].get("team") == "research", f"{name}: global.commonLabels did not arrive"
    if mode == "RayJob":
        for name in ("RayJob/head", "RayJob/workergroup"):
            assert given[name]["verl-ppo.io/ray-job"] == RELEASE, given[name]


def test_common_labels_cannot_replace_the_charts_on_any_object(helm):
    result = helm_cli.template(helm, *EVERY_POD, *hostile_args("global.commonLabels"))
    assert result.returncode == 0, result.output
    for document in result.documents():
        labels = document["metadata"].get("labels", {})
        assert labels.get("helm.sh/chart", "").startswith(("verl-ppo", "raycluster", "ppo-job", "storage",
                                                           "observability")), document["metadata"]["name"]
        owned = {"app.kubernetes.io/name", "app.kubernetes.io/instance", "app.kubernetes.io/managed-by",
                 "helm.sh/chart"}
        assert owned <= set(labels) and "other" not in [labels[key] for key in owned], (document["kind"], labels)


def test_pod_text_is_unchanged_without_labels_from_values(helm):
    """Chart labels first, as before: a pod's text (hashed into the submitter Job's name) keeps its hash."""
    result = helm_cli.template(helm)
    job = next(d for d in result.documents() if d["kind"] == "Job" and "ppo-job-" in d["metadata"]["name"])
    assert list(job["spec"]["template"]["metadata"]["labels"]) == [
        "app.kubernetes.io/name", "app.kubernetes.io/instance", "app.kubernetes.io/component", "verl-ppo.io/release"]


def ray_env(documents: list[dict]) -> dict[str, list[dict]]:
    cluster = next(d for d in documents if d["kind"] == "RayCluster")["spec"]
    groups = {"head": cluster["headGroupSpec"], **{g["groupName"]: g for g in cluster["workerGroupSpecs"]}}
    return {name: group["template"]["spec"]["containers"][0]["env"] for name, group in groups.items()}


def test_ray_pods_keep_the_charts_variables_and_name_each_once(helm):
    """Every variable the chart sets is there once with the chart's value; the user's follow it."""
    result = helm_cli.template(helm, "--set", "raycluster.tracing.startupHook.enabled=true",
                               "--set", "raycluster.tracing.startupHook.otlpEndpoint=http://otel:4318",
                               "--set", "raycluster.credentials.wandb.secretName=wandb",
                               "--set", "raycluster.nccl.NCCL_DEBUG=INFO", "--set", "global.tensorboard.enabled=true",
                               "--set", "raycluster.env[0].name=MY_SETTING",
                               "--set-string", "raycluster.env[0].value=1")
    assert result.returncode == 0, result.output
    for group, env in ray_env(result.documents()).items():
        names = [entry["name"] for entry in env]
        assert len(names) == len(set(names)), f"{group}: a variable named twice: {names}"
        by_name = {entry["name"]: entry for entry in env}
        assert by_name["PYTHONPATH"]["value"].endswith(":/etc/verl-ppo/tracing"), by_name["PYTHONPATH"]
        assert by_name["WANDB_API_KEY"]["valueFrom"]["secretKeyRef"]["name"] == "wandb"
        assert names[-1] == "MY_SETTING", names


@pytest.mark.parametrize("where", ["raycluster.env[0]", "raycluster.head.env[0]", "raycluster.worker.env[0]"])
@pytest.mark.parametrize("name", ["PYTHONPATH", "TENSORBOARD_DIR", "OTEL_SERVICE_NAME", "RAY_PROMETHEUS_HOST",
                                  "RAY_GRACEFUL_SHUTDOWN_DRAIN_TIMEOUT_S", "NCCL_DEBUG", "WANDB_API_KEY"])
def test_a_variable_the_chart_sets_is_refused_in_every_env_list(helm, where, name):
    result = helm_cli.template(helm, "--set", "raycluster.nccl.NCCL_DEBUG=INFO",
                               "--set", "raycluster.credentials.wandb.secretName=wandb",
                               "--set", f"{where}.name={name}", "--set", f"{where}.valueFrom.configMapKeyRef.name=c",
                               "--set", f"{where}.valueFrom.configMapKeyRef.key=k")
    assert result.returncode != 0
    assert f"  - {where}={name}: would replace the {name} the chart sets" in result.stderr, result.stderr


@pytest.mark.parametrize("name", ["PYTHONPATH", "TENSORBOARD_DIR", "WANDB_API_KEY"])
def test_a_variable_the_chart_sets_is_refused_in_extra_secret_env(helm, name):
    result = helm_cli.template(helm, "--set", "raycluster.credentials.wandb.secretName=wandb",
                               "--set", f"raycluster.extraSecretEnv.{name}.secretName=s",
                               "--set", f"raycluster.extraSecretEnv.{name}.key=k")
    assert result.returncode != 0
    assert f"  - raycluster.extraSecretEnv.{name}={name}: would replace" in result.stderr, result.stderr


@pytest.mark.parametrize("mode", ["RayCluster", "RayJob"])
def test_common_labels_cannot_replace_the_queue_labels(helm, mode):
    """The queue a RayCluster or RayJob waits in is the chart's: global.commonLabels cannot move it."""
    queues = {"kueue.x-k8s.io/queue-name": "team-a", "volcano.sh/queue-name": "gpu", "ray.io/scheduler-name": "volcano"}
    args = ["--set", f"global.mode={mode}", "--set", "raycluster.queue.kueue=team-a",
            "--set", "raycluster.queue.volcano=gpu"]
    for key in queues:
        args += ["--set", f"global.commonLabels.{key.replace('.', chr(92) + '.')}=other"]
    result = helm_cli.template(helm, *args)
    assert result.returncode == 0, result.output
    scheduled = next(d for d in result.documents() if d["kind"] == mode)
    labels = scheduled["metadata"]["labels"]
    assert {key: labels.get(key) for key in queues} == queues, labels


def test_observabilitys_labels_stay_the_charts(helm):
    """Grafana's sidecar label on the dashboards and the chart's keys on the PodMonitors: commonLabels and the
    PodMonitors' additionalLabels arrive beside them, never over them."""
    result = helm_cli.template(helm, "--set-string", "global.commonLabels.grafana_dashboard=0",
                               "--set", "observability.podMonitor.additionalLabels.release=kube-prometheus-stack",
                               "--set",
                               "observability.podMonitor.additionalLabels.app\\.kubernetes\\.io/instance=other")
    assert result.returncode == 0, result.output
    dashboards = [d for d in result.documents() if d["kind"] == "ConfigMap" and "dashboard" in d["metadata"]["name"]]
    monitors = [d for d in result.documents() if d["kind"] == "PodMonitor"]
    assert dashboards and monitors
    assert {d["metadata"]["labels"]["grafana_dashboard"] for d in dashboards} == {"1"}
    for monitor in monitors:
        labels = monitor["metadata"]["labels"]
        assert labels["app.kubernetes.io/instance"] == RELEASE and labels["release"] == "kube-prometheus-stack", labels
