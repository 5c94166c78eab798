"""The default values reproduce every element of the vendor guide's RayCluster and submit command
(copies in tests/data/, taken verbatim from the guide). Deliberate differences are listed and asserted."""

import json
import shlex
from pathlib import Path

import pytest
import yaml

from support import helm as helm_cli

DATA = Path(__file__).resolve().parents[1] / "data"
SEED_CLUSTER = yaml.safe_load((DATA / "seed-raycluster.yaml").read_text())


def seed_overrides() -> dict[str, str]:
    text = (DATA / "seed-command.sh").read_text().replace("\\\n", " ")
    words = shlex.split(text.split("ray job submit", 1)[1])
    command = words[words.index("--") + 1:]
    assert command[:3] == ["python3", "-m", "verl.trainer.main_ppo"]
    return dict(word.split("=", 1) for word in command[3:])


@pytest.fixture(scope="module")
def rendered(request):
    from support.tools import helm_binaries

    result = helm_cli.template(helm_binaries()["helm3"], release="verl-ppo")
    assert result.returncode == 0, result.output
    return result.documents()


@pytest.fixture(scope="module")
def cluster(rendered):
    return next(doc for doc in rendered if doc["kind"] == "RayCluster")


def rendered_overrides(rendered) -> tuple[list[str], dict[str, str]]:
    config = next(doc for doc in rendered if doc["kind"] == "ConfigMap" and "job.json" in doc["data"])
    words = shlex.split(json.loads(config["data"]["job.json"])["entrypoint"])
    return words[:3], dict(word.split("=", 1) for word in words[3:])


def same_value(seed: str, ours: str) -> bool:
    """Hydra reads both the same way: 1e-6 == 1e-06, ['console'] == ["console"]."""
    return yaml.safe_load(seed) == yaml.safe_load(ours) or str(yaml.safe_load(seed)) == str(yaml.safe_load(ours))


def test_every_override_of_the_seed_command_is_rendered_with_its_value(rendered):
    program, ours = rendered_overrides(rendered)
    assert program == ["python3", "-m", "verl.trainer.main_ppo"]
    for key, seed_value in seed_overrides().items():
        assert key in ours, f"{key} missing from the rendered command"
        if key == "actor_rollout_ref.actor.optim.lr" or key == "critic.optim.lr":
            assert float(ours[key]) == float(seed_value)
        else:
            assert same_value(seed_value, ours[key]), (key, seed_value, ours[key])


def test_additions_make_the_run_safe(rendered):
    _, ours = rendered_overrides(rendered)
    assert ours["trainer.default_local_dir"] == "/data/checkpoints/verl-ppo/gsm8k"  # not Ray's temp dir
    assert ours["trainer.resume_mode"] == "auto"
    assert ours["actor_rollout_ref.rollout.name"] == "vllm"  # mandatory since veRL 0.6
    assert not any(key.startswith(("+", "~")) for key in ours)


def _container(group: dict) -> dict:
    return group["template"]["spec"]["containers"][0]


# One deliberate departure: the seed's hook lives in the vendor image; the chart ships its own (a ConfigMap on
# every node's PYTHONPATH), which works in any image and leaves APMPlus' tracer provider in place.
CHART_HOOK = "verl_ppo_tracing:setup_tracing"


def as_charted(params: dict) -> dict:
    return {**params, "tracing-startup-hook": CHART_HOOK} if "tracing-startup-hook" in params else params


@pytest.mark.parametrize("group", ["head", "worker"])
def test_ray_nodes_match_the_seed(cluster, group):
    seed_spec, our_spec = SEED_CLUSTER["spec"], cluster["spec"]
    seed_group = seed_spec["headGroupSpec"] if group == "head" else seed_spec["workerGroupSpecs"][0]
    our_group = our_spec["headGroupSpec"] if group == "head" else our_spec["workerGroupSpecs"][0]
    seed_container, our_container = _container(seed_group), _container(our_group)
    assert our_container["name"] == seed_container["name"]
    assert our_container["image"] == seed_container["image"]
    assert our_container["imagePullPolicy"] == seed_container["imagePullPolicy"]
    for kind in ("requests", "limits"):
        seed_resources = {k: str(v) for k, v in seed_container["resources"][kind].items()}
        assert {k: str(v) for k, v in our_container["resources"][kind].items()} == seed_resources
    assert our_container["resources"]["requests"] == our_container["resources"]["limits"]
    our_env = {e["name"]: e.get("value") for e in our_container["env"]}
    # The chart's own tracing hook goes on PYTHONPATH after the seed's directory (see CHART_HOOK).
    assert our_env["PYTHONPATH"].split(":")[0] == "/workspace/verl"
    for env in seed_container["env"]:
        if env["name"] != "PYTHONPATH":
            assert our_env[env["name"]] == env["value"]
    mounts = {m["mountPath"]: m["name"] for m in our_container["volumeMounts"]}
    volumes = {v["name"]: v for v in our_group["template"]["spec"]["volumes"]}
    assert volumes[mounts["/tmp/ray"]]["emptyDir"] == {}
    assert "persistentVolumeClaim" in volumes[mounts["/data"]]
    annotations = our_group["template"]["metadata"]["annotations"]
    assert annotations == {**annotations, **seed_group["template"]["metadata"]["annotations"]}
    assert our_group["rayStartParams"] == {**our_group["rayStartParams"], **as_charted(seed_group["rayStartParams"])}


def test_head_service_and_start_params_match(cluster):
    seed_head, our_head = SEED_CLUSTER["spec"]["headGroupSpec"], cluster["spec"]["headGroupSpec"]
    assert our_head["serviceType"] == seed_head["serviceType"] == "ClusterIP"
    assert our_head["rayStartParams"] == as_charted(seed_head["rayStartParams"])
    assert cluster["apiVersion"] == SEED_CLUSTER["apiVersion"]


def test_worker_group_matches_with_fixed_replicas(cluster):
    seed_group, our_group = SEED_CLUSTER["spec"]["workerGroupSpecs"][0], cluster["spec"]["workerGroupSpecs"][0]
    assert our_group["groupName"] == seed_group["groupName"]
    assert our_group["replicas"] == seed_group["replicas"]
    # Deliberate: min = max = replicas. The guide's maxReplicas 3 would let the autoscaler add
    # nodes that trainer.nnodes does not count.
    assert our_group["minReplicas"] == our_group["maxReplicas"] == seed_group["replicas"]


def test_shared_claim_mounted_everywhere(rendered, cluster):
    claim = next(doc for doc in rendered if doc["kind"] == "PersistentVolumeClaim")
    assert claim["spec"]["accessModes"] == ["ReadWriteMany"]
    for group in [cluster["spec"]["headGroupSpec"], *cluster["spec"]["workerGroupSpecs"]]:
        names = [v["persistentVolumeClaim"]["claimName"] for v in group["template"]["spec"]["volumes"]
                 if "persistentVolumeClaim" in v]
        assert names == [claim["metadata"]["name"]]
