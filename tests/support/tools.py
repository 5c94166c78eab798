"""Locations of the pinned tools and schema sources that lab/scripts/setup.sh installs."""

from __future__ import annotations

from pathlib import Path

from generator.paths import ROOT, tool_cache as cache_dir  # noqa: F401
from lab.pins import pinned_versions as versions, prometheus_dir  # noqa: F401
from generator.verlconfig import cached_config_dir
from generator.verlversions import version_names


def helm_binaries() -> dict[str, Path]:
    return {f"helm{major}": cache_dir() / "bin" / f"helm{major}" for major in (3, 4)}


def helm_unittest_plugins() -> Path:
    """The HELM_PLUGINS folder holding the helm-unittest plugin that setup builds (`helm unittest CHART`)."""
    pinned = versions()
    return cache_dir() / "helm-plugins" / f"unittest-{pinned['HELM_UNITTEST_VERSION']}-helm-{pinned['HELM3_VERSION']}"


def sglang_metrics_source(version: str) -> Path:
    """sglang/srt/observability/metrics_collector.py of SGLang <version>'s wheel (setup's step sglang-metrics)."""
    return cache_dir() / f"sglang-{version}" / "sglang" / "srt" / "observability" / "metrics_collector.py"


def vllm_metrics_source(version: str) -> Path:
    """vllm/v1/metrics/loggers.py of vLLM <version>'s wheel, which setup keeps (its step vllm-metrics)."""
    return cache_dir() / f"vllm-{version}" / "vllm" / "v1" / "metrics" / "loggers.py"


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
    """The supported veRL versions (ppo-job's files/verl-versions.yaml), whose configs setup fetches."""
    return version_names()


def verl_config_dir(version: str) -> Path:
    return cached_config_dir(version)


def prometheus_binaries() -> dict[str, Path]:
    """prometheus and promtool of the pinned Prometheus module."""
    return {name: prometheus_dir() / name for name in ("prometheus", "promtool")}


def redis_dir() -> Path | None:
    """Debian's Redis as lab/scripts/setup.sh unpacked it (bin/redis-server, lib/), None unless of the pinned
    packages."""
    base = cache_dir() / "redis"
    pinned = base / "PINNED"
    return base if pinned.exists() and pinned.read_text().strip() == versions()["REDIS_DEBS"] else None


def checkov_binary() -> Path:
    """checkov of the pinned version, in the virtual environment lab/scripts/setup.sh makes for it."""
    return cache_dir() / "venv" / f"checkov-{versions()['CHECKOV_VERSION']}" / "bin" / "checkov"
