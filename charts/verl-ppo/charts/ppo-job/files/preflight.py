"""Preflight of the PPO run: a short Ray job (this file is its driver) with one task on every Ray node.

Before the run is submitted it checks, on each node: the shared volume is mounted at the same path with
the same content (a token the driver writes is read on every node), the run's data and model files are
there, the node has the GPUs the values declare (torch's count where torch is installed, else Ray's view)
and the NCCL environment is the one the chart rendered. It prints one table row per node and exits 1 when
any check fails, naming the node; the submitter then does not submit the run. A node that leaves while its
task runs (its pod replaced, its raylet not yet marked dead) is no failed check: the preflight names it and
exits NODES_LEFT, and the submitter waits for the cluster to be whole again and runs the preflight anew.

Standard library and Ray only. Its one argument is a JSON object: mountPath, inputs (paths),
gpusPerNode, gpuNodes, ncclEnv (name -> value), and with a rollout pool its nodes' poolGpusPerNode and poolNodes.
"""

from __future__ import annotations

import json
import os
import secrets
import socket
import subprocess
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path

import ray
import ray.exceptions
from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

TOKEN_DIR = ".verl-ppo-preflight"
NODES_LEFT = 75  # exit code (EX_TEMPFAIL): a node left during the preflight; submitter.py reads it
TASK_SECONDS = 300  # for every node's task together
TORCH_COUNT = "import torch; print(torch.cuda.device_count())"


@dataclass
class NodeReport:
    node: str  # the Ray node's address
    host: str  # its host (the pod's name)
    volume: str  # "ok" or what differs
    inputs: str
    gpus: str
    nccl: str

    @property
    def failed(self) -> bool:
        return any(value != "ok" and not value.startswith("ok ") for value in (self.volume, self.inputs, self.gpus, self.nccl))


def _physical_gpus() -> tuple[int, str] | None:
    """The node's GPUs as torch counts them, with no CUDA_VISIBLE_DEVICES (Ray narrows it per task); None without torch."""
    env = {k: v for k, v in os.environ.items() if k != "CUDA_VISIBLE_DEVICES"}
    try:
        counted = subprocess.run([sys.executable, "-c", TORCH_COUNT], env=env, capture_output=True, text=True, timeout=120)
    except (OSError, subprocess.TimeoutExpired):
        return None
    if counted.returncode != 0:
        return None
    return int(counted.stdout.strip().splitlines()[-1]), "torch"


def check_node(expected: dict, token_path: str, token: str, ray_gpus: float) -> dict:
    """Runs on one node: what it sees of the volume, the inputs, its GPUs and its NCCL environment."""
    mount = Path(expected["mountPath"])
    if not mount.is_dir():
        volume = f"{mount} not mounted"
    else:
        try:
            seen = Path(token_path).read_text()
            volume = "ok" if seen == token else f"{mount} holds other content (token differs)"
        except OSError:
            volume = f"{mount} lacks the token written on the driver's node: another volume"
    missing = [path for path in expected["inputs"] if not os.path.exists(path)]
    inputs = "ok" if not missing else "missing " + ", ".join(missing)
    counted = _physical_gpus()
    found, source = counted if counted else (ray_gpus, "ray")
    wanted = expected["gpusPerNode"]
    pool = expected.get("poolGpusPerNode", wanted)  # a rollout pool's node may have another GPU count
    expected_text = f"{wanted}" if pool == wanted else f"{wanted} (training) or {pool} (rollout pool)"
    seen = f"{found:g} ({source})"
    gpus = f"ok {seen}" if found in (0, wanted, pool) else f"{seen}, expected {expected_text}"
    wrong = {name: os.environ.get(name) for name, value in expected["ncclEnv"].items() if os.environ.get(name) != value}
    nccl = "ok" if not wrong else "differs: " + ", ".join(f"{k}={v!r}" for k, v in sorted(wrong.items()))
    return asdict(NodeReport(ray.util.get_node_ip_address(), socket.gethostname(), volume, inputs, gpus, nccl))


def gpu_node_count(reports: list[NodeReport], expected: dict) -> str:
    """"ok" when as many nodes have GPUs as the values declare (training's and the rollout pool's)."""
    with_gpus = sum(1 for report in reports if not report.gpus.startswith("ok 0 "))
    wanted = expected["gpuNodes"] + expected.get("poolNodes", 0)
    return "ok" if with_gpus == wanted else f"{with_gpus} nodes with GPUs, expected {wanted}"


def table(reports: list[NodeReport]) -> str:
    columns = ["node", "host", "volume", "inputs", "gpus", "nccl"]
    rows = [columns] + [[getattr(r, c) for c in columns] for r in reports]
    widths = [max(len(row[i]) for row in rows) for i in range(len(columns))]
    return "\n".join("  ".join(cell.ljust(width) for cell, width in zip(row, widths)).rstrip() for row in rows)


def gather(nodes: list[dict], pending: list) -> tuple[list[NodeReport], list[str]]:
    """Each node's report, and the nodes whose task ended with Ray's error (the node died or left) or not in time."""
    deadline = time.monotonic() + TASK_SECONDS
    reports, left = [], []
    for node, task in zip(nodes, pending):
        try:
            reports.append(NodeReport(**ray.get(task, timeout=max(deadline - time.monotonic(), 1))))
        except ray.exceptions.RayError as error:
            left.append(f"{node['NodeManagerAddress']} ({type(error).__name__})")
    return reports, left


def main(argv: list[str]) -> int:
    expected = json.loads(argv[0])
    ray.init(address="auto", logging_level="ERROR")
    token_dir = Path(expected["mountPath"]) / TOKEN_DIR
    token_dir.mkdir(parents=True, exist_ok=True)
    token = secrets.token_hex(16)
    token_path = token_dir / f"{os.getpid()}-{token[:8]}"
    token_path.write_text(token)
    try:
        nodes = [node for node in ray.nodes() if node["Alive"]]
        check = ray.remote(num_cpus=0)(check_node)
        pending = [check.options(scheduling_strategy=NodeAffinitySchedulingStrategy(node["NodeID"], soft=False))
                   .remote(expected, str(token_path), token, node["Resources"].get("GPU", 0)) for node in nodes]
        reports, left = gather(nodes, pending)
    finally:
        token_path.unlink(missing_ok=True)
    print("preflight, one row per Ray node:")
    print(table(sorted(reports, key=lambda r: r.node)))
    if left:
        print("preflight: nodes left while it ran: " + "; ".join(left))
        return NODES_LEFT
    failed = [f"{r.node} ({r.host})" for r in reports if r.failed]
    count = gpu_node_count(reports, expected)
    if count != "ok":
        failed.append(count)
    if failed:
        print("preflight FAILED on: " + "; ".join(failed))
        return 1
    print(f"preflight passed on {len(reports)} nodes")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
