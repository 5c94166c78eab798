"""A throwaway OpenPGP signing key made by GnuPG in its own home, exported as the legacy keyring
files Helm reads (`helm package --sign` takes a secret keyring, `helm verify` a public one)."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

KEY_NAME = "verl-ppo release test <release-test@verl-ppo.invalid>"


@dataclass(frozen=True)
class SigningKey:
    name: str
    secret_keyring: Path
    public_keyring: Path


def create_signing_key(work: Path, name: str = KEY_NAME) -> SigningKey:
    """RSA, since Helm's OpenPGP library reads no EdDSA keys; no passphrase, as Helm cannot ask for one here."""
    # GnuPG's home in a short path of its own: its agent's Unix sockets live there, and a socket path holds
    # at most 107 bytes, which a test's tmp_path under a parallel worker (.../popen-gw1/...) can pass.
    home = Path(tempfile.mkdtemp(prefix="vp-gnupg-"))
    work.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "GNUPGHOME": str(home)}

    def gpg(*args: str) -> bytes:
        return subprocess.run(["gpg", "--batch", "--pinentry-mode", "loopback", "--passphrase", "", *args],
                              env=env, capture_output=True, check=True, timeout=120).stdout

    try:
        gpg("--quick-gen-key", name, "rsa3072", "sign", "never")
        key = SigningKey(name, work / "secring.gpg", work / "pubring.gpg")
        key.secret_keyring.write_bytes(gpg("--export-secret-keys", name))
        key.public_keyring.write_bytes(gpg("--export", name))
        return key
    finally:  # gpg started an agent for this home: stop it
        subprocess.run(["gpgconf", "--kill", "gpg-agent"], env=env, capture_output=True, timeout=30)
        shutil.rmtree(home, ignore_errors=True)
