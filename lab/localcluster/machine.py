"""Whether this machine can run a values file's release on the local cluster's real node: the seed's shape (the
only one that fits once scaled), root and a writable memory cgroup. Standard library only: `make demo` asks with
the system python3 before setup, so that it builds the real node's parts only where the demo will use them.

Usage: python3 -m lab.localcluster.machine VALUES_FILE  (exit 0 where a real node can run; the reason otherwise)
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from generator.paths import ROOT

# The only values file whose release fits the real node once scaled (make demo's default).
SEED = ROOT / "values" / "seed-2gpu.yaml"


def refuses_real_node(values_file: Path) -> str | None:
    """Why this machine cannot run the release of values_file on a real node, or None when it can."""
    if values_file.resolve() != SEED.resolve():
        return f"{values_file.name} is not the seed's shape: a larger shape does not fit this machine"
    if os.geteuid() != 0:
        return "running containers needs root (kubelet, containerd, the node's bridge)"
    if not os.access("/sys/fs/cgroup/memory", os.W_OK):
        return "the memory cgroup is not writable here (containers cannot be confined)"
    return None


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print(__doc__.strip().splitlines()[-1], file=sys.stderr)
        return 2
    why = refuses_real_node(Path(argv[0]))
    if why:
        print(f"demo: no real node here ({why}): kwok plays the nodes, the real node's parts are not built")
        return 1
    print("demo: this machine can run the real node: its parts are built too")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
