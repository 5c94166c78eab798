"""The versions the lab pins (lab/versions.env) and where setup puts what it builds from them."""

import shlex
from pathlib import Path

from generator.paths import ROOT, tool_cache

VERSIONS_ENV = ROOT / "lab" / "versions.env"


def pinned_versions() -> dict[str, str]:
    """KEY=VALUE lines of lab/versions.env, read with shell quoting rules (as setup.sh sources it)."""
    return dict(token.split("=", 1) for token in shlex.split(VERSIONS_ENV.read_text(), comments=True))


def prometheus_dir() -> Path:
    """prometheus, promtool and VERSION (the Prometheus release of the pinned module) that lab/scripts/setup.sh
    builds."""
    return tool_cache() / f"prometheus-{pinned_versions()['PROMETHEUS_VERSION']}"
