"""Tier 2: Ray's token authentication (global.rayAuth.tokenSecret). The token stays in its Secret: KubeRay's
authOptions name it for the Ray pods, and every pod of ours that calls the dashboard (the submitter, the uninstall
hook, the helm test pod) reads it from there as RAY_AUTH_TOKEN; it counts as the dashboard Ingress's access
control. The Ray head refusing requests without it: tests/ray/test_submitter_auth.py."""

from __future__ import annotations

import pytest

from support import helm as helm_cli

# The catalog's veRL image: not the chart's default, whose Ray predates the token (ppo-job's files/images.yaml).
IMAGE = ["--set", "global.image.repository=verlai/verl", "--set", "global.image.tag=vllm024.dev2"]
TOKEN = ["--set", "global.rayAuth.tokenSecret=ray-token", "--set", "raycluster.rayVersion=2.60.0", *IMAGE]
TOKEN_ENV = {"name": "RAY_AUTH_TOKEN", "valueFrom": {"secretKeyRef": {"name": "ray-token", "key": "auth_token"}}}
DASHBOARD_PEERS = ["--set-json", 'raycluster.networkPolicy.dashboardFrom=[{"ipBlock":{"cidr":"10.20.0.0/16"}}]']


def render(helm, validator, *args: str) -> list[dict]:
    return helm_cli.rendered_valid(helm, validator, *args)


def dashboard_callers(documents: list[dict]) -> dict[str, dict]:
    """The containers that run submitter.py (the run, --stop, --check), by the mode they run it in."""
    found = {}
    for doc in documents:
        spec = doc.get("spec", {})
        pod = spec.get("template", {}).get("spec") or spec.get("submitterPodTemplate", {}).get("spec") or spec
        for container in pod.get("containers", []) if isinstance(pod, dict) else []:
            command = container.get("command", [])
            if any(str(part).endswith("submitter.py") for part in command):
                found[command[-1] if command[-1].startswith("--") else "run"] = container
    return found


def test_the_token_reaches_kuberay_and_every_caller_of_the_dashboard_by_reference(helm, validator):
    documents = render(helm, validator, *TOKEN)
    cluster = next(d for d in documents if d["kind"] == "RayCluster")
    assert cluster["spec"]["authOptions"] == {"mode": "token", "secretName": "ray-token"}
    callers = dashboard_callers(documents)
    assert set(callers) == {"run", "--stop", "--check"}
    for container in callers.values():
        assert TOKEN_ENV in container["env"]
    # A reference only: the chart makes no Secret and no object carries a token's value.
    assert not any(d["kind"] == "Secret" for d in documents)


def test_rayjob_mode_gives_the_token_to_its_cluster_and_submitter(helm, validator):
    documents = render(helm, validator, "--set", "global.mode=RayJob", *TOKEN)
    rayjob = next(d for d in documents if d["kind"] == "RayJob")
    assert rayjob["spec"]["rayClusterSpec"]["authOptions"] == {"mode": "token", "secretName": "ray-token"}
    assert TOKEN_ENV in rayjob["spec"]["submitterPodTemplate"]["spec"]["containers"][0]["env"]


def test_without_a_token_nothing_is_set(helm, validator):
    documents = render(helm, validator)
    assert "authOptions" not in next(d for d in documents if d["kind"] == "RayCluster")["spec"]
    for container in dashboard_callers(documents).values():
        assert "RAY_AUTH_TOKEN" not in [entry["name"] for entry in container["env"]]


@pytest.mark.parametrize("version", ["", "2.49.2"])
def test_the_token_needs_a_ray_that_has_it(helm, version):
    result = helm_cli.template(helm, "--set", "global.rayAuth.tokenSecret=ray-token",
                               "--set", f"raycluster.rayVersion={version}")
    assert result.returncode != 0
    assert "raycluster.rayVersion=" in result.output and "must name a Ray of 2.52.0 or later" in result.output
    assert "--set raycluster.rayVersion=<the image's Ray version, 2.52.0 or later>" in result.output


def test_the_token_is_an_access_control_of_the_dashboard_ingress(helm, validator):
    ingress = ["--set", "raycluster.ingress.enabled=true", "--set", "raycluster.ingress.className=nginx",
               *DASHBOARD_PEERS]
    refused = helm_cli.template(helm, *ingress)
    assert refused.returncode != 0 and "raycluster.ingress.enabled=true: exposes the Ray dashboard" in refused.output
    assert "--set global.rayAuth.tokenSecret=<Secret>" in refused.output
    documents = render(helm, validator, *ingress, *TOKEN)
    assert any(d["kind"] == "Ingress" for d in documents)


