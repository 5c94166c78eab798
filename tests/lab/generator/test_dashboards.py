"""Tier 1: `generator dashboards` writes Ray's dashboards only from the pinned Ray, and the rollout one from the
pinned vLLM's metric names."""

import re

import pytest
import ray

from generator import dashboards


@pytest.mark.parametrize("installed", ["0.0.1", "99.0.0"])
def test_another_ray_than_the_pinned_one_is_refused(monkeypatch, installed):
    monkeypatch.setattr(ray, "__version__", installed)
    with pytest.raises(SystemExit, match=f"installed Ray is {installed}, requirements-test.txt pins "
                                         f"{dashboards.pinned_ray_version()}"):
        dashboards.generate()


def test_the_rollout_dashboard_reads_the_pinned_vllms_metric_names():
    """Each name the rollout dashboard reads is declared, with the type the queries assume, in the pinned vLLM's
    code (its metrics module, which setup takes from its wheel)."""
    from generator import rolloutdashboard
    from support.tools import vllm_metrics_source

    source = vllm_metrics_source(rolloutdashboard.pinned_vllm_version())
    if not source.is_file():
        pytest.fail(f"{source} is missing: run lab/scripts/setup.sh vllm-metrics (make setup)")
    code = source.read_text()
    kinds = {rolloutdashboard.RUNNING: "gauge", rolloutdashboard.WAITING: "gauge",
             rolloutdashboard.KV_CACHE_USAGE: "gauge", rolloutdashboard.GENERATION_TOKENS: "counter",
             rolloutdashboard.PROMPT_TOKENS: "counter", rolloutdashboard.PREEMPTIONS: "counter",
             rolloutdashboard.TIME_TO_FIRST_TOKEN: "histogram"}
    assert set(kinds) == set(rolloutdashboard.METRICS)
    for name, kind in kinds.items():
        # vLLM declares each as `self._<kind>_cls(\n name="vllm:...",`.
        assert re.search(rf"self\._{kind}_cls\(\s*name=\"{re.escape(name)}\"", code), (name, kind)


def test_the_rollout_dashboard_is_its_generators_output():
    from generator import rolloutdashboard

    for name, text in rolloutdashboard.generate().items():
        path = dashboards.dashboard_path(name)
        assert path.read_text() == text, f"{path} is stale or edited: run python -m generator dashboards"
