"""Tier 1: `make dashboards` (lab/dashboards) writes Ray's dashboards only from the pinned Ray, and the rollout one
from the pinned vLLM's metric names."""

import re
from pathlib import Path

import pytest
import ray

import lab.dashboards as dashboards
from lab.dashboards import ray_dashboards, rollout
from lab.dashboards.__main__ import generated, main


@pytest.mark.parametrize("installed", ["0.0.1", "99.0.0"])
def test_another_ray_than_the_pinned_one_is_refused(monkeypatch, installed):
    monkeypatch.setattr(ray, "__version__", installed)
    with pytest.raises(SystemExit, match=f"installed Ray is {installed}, requirements-test.txt pins "
                                         f"{ray_dashboards.pinned_ray_version()}"):
        ray_dashboards.generate()


def test_the_rollout_dashboard_reads_the_pinned_vllms_metric_names():
    """Each name the rollout dashboard reads is declared, with the type the queries assume, in the pinned vLLM's
    code (its metrics module, which setup takes from its wheel)."""
    from support.tools import vllm_metrics_source

    source = vllm_metrics_source(rollout.pinned_vllm_version())
    if not source.is_file():
        pytest.fail(f"{source} is missing: run lab/scripts/setup.sh vllm-metrics (make setup)")
    code = source.read_text()
    kinds = {rollout.RUNNING: "gauge", rollout.WAITING: "gauge",
             rollout.KV_CACHE_USAGE: "gauge", rollout.GENERATION_TOKENS: "counter",
             rollout.PROMPT_TOKENS: "counter", rollout.PREEMPTIONS: "counter",
             rollout.TIME_TO_FIRST_TOKEN: "histogram"}
    assert set(kinds) == set(rollout.METRICS)
    for name, kind in kinds.items():
        # vLLM declares each as `self._<kind>_cls(\n name="vllm:...",`.
        assert re.search(rf"self\._{kind}_cls\(\s*name=\"{re.escape(name)}\"", code), (name, kind)


def test_the_rollout_dashboard_reads_the_pinned_sglangs_metric_names():
    """Each SGLang name the rollout dashboard reads is declared, with the type its queries assume, in the pinned
    SGLang's metrics module (setup takes it from the wheel: step sglang-metrics)."""
    from support.tools import sglang_metrics_source

    source = sglang_metrics_source(rollout.pinned_sglang_version())
    if not source.is_file():
        pytest.fail(f"{source} is missing: run lab/scripts/setup.sh sglang-metrics (make setup)")
    code = source.read_text()
    engine = rollout.SGLANG
    kinds = {engine.running: "Gauge", engine.waiting: "Gauge", engine.kv_cache_usage: "Gauge",
             engine.generation_tokens: "Counter", engine.prompt_tokens: "Counter", engine.preemptions: "Counter",
             engine.time_to_first_token: "Histogram"}
    assert set(kinds) == set(engine.metrics)
    for name, kind in kinds.items():
        # SGLang declares each as `<Kind>(\n name="sglang:...",`, at times with a comment line between.
        assert re.search(rf"\b{kind}\(\s*(#[^\n]*\s*)*name=\"{re.escape(name)}\"", code), (name, kind)
    # The labels: model_name (the panels filter on it) on the scheduler's and the tokenizer's metrics, tp_rank (the KV
    # panel tells engines apart by it) on the scheduler's.
    srt = source.parents[1]
    scheduler = (srt / "observability" / "scheduler_metrics_mixin.py").read_text()
    tokenizer = (srt / "managers" / "tokenizer_manager.py").read_text()
    for labels in (scheduler, tokenizer):
        assert '"model_name": self.server_args.served_model_name' in labels
    assert f'"{engine.engine_label}": tp_rank' in scheduler


def test_the_rollout_dashboard_is_its_generators_output():
    for name, text in rollout.generate().items():
        path = dashboards.dashboard_path(name)
        assert path.read_text() == text, f"{path} is stale or edited: run make dashboards"


def test_make_dashboards_writes_rays_dashboards_and_reports_drift(tmp_path: Path, capsys, monkeypatch):
    monkeypatch.setattr(dashboards, "dashboard_path", lambda name: tmp_path / f"{name}.json")
    assert main(["--check"]) == 1
    boards = generated()
    assert "rollout" in boards and "default" in boards
    sources = {name: "lab/dashboards/rollout.py" if name == "rollout" else "Ray's generator" for name in boards}
    assert capsys.readouterr().out.splitlines() == [f"{tmp_path / name}.json differs from {source}: run make "
                                                    "dashboards" for name, source in sources.items()]
    assert main([]) == 0
    assert capsys.readouterr().out.splitlines() == [
        f"wrote {tmp_path / name}.json ({len(text.encode()) // 1024} KiB)" for name, text in boards.items()]
    for name, text in boards.items():
        assert (tmp_path / f"{name}.json").read_text() == text == (dashboards.DASHBOARDS / f"{name}.json").read_text()
    assert main(["--check"]) == 0 and capsys.readouterr().out == ""
