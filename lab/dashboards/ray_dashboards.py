"""Ray's Grafana dashboards, written by the pinned Ray's own dashboard generator.

The JSON is Ray's, untouched: the chart ships one ConfigMap per file (observability/dashboards/),
so a Ray upgrade is `pip install` of the new pin plus `make dashboards`.
"""

from __future__ import annotations

import json
import os
import re

from generator import paths

# The dashboards of Ray's own that a PPO run has a use for (Ray 2.60 also generates data_llm and serve_llm_sglang);
# the chart's observability.dashboards.include picks among them.
NAMES = ("default", "data", "train", "serve", "serve_deployment", "serve_llm")
# Ray lets these environment variables change a dashboard's uid and filters: the committed files must not
# depend on the shell that generated them.
_OVERRIDE = re.compile(r"^RAY_GRAFANA_[A-Z_]+_DASHBOARD_(UID|GLOBAL_FILTERS)$")
# Ray 2.49's data dashboard leaves an empty matcher between its global filters and the next one
# (`ray_io_cluster=~"$Cluster",, operator=~...`), which Prometheus rejects as a parse error.
_EMPTY_MATCHER = re.compile(r",(\s*,)+")


def pinned_ray_version() -> str:
    match = re.search(r"^ray\[default\]==(\S+)$", (paths.ROOT / "requirements-test.txt").read_text(), re.MULTILINE)
    if not match:
        raise SystemExit("requirements-test.txt pins no ray[default]==<version>")
    return match.group(1)


def generate() -> dict[str, str]:
    """Dashboard JSON by name, from the installed Ray, which must be the pinned one."""
    import ray
    from ray.dashboard.modules.metrics import grafana_dashboard_factory as factory

    if ray.__version__ != pinned_ray_version():
        raise SystemExit(f"installed Ray is {ray.__version__}, requirements-test.txt pins {pinned_ray_version()}: "
                         "run `make setup` first")
    saved = {key: os.environ.pop(key) for key in list(os.environ) if _OVERRIDE.match(key)}
    try:
        generated = {name: getattr(factory, f"generate_{name}_grafana_dashboard")()[0] for name in NAMES}
    finally:
        os.environ.update(saved)
    return {name: repair(text) + "\n" for name, text in generated.items()}


def repair(text: str) -> str:
    """Ray's JSON with each query's empty label matchers dropped; Ray writes it with indent=4, so does this."""
    board = json.loads(text)
    for panel in board.get("panels", []):
        for target in panel.get("targets", []):
            if "expr" in target:
                target["expr"] = _EMPTY_MATCHER.sub(",", target["expr"])
    return json.dumps(board, indent=4)
