"""What a chart package holds, as one digest: every file's path and content, with each Chart.yaml
read as data (Helm writes it anew when packaging), a dependency packaged inside (charts/*.tgz) by
what it holds in turn (its archive carries the time it was made), and the packaged chart's own
`version` left out, so the digest says whether anything but that version changed."""

from __future__ import annotations

import hashlib
import json
import io
import tarfile
from pathlib import Path
from typing import IO

import yaml


def package_digest(package: Path) -> str:
    with open(package, "rb") as archive:
        return archive_digest(archive)


def archive_digest(archive: IO[bytes]) -> str:
    total = hashlib.sha256()
    with tarfile.open(fileobj=archive) as tar:
        files = sorted((member for member in tar.getmembers() if member.isfile()), key=lambda member: member.name)
        top = files[0].name.split("/", 1)[0]
        for member in files:
            content = tar.extractfile(member).read()
            if member.name.endswith("/Chart.yaml"):
                content = chart_yaml_content(content, own=member.name == f"{top}/Chart.yaml")
            elif member.name.endswith(".tgz"):
                content = archive_digest(io.BytesIO(content)).encode()
            total.update(member.name.encode() + b"\0" + hashlib.sha256(content).digest())
    return f"sha256:{total.hexdigest()}"


def chart_yaml_content(text: bytes, own: bool) -> bytes:
    metadata = yaml.safe_load(text)
    if own:
        metadata.pop("version", None)
    return json.dumps(metadata, sort_keys=True).encode()


def text_digest(text: str) -> str:
    return f"sha256:{hashlib.sha256(text.encode()).hexdigest()}"
