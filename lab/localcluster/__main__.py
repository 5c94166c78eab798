"""`python -m lab.localcluster {demo,down,status}`."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from lab.localcluster import processes
from lab.localcluster.cluster import stop_cluster
from lab.localcluster.demo import run_demo
from lab.localcluster.parts import ROOT

DEFAULT_STATE = ROOT / "build" / "localcluster"


def main(argv: list[str] | None = None) -> int:
    root = argparse.ArgumentParser(prog="python -m lab.localcluster", description=__doc__)
    root.add_argument("--state", type=Path, default=DEFAULT_STATE, help="state directory (pid files, logs, kubeconfig)")
    sub = root.add_subparsers(dest="command", required=True)
    demo = sub.add_parser("demo", help="start the cluster with nodes of the values file's shape and install the "
                          "release")
    demo.add_argument("--values", type=Path, default=ROOT / "values" / "seed-2gpu.yaml")
    demo.add_argument("--helm", choices=["helm3", "helm4"], default="helm4")
    demo.add_argument("--kwok", action="store_true",
                      help="kwok nodes only, even where a real node could run the seed's release")
    sub.add_parser("down", help="stop every process `demo` started")
    sub.add_parser("status", help="which processes of the cluster run")
    args = root.parse_args(argv)

    if args.command == "demo":
        try:
            return run_demo(args.state, args.values, args.helm, real_node=not args.kwok)
        except (OSError, RuntimeError, TimeoutError) as error:
            print(f"demo: {error}", file=sys.stderr)
            return 1
    if args.command == "down":
        stopped = stop_cluster(args.state)
        print(f"stopped: {', '.join(stopped)}" if stopped else f"nothing runs from {args.state}")
        return 0
    for name, alive in processes.running(args.state).items():
        print(f"{name}: {'running' if alive else 'stopped'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
