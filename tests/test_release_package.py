"""The chart as users get it, with Helm 3 and Helm 4: packaged with values/ inside, signed with a
key the test makes and verified, a tampered package refused; pushed to a real OCI registry on
localhost and installed from there on the local cluster (tier 6), with the GPU shape read from the
pulled package, as a user without this repository does."""

from __future__ import annotations

import gzip
import io
import subprocess
import tarfile
from pathlib import Path

import pytest
import yaml

from generator import paths
from generator.catalog import load_catalog
from generator.checks import effective_values
from support.cluster import wait_ready
from support.gpg import SigningKey, create_signing_key
from support.registry import local_registry
from tools.localcluster.release import pod_security_level, ray_pods
from tools.release.package import PACKAGED_VALUES, Signing, chart_metadata, package

VERSION = str(chart_metadata(paths.CHART)["version"])
NAME = paths.CHART.name
# A shape whose nodes carry a GPU-type label, so its pods can only land on its own nodes.
SHAPE = "h800-80g-x8"
PLAIN_HTTP = "--plain-http"


def run_helm(binary: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess:
    completed = subprocess.run([str(binary), *args], capture_output=True, text=True, timeout=300)
    if check:
        assert completed.returncode == 0, f"helm {' '.join(args)}:\n{completed.stdout}{completed.stderr}"
    return completed


@pytest.fixture(scope="module")
def signing_key(tmp_path_factory) -> SigningKey:
    return create_signing_key(tmp_path_factory.mktemp("gpg"))


@pytest.fixture(scope="module")
def signed(helm, signing_key, tmp_path_factory) -> Path:
    """The signed package (its .prov beside it), made by the Helm under test."""
    return package(helm, tmp_path_factory.mktemp("package"), Signing(signing_key.name, signing_key.secret_keyring))


def members(package_file: Path) -> dict[str, bytes]:
    with tarfile.open(package_file) as tar:
        return {member.name: tar.extractfile(member).read() for member in tar.getmembers() if member.isfile()}


def test_package_carries_the_values_files(signed):
    packaged = members(signed)
    expected = {f"{NAME}/{PACKAGED_VALUES}/{path.relative_to(paths.VALUES_DIR)}": path.read_bytes()
                for path in sorted(paths.VALUES_DIR.rglob("*.yaml"))}
    assert {name: content for name, content in packaged.items() if name.startswith(f"{NAME}/{PACKAGED_VALUES}/")} \
        == expected
    assert f"{NAME}/{PACKAGED_VALUES}/{SHAPE}.yaml" in packaged and f"{NAME}/{PACKAGED_VALUES}/platforms/vke.yaml" in packaged


def test_signed_package_verifies(helm, signed, signing_key):
    assert signed.with_name(signed.name + ".prov").exists()
    verified = run_helm(helm, "verify", "--keyring", str(signing_key.public_keyring), str(signed))
    assert f"Signed by: {signing_key.name}" in verified.stdout
    rendered = run_helm(helm, "template", NAME, str(signed), "--verify", "--keyring", str(signing_key.public_keyring))
    assert "kind: RayCluster" in rendered.stdout


def tamper(package_file: Path, destination: Path) -> Path:
    """The same package with one default changed, under the same name, beside the original .prov."""
    destination.mkdir()
    changed = destination / package_file.name
    buffer = io.BytesIO()
    with tarfile.open(package_file) as source, tarfile.open(fileobj=buffer, mode="w") as target:
        for member in source.getmembers():
            data = source.extractfile(member).read() if member.isfile() else None
            if member.name == f"{NAME}/values.yaml":
                data = data.replace(b"maxAttempts: 3", b"maxAttempts: 9")
                assert b"maxAttempts: 9" in data, "the default the test changes is gone: pick another"
                member.size = len(data)
            target.addfile(member, io.BytesIO(data) if data is not None else None)
    changed.write_bytes(gzip.compress(buffer.getvalue()))
    prov = package_file.with_name(package_file.name + ".prov")
    changed.with_name(prov.name).write_bytes(prov.read_bytes())
    return changed


def test_tampered_package_fails(helm, signed, signing_key, tmp_path):
    changed = tamper(signed, tmp_path / "tampered")
    keyring = ["--keyring", str(signing_key.public_keyring)]
    verified = run_helm(helm, "verify", *keyring, str(changed), check=False)
    assert verified.returncode != 0 and "sha256 sum does not match" in verified.stderr, verified.stderr
    rendered = run_helm(helm, "template", NAME, str(changed), "--verify", *keyring, check=False)
    assert rendered.returncode != 0 and not rendered.stdout


def test_package_signed_by_another_key_fails(helm, signed, tmp_path):
    stranger = create_signing_key(tmp_path, name="someone else <someone@verl-ppo.invalid>")
    verified = run_helm(helm, "verify", "--keyring", str(stranger.public_keyring), str(signed), check=False)
    assert verified.returncode != 0, verified.stdout


def test_install_from_registry(helm, signed, signing_key, local_cluster, tmp_path):
    """Push, then what a user does: pull the package for its values files, install by OCI reference,
    both verified against the signer's public key."""
    assert load_catalog().shapes[SHAPE].node_labels, f"{SHAPE} has no node label: the placement check proves nothing"
    keyring = ["--verify", "--keyring", str(signing_key.public_keyring)]
    with local_registry(tmp_path / "registry") as registry:
        pushed = run_helm(helm, "push", str(signed), f"oci://{registry}/charts", PLAIN_HTTP)
        assert f"Pushed: {registry}/charts/{NAME}:{VERSION}" in pushed.stdout + pushed.stderr  # Helm 3: stderr
        reference = f"oci://{registry}/charts/{NAME}"
        run_helm(helm, "pull", reference, "--version", VERSION, "--untar", "--untardir", str(tmp_path / "pulled"),
             PLAIN_HTTP, *keyring)
        shape_file = tmp_path / "pulled" / NAME / PACKAGED_VALUES / f"{SHAPE}.yaml"
        assert shape_file.read_bytes() == (paths.VALUES_DIR / f"{SHAPE}.yaml").read_bytes()

        values = effective_values([yaml.safe_load(shape_file.read_text())])
        runner = local_cluster.helm(helm)
        namespace = f"registry-{helm.name}"
        with local_cluster.release_namespace(runner, NAME, namespace, ["-f", str(shape_file)],
                                             pod_security_level(values)):
            runner.run("install", NAME, reference, "--version", VERSION, "--namespace", namespace,
                       "-f", str(shape_file), PLAIN_HTTP, *keyring)
            wait_ready(local_cluster, namespace)
            placed = {pod.spec.node_name for pod in ray_pods(local_cluster.api, namespace, NAME)}
            assert placed and placed <= set(local_cluster.nodes[SHAPE]), f"Ray pods on {placed}, not {SHAPE} nodes"
            listed = yaml.safe_load(runner.run("list", "--namespace", namespace, "-o", "json").stdout)
            assert [release["chart"] for release in listed] == [f"{NAME}-{VERSION}"]
