"""Tier 2: values arrive where they land as given. Shell words of KubeRay's `ray start` line, exact numbers,
credentials by Secret reference, the Ray pods' least privilege, and every Service inside a NetworkPolicy."""

from __future__ import annotations

import json
import shlex

from support import helm as helm_cli


def documents(helm, *args: str) -> list[dict]:
    result = helm_cli.template(helm, *args)
    assert result.returncode == 0, result.output
    return result.documents()


def ray_cluster(docs: list[dict]) -> dict:
    return next(d for d in docs if d["kind"] == "RayCluster")


def ray_start_words(params: dict[str, str]) -> list[str]:
    """KubeRay's own joining (pod.go convertParamMap: ` --key=value`, true as a bare switch), read back by a shell."""
    line = "".join(f" --{k} " if v.lower() == "true" else f" --{k}={v} " for k, v in sorted(params.items()))
    return shlex.split(f"ray start{line}")


def test_ray_start_values_are_one_shell_word_each(helm):
    docs = documents(helm, "--set-string", "raycluster.head.rayStartParams.num-cpus=8; touch /tmp/x",
                     "--set-string", "raycluster.worker.rayStartParams.node-name=it's",
                     "--set", "raycluster.head.rayStartParams.disable-usage-stats=true")
    cluster = ray_cluster(docs)
    head = ray_start_words(cluster["spec"]["headGroupSpec"]["rayStartParams"])
    assert "--num-cpus=8; touch /tmp/x" in head and "--disable-usage-stats" in head
    assert "--dashboard-host=0.0.0.0" in head  # safe words stay bare, as KubeRay reads some of them itself
    assert "--node-name=it's" in ray_start_words(cluster["spec"]["workerGroupSpecs"][0]["rayStartParams"])


def test_numbers_from_a_values_file_render_exactly(helm, tmp_path):
    values = tmp_path / "numbers.yaml"
    values.write_text("raycluster:\n  nccl: {NCCL_BUFFSIZE: 8388608}\n"
                      "  head:\n    rayStartParams: {object-store-memory: 100000000000}\n"
                      "    resources: {memory: 107374182400}\n"
                      "ppo-job:\n  runtimeEnv: {env: {BIG: 12345678}}\n  submitter: {waitTimeoutSeconds: 1000000}\n"
                      "  prepare: {enabled: true, runAsUser: 1000680000, runAsGroup: 1000680000}\n")
    docs = documents(helm, "-f", str(values))
    head = ray_cluster(docs)["spec"]["headGroupSpec"]
    container = head["template"]["spec"]["containers"][0]
    assert head["rayStartParams"]["object-store-memory"] == "100000000000"
    assert {"name": "NCCL_BUFFSIZE", "value": "8388608"} in container["env"]
    assert container["resources"]["limits"]["memory"] == "107374182400"
    spec_map = next(d for d in docs if d["kind"] == "ConfigMap" and "job.json" in d.get("data", {}))
    job_json = json.loads(spec_map["data"]["job.json"])
    assert job_json["runtime_env"]["env_vars"]["BIG"] == "12345678"
    pods = [d["spec"]["template"]["spec"] for d in docs if d["kind"] == "Job"]
    env = pods[0]["containers"][0]["env"] + pods[1]["containers"][0]["env"]
    assert {"name": "VERL_PPO_WAIT_TIMEOUT_SECONDS", "value": "1000000"} in env
    assert any(pod["securityContext"].get("runAsUser") == 1000680000 for pod in pods)


def test_ray_pods_least_privilege(helm):
    docs = documents(helm)
    cluster = ray_cluster(docs)
    account = next(d for d in docs if d["kind"] == "ServiceAccount" and d["metadata"]["name"] == "verl-ppo-ray")
    assert account["automountServiceAccountToken"] is False
    for template in [cluster["spec"]["headGroupSpec"]["template"], cluster["spec"]["workerGroupSpecs"][0]["template"]]:
        pod = template["spec"]
        assert pod["securityContext"]["seccompProfile"] == {"type": "RuntimeDefault"}
        assert pod["serviceAccountName"] == "verl-ppo-ray" and pod["automountServiceAccountToken"] is False
        context = pod["containers"][0]["securityContext"]
        assert context["capabilities"] == {"drop": ["ALL"]} and context["allowPrivilegeEscalation"] is False