def test_basic_auth_in_front_of_the_token_is_refused(helm):
    """Ray reads Authorization before X-Ray-Authorization: nginx's basic-auth header would reach Ray as a bad token."""
    result = helm_cli.template(helm, "--set", "raycluster.ingress.enabled=true", *DASHBOARD_PEERS, *TOKEN,
                               "--set", "raycluster.ingress.accessControl.basicAuthSecret=dashboard-users")
    assert result.returncode != 0
    assert "raycluster.ingress.accessControl.basicAuthSecret=dashboard-users" in result.output
    assert "Ray's token is the Ingress's access control" in result.output


def test_the_token_is_refused_on_the_charts_default_image_whose_ray_predates_it(helm):
    """The chart knows its default image's Ray (files/images.yaml): there the token would be ignored by Ray while the
    chart counted it as the Ingress's access control, whatever raycluster.rayVersion claims."""
    result = helm_cli.template(helm, "--set", "global.rayAuth.tokenSecret=ray-token",
                               "--set", "raycluster.rayVersion=2.60.0")
    assert result.returncode != 0
    assert "global.rayAuth.tokenSecret=ray-token: turns on Ray's token" in result.output
    assert "Ray <2.52.0" in result.output and "--set global.image.tag=<tag>" in result.output


@pytest.mark.parametrize(("where", "field"), [
    (["--set", "raycluster.env[0].name=RAY_AUTH_MODE", "--set", "raycluster.env[0].value=disabled"],
     "raycluster.env[0]"),
    (["--set", "raycluster.head.env[0].name=RAY_AUTH_TOKEN",
      "--set", "raycluster.head.env[0].valueFrom.secretKeyRef.name=other",
      "--set", "raycluster.head.env[0].valueFrom.secretKeyRef.key=t"], "raycluster.head.env[0]"),
    (["--set", "raycluster.worker.env[0].name=RAY_AUTH_TOKEN_PATH", "--set", "raycluster.worker.env[0].value=/tmp/t"],
     "raycluster.worker.env[0]"),
    (["--set", "raycluster.extraSecretEnv.RAY_AUTH_TOKEN.secretName=other",
      "--set", "raycluster.extraSecretEnv.RAY_AUTH_TOKEN.key=t"],
     "raycluster.extraSecretEnv.RAY_AUTH_TOKEN"),
    (["--set", "ppo-job.runtimeEnv.env.RAY_AUTH_MODE=disabled"], "ppo-job.runtimeEnv.env.RAY_AUTH_MODE"),
])
def test_the_tokens_variables_are_the_charts_in_every_env_list(helm, where, field):
    """KubeRay keeps what a container already has: a token variable from values would turn the token off or give the
    nodes another one. Refused by name, never merged; without the token no rule claims them for it."""
    result = helm_cli.template(helm, *TOKEN, *where)
    assert result.returncode != 0 and f"  - {field}=" in result.output, result.output
    assert "--set global.rayAuth.tokenSecret=''" in result.output
    assert "would replace Ray's token setting" not in helm_cli.template(helm, *where).output


def test_a_load_balancer_head_behind_the_token_is_accepted(helm, validator):
    """Ray checks the token on each port the head Service publishes (dashboard, GCS, client): no false refusal."""
    balancer = ["--set", "raycluster.head.serviceType=LoadBalancer"]
    refused = helm_cli.template(helm, *balancer)
    assert refused.returncode != 0 and "raycluster.head.serviceType=LoadBalancer" in refused.output
    assert "--set global.rayAuth.tokenSecret=<Secret>" in refused.output
    documents = render(helm, validator, *balancer, *TOKEN)
    cluster = next(d for d in documents if d["kind"] == "RayCluster")
    assert cluster["spec"]["headGroupSpec"]["serviceType"] == "LoadBalancer"


def test_the_tensorboard_path_needs_an_access_control_the_token_is_not(helm, validator):
    """The token guards Ray's dashboard alone: TensorBoard's path on the same Ingress needs one of the Ingress's own,
    or its opt-in."""
    tensorboard = ["--set", "raycluster.ingress.enabled=true", *DASHBOARD_PEERS, *TOKEN,
                   "--set", "global.tensorboard.enabled=true", "--set", "global.tensorboard.ingressPath=/tensorboard"]
    refused = helm_cli.template(helm, *tensorboard)
    assert refused.returncode != 0
    assert "global.tensorboard.ingressPath=/tensorboard: publishes TensorBoard" in refused.output
    assert "--set global.tensorboard.ingressAllowUnauthenticated=true" in refused.output
    for control in (["--set", "raycluster.ingress.accessControl.sourceRanges={10.0.0.0/8}"],
                    ["--set", "global.tensorboard.ingressAllowUnauthenticated=true"]):
        documents = render(helm, validator, *tensorboard, *control)
        ingress = next(d for d in documents if d["kind"] == "Ingress")
        assert "/tensorboard" in [path["path"] for path in ingress["spec"]["rules"][0]["http"]["paths"]]
