"""The chart as users get it, with Helm 3 and Helm 4: packaged with values/ inside, signed with a
key the test makes and verified; a tampered package and one checked against another key refused.
(Installing it from an OCI registry: test_cluster_registry.py.)"""

from __future__ import annotations

import gzip
import io
import subprocess
import tarfile
from pathlib import Path

import pytest

from generator import paths
from support.gpg import SigningKey, create_signing_key
from support.release import SignedPackage, signed_package
from lab.release.package import PACKAGED_VALUES, chart_metadata

VERSION = str(chart_metadata(paths.CHART)["version"])
NAME = paths.CHART.name
SHAPE = "h800-80g-x8"


def run_helm(binary: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess:
    completed = subprocess.run([str(binary), *args], capture_output=True, text=True, timeout=300)
    if check:
        assert completed.returncode == 0, f"helm {' '.join(args)}:\n{completed.stdout}{completed.stderr}"
    return completed


@pytest.fixture(scope="module")
def release(helm, tmp_path_factory) -> SignedPackage:
    """The signed package, made by the Helm under test."""
    return signed_package(helm, tmp_path_factory.mktemp("release"))


@pytest.fixture(scope="module")
def signed(release) -> Path:
    return release.package


@pytest.fixture(scope="module")
def signing_key(release) -> SigningKey:
    return release.key


def members(package_file: Path) -> dict[str, bytes]:
    with tarfile.open(package_file) as tar:
        return {member.name: tar.extractfile(member).read() for member in tar.getmembers() if member.isfile()}


def test_package_carries_the_values_files(signed):
    packaged = members(signed)
    expected = {f"{NAME}/{PACKAGED_VALUES}/{path.relative_to(paths.VALUES_DIR)}": path.read_bytes()
                for path in sorted(paths.VALUES_DIR.rglob("*.yaml"))}
    assert {name: content for name, content in packaged.items() if name.startswith(f"{NAME}/{PACKAGED_VALUES}/")} \
        == expected
    assert f"{NAME}/{PACKAGED_VALUES}/{SHAPE}.yaml" in packaged
    assert f"{NAME}/{PACKAGED_VALUES}/platforms/vke.yaml" in packaged


def test_package_ships_no_file_of_the_lab(signed):
    """The lab's own files (the real node's values, the release records) stay out of what users install."""
    lab = {path.read_bytes() for path in (paths.ROOT / "lab").rglob("*") if path.is_file()} - {b""}
    assert [name for name, content in members(signed).items() if content in lab] == []


def test_package_leaves_out_the_unittest_suites_and_keeps_the_helm_test(signed):
    """helm-unittest's convention: the chart's tests/ stays home (.helmignore); ppo-job's templates/tests/ is the
    release's `helm test` pod and ships."""
    packaged = members(signed)
    assert (paths.CHART / "tests").is_dir() and not [name for name in packaged if name.startswith(f"{NAME}/tests/")]
    assert f"{NAME}/charts/ppo-job/templates/tests/test-cluster.yaml" in packaged


def test_signed_package_verifies(helm, signed, signing_key):
    assert signed.with_name(signed.name + ".prov").exists()
    verified = run_helm(helm, "verify", "--keyring", str(signing_key.public_keyring), str(signed))
    assert f"Signed by: {signing_key.name}" in verified.stdout
    rendered = run_helm(helm, "template", NAME, str(signed), "--verify", "--keyring", str(signing_key.public_keyring))
    assert "kind: RayCluster" in rendered.stdout


def tamper(package_file: Path, destination: Path) -> Path:
    """The same package with its values.yaml changed, under the same name, beside the original .prov."""
    destination.mkdir()
    changed = destination / package_file.name
    buffer = io.BytesIO()
    with tarfile.open(package_file) as source, tarfile.open(fileobj=buffer, mode="w") as target:
        for member in source.getmembers():
            data = source.extractfile(member).read() if member.isfile() else None
            if member.name == f"{NAME}/values.yaml":
                data += b"# changed after signing\n"
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
