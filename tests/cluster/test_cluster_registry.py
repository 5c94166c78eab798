"""Tier 6: the signed package pushed to a real OCI registry on localhost (the CNCF distribution
registry) and installed from there with Helm 3 and Helm 4, the GPU shape read from the pulled
package as a user without this repository does (docs/releasing.md)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
import yaml

from generator import paths
from generator.catalog import load_catalog
from support.cluster import wait_ready
from support.registry import local_registry
from support.release import SignedPackage, signed_package
from lab.localcluster.release import pod_security_level, ray_pods, release_values
from lab.release.package import PACKAGED_VALUES, chart_metadata, package

VERSION = str(chart_metadata(paths.CHART)["version"])
NAME = paths.CHART.name
# A shape whose nodes carry a GPU-type label, so its pods can only land on its own nodes.
SHAPE = "h800-80g-x8"
PLAIN_HTTP = "--plain-http"


@pytest.fixture
def release(helm, tmp_path) -> SignedPackage:
    return signed_package(helm, tmp_path / "release")


def run_helm(binary: Path, *args: str) -> subprocess.CompletedProcess:
    completed = subprocess.run([str(binary), *args], capture_output=True, text=True, timeout=300)
    assert completed.returncode == 0, f"helm {' '.join(args)}:\n{completed.stdout}{completed.stderr}"
    return completed


def test_install_from_registry(helm, release, local_cluster, tmp_path):
    """Push, then what a user does: pull the package for its values files, install by OCI reference,
    both verified against the signer's public key."""
    assert load_catalog().shapes[SHAPE].node_labels, f"{SHAPE} has no node label: the placement check proves nothing"
    verify = ["--verify", "--keyring", str(release.key.public_keyring)]
    with local_registry(tmp_path / "registry") as registry:
        pushed = run_helm(helm, "push", str(release.package), f"oci://{registry}/charts", PLAIN_HTTP)
        assert f"Pushed: {registry}/charts/{NAME}:{VERSION}" in pushed.stdout + pushed.stderr  # Helm 3: stderr
        reference = f"oci://{registry}/charts/{NAME}"
        run_helm(helm, "pull", reference, "--version", VERSION, "--untar", "--untardir", str(tmp_path / "pulled"),
                 PLAIN_HTTP, *verify)
        shape_file = tmp_path / "pulled" / NAME / PACKAGED_VALUES / f"{SHAPE}.yaml"
        assert shape_file.read_bytes() == (paths.VALUES_DIR / f"{SHAPE}.yaml").read_bytes()

        values = release_values(shape_file)
        runner = local_cluster.helm(helm)
        namespace = f"registry-{helm.name}"
        with local_cluster.release_namespace(runner, NAME, namespace, ["-f", str(shape_file)],
                                             pod_security_level(values)):
            runner.run("install", NAME, reference, "--version", VERSION, "--namespace", namespace,
                       "-f", str(shape_file), PLAIN_HTTP, *verify)
            wait_ready(local_cluster, namespace)
            placed = {pod.spec.node_name for pod in ray_pods(local_cluster.api, namespace, NAME)}
            assert placed and placed <= set(local_cluster.nodes[SHAPE]), f"Ray pods on {placed}, not {SHAPE} nodes"
            listed = yaml.safe_load(runner.run("list", "--namespace", namespace, "-o", "json").stdout)
            assert [entry["chart"] for entry in listed] == [f"{NAME}-{VERSION}"]


def test_registry_refuses_an_unsigned_install_with_verify(helm, tmp_path):
    """--verify needs the .prov in the registry: a package pushed without one is refused."""
    unsigned = tmp_path / "unsigned"
    pushed_package = package(helm, unsigned)
    keyring = signed_package(helm, tmp_path / "release").key.public_keyring
    with local_registry(tmp_path / "registry") as registry:
        run_helm(helm, "push", str(pushed_package), f"oci://{registry}/charts", PLAIN_HTTP)
        refused = subprocess.run([str(helm), "template", NAME, f"oci://{registry}/charts/{NAME}", "--version", VERSION,
                                  PLAIN_HTTP, "--verify", "--keyring", str(keyring)],
                                 capture_output=True, text=True, timeout=120)
        assert refused.returncode != 0 and "kind: RayCluster" not in refused.stdout, refused.stderr