def test_only_the_autoscaler_head_keeps_a_token(helm):
    cluster = ray_cluster(documents(helm, "--set", "raycluster.worker.autoscaling.enabled=true",
                                    "--set", "raycluster.worker.autoscaling.maxReplicas=2"))
    head = cluster["spec"]["headGroupSpec"]["template"]["spec"]
    worker = cluster["spec"]["workerGroupSpecs"][0]["template"]["spec"]
    assert "serviceAccountName" not in head and "automountServiceAccountToken" not in head  # KubeRay's account
    assert worker["automountServiceAccountToken"] is False


def test_credentials_come_from_secrets(helm):
    cluster = ray_cluster(documents(helm, "--set", "raycluster.credentials.wandb.secretName=wandb",
                                    "--set", "raycluster.extraSecretEnv.MLFLOW_TRACKING_PASSWORD.secretName=mlflow",
                                    "--set", "raycluster.extraSecretEnv.MLFLOW_TRACKING_PASSWORD.key=pw"))
    env = {e["name"]: e for e in cluster["spec"]["workerGroupSpecs"][0]["template"]["spec"]["containers"][0]["env"]}
    assert env["WANDB_API_KEY"] == {"name": "WANDB_API_KEY",
                                    "valueFrom": {"secretKeyRef": {"name": "wandb", "key": "api-key"}}}
    assert env["MLFLOW_TRACKING_PASSWORD"]["valueFrom"]["secretKeyRef"] == {"name": "mlflow", "key": "pw"}
    assert "HF_TOKEN" not in env


def test_opted_in_head_service_is_reachable(helm):
    docs = documents(helm, "--set", "raycluster.head.serviceType=LoadBalancer",
                     "--set", "raycluster.head.allowUnauthenticatedService=true")
    policy = next(d for d in docs if d["kind"] == "NetworkPolicy" and d["metadata"]["name"] == "verl-ppo-ray")
    assert {"ports": [{"port": 6379}, {"port": 8265}, {"port": 10001}]} in policy["spec"]["ingress"]
    closed = next(d for d in documents(helm)
                  if d["kind"] == "NetworkPolicy" and d["metadata"]["name"] == "verl-ppo-ray")
    assert all("from" in rule or {"port": 8265} not in rule["ports"] for rule in closed["spec"]["ingress"])


def test_tensorboard_service_is_inside_a_policy(helm):
    base = ["--set", "global.tensorboard.enabled=true"]
    tensorboard = [d for d in documents(helm, *base) if d["kind"] == "NetworkPolicy" and
                   d["spec"]["podSelector"]["matchLabels"].get("app.kubernetes.io/component") == "tensorboard"]
    assert len(tensorboard) == 1 and tensorboard[0]["spec"]["ingress"] == [
        {"ports": [{"port": 6006}], "from": [{"podSelector": {"matchLabels": {"verl-ppo.io/release": "verl-ppo"}}}]}]
    peers = [{"namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": "ingress-nginx"}}}]
    behind_ingress = documents(helm, *base, "--set", "global.tensorboard.ingressPath=/tensorboard",
                               "--set", "raycluster.ingress.enabled=true",
                               "--set", "raycluster.ingress.accessControl.basicAuthSecret=users",
                               "--set-json", f"raycluster.networkPolicy.dashboardFrom={json.dumps(peers)}")
    ingress_policy = next(d for d in behind_ingress if d["kind"] == "NetworkPolicy"
                          and d["metadata"]["name"] == "verl-ppo-tensorboard-ingress")
    assert ingress_policy["spec"]["ingress"] == [{"ports": [{"port": 6006}], "from": peers}]


def test_chart_access_control_annotations_win(helm):
    """A user annotation on a key the chart sets is refused (test_bad_input); others merge under the chart's."""
    docs = documents(helm, "--set", "raycluster.ingress.enabled=true", "--set",
                     "raycluster.ingress.accessControl.sourceRanges={10.0.0.0/8}", "--set",
                     "raycluster.ingress.annotations.nginx\\.ingress\\.kubernetes\\.io/proxy-body-size=8m",
                     "--set", "raycluster.networkPolicy.dashboardFromAnywhere=true")
    annotations = next(d for d in docs if d["kind"] == "Ingress")["metadata"]["annotations"]
    assert annotations == {"nginx.ingress.kubernetes.io/whitelist-source-range": "10.0.0.0/8",
                           "nginx.ingress.kubernetes.io/proxy-body-size": "8m"}
