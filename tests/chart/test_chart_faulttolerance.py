"""Tier 2: KubeRay's GCS fault tolerance as an option (raycluster.gcsFaultTolerance): off by default; on, the
cluster spec (the RayCluster's, or a RayJob's rayClusterSpec: one template builds both) carries KubeRay's
gcsFaultToleranceOptions, valid against the pinned KubeRay CRDs, with the Redis password only as a Secret
reference and nothing of it on the `ray start` line or in the pods' environment."""

from __future__ import annotations

import json

import pytest

from support import helm as helm_cli

FT = ["--set", "raycluster.gcsFaultTolerance.enabled=true",
      "--set", "raycluster.gcsFaultTolerance.redisAddress=redis.ray-infra:6379"]
PASSWORD = ["--set", "raycluster.gcsFaultTolerance.passwordSecret.secretName=redis-auth",
            "--set", "raycluster.gcsFaultTolerance.passwordSecret.key=redis-password"]


def cluster_spec(helm, validator, *args: str) -> dict:
    documents = helm_cli.rendered_valid(helm, validator, *args)
    [owner] = [doc for doc in documents if doc["kind"] in ("RayCluster", "RayJob")]
    return owner["spec"] if owner["kind"] == "RayCluster" else owner["spec"]["rayClusterSpec"]


def test_off_by_default(helm, validator):
    assert "gcsFaultToleranceOptions" not in cluster_spec(helm, validator)


@pytest.mark.parametrize("mode", ["RayCluster", "RayJob"])
def test_on_the_redis_and_its_password_by_secret_reference(helm, validator, mode):
    spec = cluster_spec(helm, validator, *FT, *PASSWORD, "--set", f"global.mode={mode}")
    assert spec["gcsFaultToleranceOptions"] == {
        "redisAddress": "redis.ray-infra:6379",
        "redisPassword": {"valueFrom": {"secretKeyRef": {"name": "redis-auth", "key": "redis-password"}}}}
    head = spec["headGroupSpec"]
    # KubeRay adds what the head needs from these options: the chart puts no Redis setting of its own anywhere.
    containers = [c for group in [head] + spec["workerGroupSpecs"] for c in group["template"]["spec"]["containers"]]
    words = json.dumps([head["rayStartParams"]] + [c.get("env", []) for c in containers])
    assert "redis" not in words.lower(), words


def test_without_a_password_and_with_a_key_prefix(helm, validator):
    spec = cluster_spec(helm, validator, *FT, "--set", "raycluster.gcsFaultTolerance.externalStorageNamespace=team-a")
    assert spec["gcsFaultToleranceOptions"] == {"redisAddress": "redis.ray-infra:6379",
                                                "externalStorageNamespace": "team-a"}


def test_the_options_off_leave_the_other_settings_unused(helm, validator):
    """A Redis address without enabled is kept for later and renders nothing (the switch is the one fact)."""
    spec = cluster_spec(helm, validator, "--set", "raycluster.gcsFaultTolerance.redisAddress=redis.ray-infra:6379")
    assert "gcsFaultToleranceOptions" not in spec
