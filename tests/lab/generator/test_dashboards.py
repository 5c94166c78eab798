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
    code (its wheel in .gpu/wheels-vllm, which `make gpu-wheels VLLM=1` fetches)."""
    import zipfile

    from generator import paths, rolloutdashboard

    version = rolloutdashboard.pinned_vllm_version()
    wheels = sorted((paths.ROOT / ".gpu" / "wheels-vllm").glob(f"vllm-{version}-*.whl"))
    if not wheels:
        pytest.skip(f"no vLLM {version} wheel in .gpu/wheels-vllm (make gpu-wheels VLLM=1)")
    with zipfile.ZipFile(wheels[0]) as wheel:
        code = wheel.read("vllm/v1/metrics/loggers.py").decode()
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
