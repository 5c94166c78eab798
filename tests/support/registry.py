"""A real OCI registry on 127.0.0.1: the CNCF distribution registry (built by
lab/scripts/build-release-tools.sh), plain HTTP on a free port, blobs stored in the test's directory."""

from __future__ import annotations

import urllib.request
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

import yaml

from generator.paths import tool_cache
from lab.pins import pinned_versions
from lab.localcluster import processes


def registry_binary() -> Path:
    return tool_cache() / "bin" / f"registry-{pinned_versions()['DISTRIBUTION_VERSION']}"


def answers(address: str) -> bool:
    with urllib.request.urlopen(f"http://{address}/v2/", timeout=2) as response:
        return response.status == 200


@contextmanager
def local_registry(work: Path) -> Iterator[str]:
    """Yields the registry's host:port; stops it afterwards."""
    address = f"127.0.0.1:{processes.free_port()}"
    work.mkdir(parents=True, exist_ok=True)
    config = work / "registry.yml"
    config.write_text(yaml.safe_dump({
        "version": 0.1,
        "log": {"level": "info"},
        "storage": {"filesystem": {"rootdirectory": str(work / "blobs")}},
        "http": {"addr": address},
    }))
    process = processes.start(work, "registry", [str(registry_binary()), "serve", str(config)])
    try:
        processes.wait_for(f"registry on {address}", lambda: answers(address), 30, work / "logs" / "registry.log")
        yield address
    finally:
        processes.stop_pid(process.pid)
