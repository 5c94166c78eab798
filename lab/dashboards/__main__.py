"""`python -m lab.dashboards [--check]` (`make dashboards`): write the chart's Grafana dashboards, or with
--check only report those that differ from their generators' output."""

from __future__ import annotations

import argparse
import sys

import lab.dashboards as dashboards
from generator.render import write
from lab.dashboards import ray_dashboards, rollout


def generated() -> dict[str, str]:
    """Each dashboard's JSON by name: Ray's, then the rollout one."""
    return {**ray_dashboards.generate(), **rollout.generate()}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m lab.dashboards", description=__doc__)
    parser.add_argument("--check", action="store_true", help="only report drift (exit 1 when a file is stale)")
    args = parser.parse_args(argv)
    boards = generated()
    if args.check:
        stale = [name for name, text in boards.items()
                 if not dashboards.dashboard_path(name).exists() or dashboards.dashboard_path(name).read_text() != text]
        for name in stale:
            source = "lab/dashboards/rollout.py" if name == rollout.NAME else "Ray's generator"
            print(f"{dashboards.dashboard_path(name)} differs from {source}: run make dashboards")
        return 1 if stale else 0
    for name, text in boards.items():
        path = dashboards.dashboard_path(name)
        print(f"{'wrote' if write(path, text) else 'unchanged'} {path} ({len(text.encode()) // 1024} KiB)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
