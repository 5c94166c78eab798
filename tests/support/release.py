"""The chart's release package as the release tests use it: signed with a key made for the test."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from support.gpg import SigningKey, create_signing_key
from lab.release.package import Signing, package


@dataclass(frozen=True)
class SignedPackage:
    package: Path  # its .prov lies beside it
    key: SigningKey


def signed_package(helm: Path, work: Path) -> SignedPackage:
    key = create_signing_key(work / "gpg")
    return SignedPackage(package(helm, work / "package", Signing(key.name, key.secret_keyring)), key)
