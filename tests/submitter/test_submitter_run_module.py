"""The run's module (VERL_PPO_RUN_MODULE: the chart's replay buffer for veRL 0.9.1) travels with the run as a Ray
py_modules package under its file's name, which the rendered command imports (pkg://<name>)."""

from __future__ import annotations

import io
import zipfile

import pytest

from test_submitter_unit import PREFLIGHT, preflight_run, settings, submitter

REPLAY_BUFFER = PREFLIGHT.parent / "verl_plugins.py"


def test_the_run_gets_its_module_as_a_package_and_the_preflight_does_not(monkeypatch, tmp_path):
    module = tmp_path / "verl_ppo_plugins.py"
    module.write_text(REPLAY_BUFFER.read_text())
    head = preflight_run(monkeypatch, [{"status": "SUCCEEDED"}])
    spec = {"entrypoint": "python3 -m verl.trainer.main_ppo", "runtime_env": {"env_vars": {"A": "1"}}}
    assert submitter.run(head, settings(job_spec=spec, preflight_program=str(PREFLIGHT), preflight_expected={},
                                        run_module=str(module))) == 0
    [(_, checked), (_, run)] = head.specs.items()
    name, content = submitter.module_package("verl_ppo_plugins", REPLAY_BUFFER.read_text())
    assert run["runtime_env"] == {"env_vars": {"A": "1"}, "py_modules": [f"gcs://{name}"]}
    assert run["entrypoint"] == spec["entrypoint"]
    assert f"gcs://{name}" not in checked["runtime_env"]["py_modules"]  # the preflight gets only its own
    with zipfile.ZipFile(io.BytesIO(head.packages[name])) as archive:
        assert archive.namelist() == ["verl_ppo_plugins.py"]
        assert archive.read("verl_ppo_plugins.py") == REPLAY_BUFFER.read_bytes()
    assert head.packages[name] == content


def test_without_a_module_the_spec_goes_as_the_chart_wrote_it(monkeypatch):
    head = preflight_run(monkeypatch, [])
    spec = {"entrypoint": "python3 -m verl.trainer.main_ppo", "runtime_env": {"env_vars": {"A": "1"}}}
    assert submitter.run(head, settings(job_spec=spec)) == 0
    assert list(head.specs.values()) == [spec] and head.packages == {}


@pytest.mark.parametrize("text", [None, "def broken(:\n"])
def test_a_missing_or_broken_module_is_unmendable(tmp_path, text):
    module = tmp_path / "verl_ppo_plugins.py"
    if text is not None:
        module.write_text(text)
    with pytest.raises(submitter.Unmendable, match="VERL_PPO_RUN_MODULE.*rolloutPollSeconds=null"):
        settings(run_module=str(module)).check_run_module()
    settings().check_run_module()  # none: nothing to check
