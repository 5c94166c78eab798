"""Tier 6: releases of the same name in two namespaces install side by side. PersistentVolumes are
cluster-scoped: the TOS volume of each release is named after its namespace, and each claim binds its own."""

from __future__ import annotations

from kubernetes import client

from generator import paths
from support.tools import helm_binaries
from lab.localcluster import processes
from lab.localcluster.release import CHART, create_namespace

RELEASE = "verl-ppo"
NAMESPACES = ("team-a", "team-b")
TOS = ["-f", str(paths.VALUES_DIR / "platforms" / "vke.yaml"), "--set", "storage.tos.bucket=training-data",
       "--set", "storage.tos.secretName=tos-credentials"]


def bound_volume(core: client.CoreV1Api, namespace: str) -> str | None:
    claim = core.read_namespaced_persistent_volume_claim(f"{RELEASE}-data", namespace)
    return claim.spec.volume_name if claim.status.phase == "Bound" else None


def test_same_release_name_in_two_namespaces(local_cluster):
    helm = local_cluster.helm(helm_binaries()["helm4"])
    core = client.CoreV1Api(local_cluster.api)
    try:
        for namespace in NAMESPACES:
            create_namespace(local_cluster.api, namespace)
            helm.run("install", RELEASE, str(CHART), "--namespace", namespace, *TOS)
        for namespace in NAMESPACES:
            processes.wait_for(f"claim of {namespace} bound", lambda n=namespace: bound_volume(core, n), 60)
        volumes = {namespace: bound_volume(core, namespace) for namespace in NAMESPACES}
        assert volumes == {namespace: f"{namespace}-{RELEASE}-data" for namespace in NAMESPACES}
        for namespace, volume in volumes.items():
            spec = core.read_persistent_volume(volume).spec
            assert spec.claim_ref.namespace == namespace and spec.csi.driver == "fsx.csi.volcengine.com"
            assert spec.csi.volume_handle == volume
    finally:
        for namespace in NAMESPACES:
            helm.run("uninstall", RELEASE, "--namespace", namespace, "--no-hooks", check=False)
            core.delete_namespace(namespace)
        for volume in core.list_persistent_volume().items:  # kept by helm.sh/resource-policy: keep
            if volume.spec.claim_ref and volume.spec.claim_ref.namespace in NAMESPACES:
                core.delete_persistent_volume(volume.metadata.name)
