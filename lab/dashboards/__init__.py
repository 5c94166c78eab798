"""The chart's Grafana dashboards (observability/dashboards/*.json), written by maintainers with `make dashboards`
(`python -m lab.dashboards`): Ray's from the pinned Ray's own generator (ray_dashboards.py), the rollout one
from the pinned vLLM's metric names (rollout.py). The chart ships the JSON files; nothing here runs at install."""

from pathlib import Path

from generator import paths

DASHBOARDS = paths.subchart_dir("observability") / "dashboards"


def dashboard_path(name: str) -> Path:
    return DASHBOARDS / f"{name}.json"
