"""veRL accepts what the chart renders: the exact command of the rendered Job, composed with Hydra
against the `ppo_trainer` config of every supported veRL version (config files from its wheel)."""

import json
import shlex
from pathlib import Path

import pytest
import yaml
from hydra.errors import ConfigCompositionException
from omegaconf import OmegaConf

from generator import verlconfig
from generator.cli import main as generator_main
from support import helm as helm_cli
from support.tools import ROOT, helm_binaries, verl_config_dir, verl_versions

VALUES_FILES = [None, *sorted((ROOT / "values").glob("*.yaml")),
                *sorted((ROOT / "charts" / "verl-ppo" / "ci").glob("*-values.yaml"))]


def rendered_command(*args: str) -> list[str]:
    result = helm_cli.template(helm_binaries()["helm3"], *args)
    assert result.returncode == 0, result.output
    config = next(d for d in result.documents() if d["kind"] == "ConfigMap" and "job.json" in d["data"])
    return shlex.split(json.loads(config["data"]["job.json"])["entrypoint"])


def compose_with_verl(version: str, overrides: list[str]):
    config_dir = verl_config_dir(version)
    if not config_dir.exists():
        pytest.fail(f"{config_dir} missing: run scripts/setup.sh")
    return verlconfig.compose(config_dir, overrides)


def test_supported_versions_agree_everywhere():
    schema = yaml.safe_load((ROOT / "schemas" / "values.schema.yaml").read_text())
    enum = schema["properties"]["ppo-job"]["properties"]["verlVersion"]["enum"]
    assert [str(v) for v in enum] == verl_versions()


@pytest.mark.parametrize("version", verl_versions())
@pytest.mark.parametrize("path", VALUES_FILES, ids=lambda p: "defaults" if p is None else Path(p).stem)
def test_rendered_command_composes_with_verl(version, path):
    args = (["-f", str(path)] if path else []) + ["--set", f"ppo-job.verlVersion={version}"]
    words = rendered_command(*args)
    assert words[:3] == ["python3", "-m", "verl.trainer.main_ppo"]
    config = compose_with_verl(version, words[3:])
    assert OmegaConf.missing_keys(config) == set(), "mandatory veRL values left unset"
    values = yaml.safe_load(path.read_text()) if path else {}
    gpu = {**{"perNode": 2, "nodes": 2}, **values.get("global", {}).get("gpu", {})}
    assert config.trainer.nnodes == gpu["nodes"] and config.trainer.n_gpus_per_node == gpu["perNode"]
    assert str(config.trainer.default_local_dir).startswith("/data/checkpoints/")
    # veRL's own batch rule on the composed config (FSDP, fixed batch sizes).
    gpus = config.trainer.nnodes * config.trainer.n_gpus_per_node
    assert config.data.train_batch_size * config.actor_rollout_ref.rollout.n % gpus == 0
    actor = config.actor_rollout_ref.actor
    assert (actor.ppo_micro_batch_size is None) != (actor.ppo_micro_batch_size_per_gpu is None)
    if not actor.use_dynamic_bsz:
        per_gpu = actor.ppo_mini_batch_size * config.actor_rollout_ref.rollout.n // gpus
        assert per_gpu > 0 and per_gpu % actor.ppo_micro_batch_size_per_gpu == 0


@pytest.mark.parametrize("version", verl_versions())
def test_a_misspelled_extra_arg_fails_composition(version):
    words = rendered_command("--set", f"ppo-job.verlVersion={version}",
                             "--set", "ppo-job.extraArgs[0]=trainer.val_before_trian=False")
    with pytest.raises(ConfigCompositionException):
        compose_with_verl(version, words[3:])


def test_correct_extra_arg_composes():
    words = rendered_command("--set", "ppo-job.extraArgs[0]=trainer.val_before_train=False")
    assert compose_with_verl("0.4.1", words[3:]).trainer.val_before_train is False


def extra_args_file(tmp_path: Path, version: str, *args: str) -> Path:
    path = tmp_path / "extra.yaml"
    path.write_text(yaml.safe_dump({"ppo-job": {"verlVersion": version, "extraArgs": list(args)}}))
    return path


@pytest.mark.parametrize("version", verl_versions())
def test_generator_check_rejects_a_misspelled_extra_arg(version, tmp_path, capsys):
    path = extra_args_file(tmp_path, version, "trainer.critic_warmup=0", "trainer.val_before_trian=False")
    assert generator_main(["check", str(path)]) == 1
    output = capsys.readouterr().out
    assert f"ppo-job.extraArgs[1]=trainer.val_before_trian=False: is rejected by veRL {version}'s config" in output
    assert "extraArgs[0]" not in output


def test_generator_check_says_when_the_config_is_not_there(tmp_path, capsys, monkeypatch):
    from support.tools import helm_binaries

    monkeypatch.setenv("HELM", str(helm_binaries()["helm4"]))  # Helm stays; only veRL's configs are gone
    monkeypatch.setenv("VERL_PPO_CACHE", str(tmp_path / "empty-cache"))
    path = extra_args_file(tmp_path, "0.4.1", "trainer.val_before_trian=False")
    assert generator_main(["check", str(path)]) == 0
    assert "extraArgs not checked against veRL's config: veRL 0.4.1's config not found" in capsys.readouterr().err
