"""A real Ray head on CPU with logical GPUs, on free ports, stopped afterwards."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
import urllib.request
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator, Mapping, Sequence


# The `ray` CLI through this interpreter: a console script installed by `python3 -m pip` may have no
# pyenv shim on PATH until a rehash.
RAY_CLI = [sys.executable, "-m", "ray.scripts.scripts"]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@contextmanager
def ray_head(temp_dir: Path, gpus: int, extra_args: Sequence[str] = (), extra_env: Mapping[str, str] | None = None,
             metrics_port: int | None = None, gcs_port: int | None = None) -> Iterator[str]:
    """Yields the dashboard URL of a fresh head; extra_args go to `ray start`, extra_env to its processes."""
    env = {**os.environ, "RAY_USAGE_STATS_ENABLED": "0", **(extra_env or {})}
    dashboard = free_port()
    command = [
        *RAY_CLI, "start", "--head", "--disable-usage-stats", f"--port={gcs_port or free_port()}",
        f"--dashboard-port={dashboard}", "--dashboard-host=127.0.0.1", "--include-dashboard=true",
        f"--ray-client-server-port={free_port()}", f"--num-gpus={gpus}", "--num-cpus=4",
        f"--temp-dir={temp_dir}", f"--dashboard-agent-listen-port={free_port()}",
        f"--metrics-export-port={metrics_port or free_port()}", *extra_args,
    ]
    subprocess.run(command, check=True, env=env, capture_output=True, timeout=120)
    url = f"http://127.0.0.1:{dashboard}"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                with urllib.request.urlopen(url + "/api/version", timeout=2) as response:
                    json.load(response)
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.5)
        yield url
    finally:
        subprocess.run([*RAY_CLI, "stop", "--force"], env=env, capture_output=True, timeout=120)
