"""One run per distinct offline Helm command in a test session: `helm template` and `helm lint` print
the same for the same binary, arguments, files and environment, and many tests render the same
release (the defaults, each values file, each scenario with Helm 3 and 4). The key holds the exact
inputs: the command line, the content of every file it names, the state (path, size, mtime) of every
file under each directory it names (the chart), and Helm's environment. Nothing that talks to a
cluster or a registry is kept."""

from __future__ import annotations

import hashlib
import os
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

# Offline subcommands whose output depends only on the key's inputs.
CACHED_COMMANDS = ("template", "lint")
# Arguments that make Helm reach a cluster or a registry: never cached.
ONLINE = ("oci://", "http://", "https://", "--kubeconfig", "--kube-context", "--dry-run", "--validate")


def _tree_state(directory: Path) -> tuple[tuple[str, int, int], ...]:
    found = []
    for base, dirs, files in os.walk(directory):
        dirs.sort()
        for name in sorted(files):
            stat = os.stat(os.path.join(base, name))
            found.append((os.path.relpath(os.path.join(base, name), directory), stat.st_size, stat.st_mtime_ns))
    return tuple(found)


def _argument_state(argument: str) -> object:
    path = Path(argument)
    try:
        if path.is_file():
            return hashlib.sha256(path.read_bytes()).hexdigest()
        if path.is_dir():
            return _tree_state(path)
    except (OSError, ValueError):
        pass
    return None


def key_of(command: list[str]) -> tuple | None:
    """The cache key of this command line, or None where it must run every time."""
    if len(command) < 2 or command[1] not in CACHED_COMMANDS or any(a.startswith(ONLINE) for a in command[1:]):
        return None
    binary = os.stat(command[0])
    environment = tuple(sorted((k, v) for k, v in os.environ.items() if k.startswith(("HELM_", "KUBE"))))
    return (tuple(command), binary.st_size, binary.st_mtime_ns, tuple(map(_argument_state, command[1:])), environment)


@dataclass
class RenderCache:
    """Outputs by key, compressed (a full render is ~0.5 MB of YAML, most of it dashboards)."""

    entries: dict[tuple, tuple[int, bytes, bytes]] = field(default_factory=dict)
    hits: int = 0
    misses: int = 0

    def run(self, command: list[str], execute: Callable[[list[str]], tuple[int, str, str]]) -> tuple[int, str, str]:
        key = key_of(command)
        if key is None:
            return execute(command)
        if key in self.entries:
            self.hits += 1
            code, out, err = self.entries[key]
            return code, zlib.decompress(out).decode(), zlib.decompress(err).decode()
        self.misses += 1
        code, stdout, stderr = execute(command)
        self.entries[key] = (code, zlib.compress(stdout.encode(), 1), zlib.compress(stderr.encode(), 1))
        return code, stdout, stderr

    def counts(self) -> dict[str, int]:
        """What summary() reports, as numbers a parallel worker hands to the controller (xdist)."""
        stored = sum(len(out) + len(err) for _, out, err in self.entries.values())
        return {"hits": self.hits, "misses": self.misses, "stored": stored}


def summary(counts: list[dict[str, int]]) -> str:
    """One line for the session: the counts of every worker (or of the one process) added up."""
    hits, misses = sum(c["hits"] for c in counts), sum(c["misses"] for c in counts)
    stored = sum(c["stored"] for c in counts)
    return (f"helm render cache: {hits} of {hits + misses} offline helm runs answered from the session's cache "
            f"({len(counts)} worker{'s' if len(counts) != 1 else ''}), {misses} run ({stored / 2**20:.1f} MiB kept)")


RENDERS = RenderCache()
