"""Locations of the pinned tools and schema sources that scripts/setup.sh installs."""

from __future__ import annotations

import os
from functools import lru_cache
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


@lru_cache(maxsize=1)
def versions() -> dict[str, str]:
    pinned = {}
    for line in (ROOT / "tools" / "versions.env").read_text().splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            key, _, value = line.partition("=")
            pinned[key] = value
    return pinned


def cache_dir() -> Path:
    return Path(os.environ.get("VERL_PPO_CACHE", Path.home() / ".cache" / "verl-ppo"))


def helm_binaries() -> dict[str, Path]:
    return {f"helm{major}": cache_dir() / "bin" / f"helm{major}" for major in (3, 4)}


def kubernetes_version() -> str:
    return versions()["KUBERNETES_VERSION"]


def kubernetes_openapi() -> Path:
    return cache_dir() / "schemas" / f"kubernetes-{kubernetes_version()}" / "swagger.json"


def crd_files() -> list[Path]:
    pinned = versions()
    return sorted((cache_dir() / "crds" / f"kuberay-{pinned['KUBERAY_VERSION']}").glob("*.yaml")) + sorted(
        (cache_dir() / "crds" / f"prometheus-operator-{pinned['PROMETHEUS_OPERATOR_VERSION']}").glob("*.yaml")
    )


def verl_versions() -> list[str]:
    return versions()["VERL_VERSIONS"].strip('"').split()


def verl_config_dir(version: str) -> Path:
    return cache_dir() / "verl-config" / version / "verl" / "trainer" / "config"


def prometheus_binaries() -> dict[str, Path]:
    """prometheus and promtool of the pinned Debian package."""
    base = cache_dir() / f"prometheus-{versions()['PROMETHEUS_DEB_VERSION']}"
    return {name: base / name for name in ("prometheus", "promtool")}
