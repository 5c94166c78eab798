"""A real Redis (Debian's redis-server, unpacked by setup) for the local cluster's pods: the external store
of KubeRay's GCS fault tolerance. It listens on the real node's bridge address only (the pods reach it; its
isolation rules keep everything else out), with a password, keeping nothing on disk."""

from __future__ import annotations

import os
import secrets
import socket
import subprocess
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

from support.tools import redis_dir
from lab.localcluster import processes
from lab.localcluster.hostnet import NODE_IP


@dataclass(frozen=True)
class Redis:
    base: Path  # the unpacked package: bin/, lib/
    address: str  # host:port as the pods reach it
    password: str
    log: Path

    def cli(self, *command: str) -> str:
        """redis-cli's answer to command (the password through REDISCLI_AUTH, not the command line)."""
        host, port = self.address.rsplit(":", 1)
        completed = subprocess.run([str(self.base / "bin" / "redis-cli"), "-h", host, "-p", port, *command],
                                   capture_output=True, text=True, timeout=10,
                                   env={**os.environ, "LD_LIBRARY_PATH": str(self.base / "lib"),
                                        "REDISCLI_AUTH": self.password})
        return completed.stdout

    def keys(self) -> list[str]:
        return self.cli("--scan").split()


def free_port_on(address: str) -> int:
    with socket.socket() as sock:
        sock.bind((address, 0))
        return sock.getsockname()[1]


@contextmanager
def redis_on_the_node(state: Path) -> Iterator[Redis]:
    base = redis_dir()
    if base is None:
        raise FileNotFoundError("Debian's Redis is missing or not of lab/versions.env's REDIS_DEBS: "
                                "run lab/scripts/setup.sh")
    port, password = free_port_on(NODE_IP), secrets.token_hex(16)
    # The password in a file of its own (mode 600), not on the command line for ps to show.
    config = state / "redis.conf"
    config.touch(mode=0o600)
    config.write_text(f"bind {NODE_IP}\nport {port}\nrequirepass {password}\nsave \"\"\nappendonly no\n"
                      f"dir {state}\nprotected-mode yes\n")
    processes.start(state, "redis", [str(base / "bin" / "redis-server"), str(config)],
                    env={"LD_LIBRARY_PATH": str(base / "lib")})
    redis = Redis(base, f"{NODE_IP}:{port}", password, state / "logs" / "redis.log")
    try:
        processes.wait_for("redis", lambda: redis.cli("PING").strip() == "PONG", 30, redis.log)
        yield redis
    finally:
        processes.stop_one(state, "redis")
