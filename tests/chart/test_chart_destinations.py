"""Tier 2: values arrive where they land as given: shell words of KubeRay's `ray start` line, exact numbers.
Credentials by Secret reference, the Ray pods' least privilege and every Service inside a NetworkPolicy are
helm-unittest suites (charts/verl-ppo/tests/raycluster_test.yaml, networkpolicy_test.yaml, tensorboard_test.yaml)."""

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


