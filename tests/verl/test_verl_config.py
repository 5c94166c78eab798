"""veRL accepts what the chart renders: the exact command of the rendered Job, composed with Hydra
against the `ppo_trainer` config of every supported veRL version (config files from its wheel), each
value of the type veRL declares for it (its config dataclasses where the version has them, else its
default's type) and in the range its code needs."""

import functools
import json
import shlex
from pathlib import Path

import pytest
import yaml
from hydra.errors import ConfigCompositionException
from omegaconf import OmegaConf

from generator import verlconfig
from generator.algorithms import algorithms
from generator.verlversions import by_version
from generator.cli import main as generator_main
from support import helm as helm_cli
from support.tools import ROOT, helm_binaries, image_args, image_values, verl_config_dir, verl_versions

# Every veRL run the chart renders: the defaults, values/ and the ci/ scenarios.
VALUES_FILES = [None, *sorted((ROOT / "values").glob("*.yaml")),
                *sorted((ROOT / "values" / "examples").glob("*.yaml")),
                *sorted((ROOT / "charts" / "verl-ppo" / "ci").glob("*-values.yaml"))]
ALGORITHMS = algorithms()
VERSIONS = by_version()


def ppo_job_values(path: Path | None) -> dict:
    return (yaml.safe_load(path.read_text()) or {}).get("ppo-job", {}) if path else {}


def versions_of(path: Path | None) -> list[str]:
    """A scenario that names its veRL version (DAPO needs 0.9.1) is composed with that one; the others with each."""
    pinned = ppo_job_values(path).get("verlVersion")
    return [str(pinned)] if pinned else verl_versions()


SCENARIOS = [pytest.param(version, path, id=f"{'defaults' if path is None else Path(path).stem}-{version}")
             for path in VALUES_FILES for version in versions_of(path)]


@functools.lru_cache(maxsize=None)  # one render per set of arguments: several tests compose the same command
def _rendered_words(*args: str) -> tuple[str, ...]:
    result = helm_cli.template(helm_binaries()["helm3"], *args)
    assert result.returncode == 0, result.output
    config = next(d for d in result.documents() if d["kind"] == "ConfigMap" and "job.json" in d["data"])
    return tuple(shlex.split(json.loads(config["data"]["job.json"])["entrypoint"]))


def rendered_command(*args: str) -> list[str]:
    return list(_rendered_words(*args))


def compose_with_verl(version: str, overrides: list[str]):
    config_dir = verl_config_dir(version)
    if not config_dir.exists():
        pytest.fail(f"{config_dir} missing: run lab/scripts/setup.sh")
    return verlconfig.compose(config_dir, overrides)


@pytest.mark.parametrize("version, path", SCENARIOS)
def test_rendered_command_composes_with_verl(version, path):
    args = (["-f", str(path)] if path else []) + image_args(version)
    words = rendered_command(*args)
    assert words[:3] == ["python3", "-m", "verl.trainer.main_ppo"]
    config = compose_with_verl(version, words[3:])
    assert OmegaConf.missing_keys(config) == set(), "mandatory veRL values left unset"
    assert verlconfig.type_violations(verl_config_dir(version), config) == []
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
    words = rendered_command(*image_args(version),
                             "--set", "ppo-job.extraArgs[0]=trainer.val_before_trian=False")
    with pytest.raises(ConfigCompositionException):
        compose_with_verl(version, words[3:])


WRONG_VALUES = [
    ("actor_rollout_ref.rollout.gpu_memory_utilization=banana", "gpu_memory_utilization=banana: veRL "),
    ("actor_rollout_ref.rollout.gpu_memory_utilization=1.5", "must be > 0 and <= 1"),
    ("trainer.nnodes=-7", "must be >= 1"),
    ("trainer.n_gpus_per_node=0", "must be >= 1"),
    ("trainer.save_freq=banana", "save_freq=banana: veRL "),
    ("actor_rollout_ref.actor.ppo_mini_batch_size=banana", "ppo_mini_batch_size=banana: veRL "),
    ("actor_rollout_ref.model.enable_gradient_checkpointing=maybe", "enable_gradient_checkpointing=maybe: veRL "),
]


@pytest.mark.parametrize("override, reason", WRONG_VALUES, ids=[w[0] for w in WRONG_VALUES])
@pytest.mark.parametrize("version", verl_versions())
def test_a_wrong_type_or_impossible_value_in_the_command_fails(version, override, reason):
    """As if the chart rendered it: the rendered command with one value replaced (Hydra keeps the last)."""
    words = rendered_command(*image_args(version))
    config = compose_with_verl(version, [*words[3:], override])
    key, value = override.split("=", 1)
    found = verlconfig.type_violations(verl_config_dir(version), config)
    assert [f for f in found if f.startswith(f"{key}={value}: ")] == [f for f in found], found
    assert len(found) == 1 and reason in found[0], found


def test_the_declared_types_come_from_verls_dataclasses_where_it_has_them():
    found = verlconfig.type_violations(verl_config_dir("0.9.1"), compose_with_verl(
        "0.9.1", ["actor_rollout_ref.rollout.gpu_memory_utilization=banana"]))
    assert found == ["actor_rollout_ref.rollout.gpu_memory_utilization=banana: veRL declares float "
                     "(RolloutConfig.gpu_memory_utilization: float)"]


@pytest.mark.parametrize("override, found", [
    ("actor_rollout_ref.actor.ppo_epochs=banana",  # a field ActorConfig declares, FSDPActorConfig inherits
     "actor_rollout_ref.actor.ppo_epochs=banana: veRL declares int (FSDPActorConfig.ppo_epochs: int)"),
    ("actor_rollout_ref.actor.loss_scale_factor=banana",  # Optional[int]: None or an int
     "actor_rollout_ref.actor.loss_scale_factor=banana: veRL declares int (FSDPActorConfig.loss_scale_factor: "
     "Optional[int] = None)"),
    ("actor_rollout_ref.actor.loss_scale_factor=null", None),
    ("actor_rollout_ref.actor.ppo_micro_batch_size=null", None),
    ("actor_rollout_ref.rollout.gpu_memory_utilization=1", None),  # an int is a float too
    # A bool is no number.
    ("trainer.save_freq=true", "trainer.save_freq=True: veRL reads a number here (its default is a number)"),
    ("actor_rollout_ref.actor.clip_ratio=false", "actor_rollout_ref.actor.clip_ratio=False: veRL declares float "
                                                 "(FSDPActorConfig.clip_ratio: float)"),
    ("trainer.project_name=42", None),  # a str field takes any scalar, as OmegaConf converts it
    ("trainer.val_before_trian=False", "Key 'val_before_trian' is not in struct"),  # Hydra's first line
    ("actor_rollout_ref.rollout.gpu_memory_utilization=0",
     "actor_rollout_ref.rollout.gpu_memory_utilization=0: must be "
     "> 0 and <= 1 (the rollout engine's share of each GPU's memory; vLLM refuses more than 1)"),  # an open low end
    ("trainer.nnodes=1", None),  # a closed low end
    ("++trainer.nnodes=0", "trainer.nnodes=0: must be >= 1 (veRL builds its GPU resource pool as [n_gpus_per_node] * "
                           "nnodes)"),  # Hydra's force-add prefix names the same key
    ("trainer.nnodes=${trainer.n_gpus_per_node}", None),  # an interpolation is checked where it points
    ("trainer.nnodes=???", None),  # a value left to be given later
    ("trainer.n_gpus_per_node=1", None),  # each range's closed low end, and the value under it
    ("data.train_batch_size=1", None),
    ("data.train_batch_size=0",
     "data.train_batch_size=0: must be >= 1 (veRL divides it by the GPUs and the mini batch)"),
    ("actor_rollout_ref.rollout.n=1", None),
    ("actor_rollout_ref.rollout.n=0",
     "actor_rollout_ref.rollout.n=0: must be >= 1 (veRL repeats every prompt n times)"),
    ("actor_rollout_ref.actor.ppo_epochs=null",  # a field with a non-None default is no Optional
     "actor_rollout_ref.actor.ppo_epochs=None: veRL declares int (FSDPActorConfig.ppo_epochs: int)"),
    # No list in a str.
    ("trainer.project_name=[1,2]", "trainer.project_name=[1, 2]: veRL reads text here (its default is text)"),
])
def test_one_override_against_the_types_of_verl_0_9(override, found):
    assert verlconfig.rejected_override(verl_config_dir("0.9.1"), override) == found


# veRL 0.3 and 0.4 have YAML only: a float where the default is written as an integer is what veRL's code
# takes (sampling parameters, the entropy coefficient), never a wrong type; a value of another kind still is.
FLOATS_FOR_INTEGER_DEFAULTS = ["actor_rollout_ref.actor.entropy_coeff=0.01", "actor_rollout_ref.rollout.top_p=0.9",
                               "actor_rollout_ref.rollout.top_k=-1",
                               "actor_rollout_ref.rollout.val_kwargs.temperature=0.6",
                               "actor_rollout_ref.rollout.val_kwargs.top_p=0.95", "trainer.save_freq=2.5"]


@pytest.mark.parametrize("version", ["0.3.0.post1", "0.4.1"])
def test_a_float_for_an_integer_default_is_accepted(version):
    directory = verl_config_dir(version)
    for override in FLOATS_FOR_INTEGER_DEFAULTS:
        key = override.split("=", 1)[0]
        if OmegaConf.select(verlconfig.defaults(directory), key) is None:
            continue  # a key this version does not have (val_kwargs came with 0.4)
        assert verlconfig.rejected_override(directory, override) is None, override
    assert verlconfig.rejected_override(directory, "actor_rollout_ref.actor.entropy_coeff=banana") == (
        "actor_rollout_ref.actor.entropy_coeff=banana: veRL reads a number here (its default is a number)")
    assert verlconfig.rejected_override(directory, "actor_rollout_ref.rollout.top_p=true") is not None


@pytest.mark.parametrize("version", ["0.3.0.post1", "0.4.1"])
def test_generator_check_accepts_a_float_for_an_integer_default(version, tmp_path, capsys):
    path = extra_args_file(tmp_path, version, "actor_rollout_ref.actor.entropy_coeff=0.01",
                           "actor_rollout_ref.rollout.top_p=0.9")
    assert generator_main(["check", str(path)]) == 0, capsys.readouterr().out


def test_correct_extra_arg_composes():
    words = rendered_command("--set", "ppo-job.extraArgs[0]=trainer.val_before_train=False")
    assert compose_with_verl("0.4.1", words[3:]).trainer.val_before_train is False


def extra_args_file(tmp_path: Path, version: str, *args: str) -> Path:
    path = tmp_path / "extra.yaml"
    path.write_text(yaml.safe_dump({"global": {"image": image_values(version)},
                                    "ppo-job": {"verlVersion": version, "extraArgs": list(args)}}))
    return path


@pytest.mark.parametrize("version", verl_versions())
def test_generator_check_rejects_a_misspelled_extra_arg(version, tmp_path, capsys):
    path = extra_args_file(tmp_path, version, "trainer.critic_warmup=0", "trainer.val_before_trian=False")
    assert generator_main(["check", str(path)]) == 1
    output = capsys.readouterr().out
    assert f"ppo-job.extraArgs[1]=trainer.val_before_trian=False: is rejected by veRL {version}'s config" in output
    assert "extraArgs[0]" not in output


@pytest.mark.parametrize("version", verl_versions())
def test_generator_check_rejects_an_extra_arg_of_the_wrong_type(version, tmp_path, capsys):
    path = extra_args_file(tmp_path, version, "trainer.critic_warmup=banana")
    assert generator_main(["check", str(path)]) == 1
    assert ("ppo-job.extraArgs[0]=trainer.critic_warmup=banana: is rejected by veRL "
            f"{version}'s config: trainer.critic_warmup=banana: veRL ") in capsys.readouterr().out


def test_generator_check_says_when_the_config_is_not_there(tmp_path, capsys, monkeypatch):
    from support.tools import helm_binaries

    monkeypatch.setenv("HELM", str(helm_binaries()["helm4"]))  # Helm stays; only veRL's configs are gone
    monkeypatch.setenv("VERL_PPO_CACHE", str(tmp_path / "empty-cache"))
    path = extra_args_file(tmp_path, "0.4.1", "trainer.val_before_trian=False")
    assert generator_main(["check", str(path)]) == 0
    assert "extraArgs not checked against veRL's config: veRL 0.4.1's config not found" in capsys.readouterr().err


def rendered_keys(words: list[str]) -> set[str]:
    return {word.split("=", 1)[0] for word in words}


@pytest.mark.parametrize("version", verl_versions())
@pytest.mark.parametrize("algorithm", ALGORITHMS)
def test_each_algorithm_composes_with_veRLs_settings_for_its_estimator(algorithm, version):
    """Each preset where the version's main trainer has it (files/algorithms.yaml): veRL's estimator, no critic
    settings unless it trains one, reference settings only with a KL term, the KL where the table puts it,
    rollout.n the algorithm's, its fixed settings as given; elsewhere the rulebook names the version."""
    preset = ALGORITHMS[algorithm]
    result = helm_cli.template(helm_binaries()["helm3"], "--set", f"ppo-job.algorithm.name={algorithm}",
                               *image_args(version))
    if version not in preset.versions:
        assert result.returncode != 0
        assert f"ppo-job.algorithm.name={algorithm}: is not in veRL {version}'s main trainer" in result.output
        return
    words = rendered_command("--set", f"ppo-job.algorithm.name={algorithm}",
                             *image_args(version))[3:]
    config = compose_with_verl(version, words)
    assert OmegaConf.missing_keys(config) == set()
    algo, actor = config.algorithm, config.actor_rollout_ref.actor
    assert (algo.adv_estimator, config.actor_rollout_ref.rollout.n) == (preset.estimator, preset.responses_per_prompt)
    keys = rendered_keys(words)
    critic_keys = {key for key in keys if key.startswith("critic.") or key == "trainer.max_critic_ckpt_to_keep"}
    assert bool(critic_keys) == preset.critic, critic_keys
    assert ("actor_rollout_ref.ref.log_prob_micro_batch_size_per_gpu" in keys) == preset.reference
    assert actor.use_kl_loss == (preset.kl == "loss")
    if preset.kl == "loss":
        assert (actor.kl_loss_type, actor.kl_loss_coef) == ("low_var_kl", 0.001)
    if "use_kl_in_reward" in algo:  # 0.3 has no switch: it adds the KL penalty to the reward unless it is in the loss
        assert algo.use_kl_in_reward == (preset.kl == "reward")
    for override in preset.overrides:
        key, value = override.split("=", 1)
        assert str(OmegaConf.select(config, key)).lower() == value.lower(), override
    if VERSIONS[version].rollout_mode:  # its defaults that bite, rendered explicitly
        assert {"actor_rollout_ref.rollout.mode", "actor_rollout_ref.rollout.tensor_model_parallel_size"} <= keys


@pytest.mark.parametrize("path", ["/data/rewards/score.py", "/data/my rewards/score it.py"])  # a space arrives quoted
@pytest.mark.parametrize("version", verl_versions())
def test_custom_reward_function_lands_where_the_version_reads_it(version, path):
    words = rendered_command("--set", f"ppo-job.reward.functionPath={path}",
                             "--set", "ppo-job.reward.functionName=score",
                             *image_args(version))
    config = compose_with_verl(version, words[3:])
    section = OmegaConf.select(config, VERSIONS[version].custom_reward_key)
    assert (section.path, section.name) == (path, "score")


# Values that Hydra's override grammar or OmegaConf would otherwise read as syntax or as another type.
LITERAL_PATHS = [
    "/data/模型/Qwen2.5-0.5B",
    "/data/models/a=b,c",
    "/data/models/it's \"quoted\"",
    "/data/models/[list]{dict}",
    "/data/models/#not-a-comment ~tilde",
    "/data/models/${oc.env:HOME}",
    "/data/models/with space",
    "/data/hive/dt=2026-12-03/part,1",
    "/data/数据集/Qwen2.5,指令=版",
]
LITERAL_NAMES = ["null", "true", "nan", "inf", "2024", "1e3", "a,b", "x=y"]


@pytest.mark.parametrize("version", verl_versions())
@pytest.mark.parametrize("path", LITERAL_PATHS)
def test_a_model_path_arrives_as_given(version, path, tmp_path):
    """The rendered command, composed by veRL's Hydra config and resolved, carries the path literally."""
    values = tmp_path / "path.yaml"
    values.write_text(json.dumps({"global": {"image": image_values(version)},
                                  "ppo-job": {"verlVersion": version, "model": {"path": path},
                                              "critic": {"modelPath": f"{path} critic"},
                                              "data": {"trainFiles": f"{path}/train.parquet",
                                                       "valFiles": f"{path}/test.parquet"}}}))
    config = compose_with_verl(version, rendered_command("-f", str(values))[3:])
    resolved = OmegaConf.to_container(config, resolve=True)
    assert resolved["actor_rollout_ref"]["model"]["path"] == path
    assert resolved["critic"]["model"]["path"] == f"{path} critic"
    assert resolved["data"]["train_files"] == f"{path}/train.parquet"
    assert resolved["data"]["val_files"] == f"{path}/test.parquet"


@pytest.mark.parametrize("version", verl_versions())
def test_the_tables_config_sections_are_the_configs(version):
    """files/verl-versions.yaml's configSections, which the rulebook holds an extraArgs key to, are the top-level
    sections of the version's ppo_trainer config."""
    assert list(VERSIONS[version].config_sections) == list(compose_with_verl(version, []).keys())


@pytest.mark.parametrize("name", LITERAL_NAMES)
def test_an_experiment_name_stays_a_string(name, tmp_path):
    values = tmp_path / "name.yaml"
    # JSON (a YAML subset) quotes every string: PyYAML would write 1e3 bare, which Helm reads as a number.
    values.write_text(json.dumps({"ppo-job": {"trainer": {"experimentName": name, "projectName": name}}}))
    result = helm_cli.template(helm_binaries()["helm3"], "-f", str(values))
    if result.returncode:  # the schema refuses names that are not directory names
        assert "experimentName" in result.output and name in ("a,b", "x=y"), result.output
        return
    config = compose_with_verl("0.4.1", rendered_command("-f", str(values))[3:])
    resolved = OmegaConf.to_container(config, resolve=True)
    assert resolved["trainer"]["experiment_name"] == name and resolved["trainer"]["project_name"] == name
    assert resolved["trainer"]["default_local_dir"] == f"/data/checkpoints/verl-ppo/{name}"


def test_config_dir_falls_back_to_an_installed_verl_of_that_version(tmp_path, monkeypatch):
    """Without the setup cache, veRL's config comes from an installed veRL, only of the version asked for."""
    import importlib
    import sys

    site = tmp_path / "site"
    config = site / "verl" / "trainer" / "config"
    config.mkdir(parents=True)
    (site / "verl" / "__init__.py").write_text("")
    (site / "verl-0.4.1.dist-info").mkdir()
    (site / "verl-0.4.1.dist-info" / "METADATA").write_text("Metadata-Version: 2.1\nName: verl\nVersion: 0.4.1\n")
    monkeypatch.setenv("VERL_PPO_CACHE", str(tmp_path / "empty-cache"))
    assert verlconfig.config_dir("0.4.1") is None, "no cache and no veRL installed"
    monkeypatch.syspath_prepend(str(site))
    monkeypatch.delitem(sys.modules, "verl", raising=False)
    importlib.invalidate_caches()
    assert verlconfig.config_dir("0.4.1") == config
    assert verlconfig.config_dir("0.9.1") is None, "an installed veRL of another version"
    config.rmdir()
    assert verlconfig.config_dir("0.4.1") is None, "an installed veRL without its config"


def test_each_wrong_type_in_one_config_is_listed():
    directory = verl_config_dir("0.9.1")
    config = verlconfig.compose(directory, ["actor_rollout_ref.rollout.gpu_memory_utilization=banana",
                                            "trainer.save_freq=banana", "trainer.nnodes=0"])
    assert verlconfig.type_violations(directory, config) == [
        "actor_rollout_ref.rollout.gpu_memory_utilization=banana: veRL declares float "
        "(RolloutConfig.gpu_memory_utilization: float)",
        "trainer.nnodes=0: must be >= 1 (veRL builds its GPU resource pool as [n_gpus_per_node] * nnodes)",
        "trainer.save_freq=banana: veRL reads a number here (its default is a number)"]


@pytest.mark.parametrize("version", verl_versions())
@pytest.mark.parametrize("algorithm", ["ppo", "grpo"])
def test_token_budgets_and_checkpointing_land_in_every_pass(algorithm, version):
    """The sizing's token budgets (issue 27): the actor's use_dynamic_bsz is the only switch the chart renders,
    so in every version the rollout's, the reference's and the critic's passes must follow it, each with its
    own budget; checkpointing off reaches the actor and the critic."""
    settings = ["--set", f"ppo-job.algorithm.name={algorithm}", *image_args(version),
                "--set", "ppo-job.actor.useDynamicBsz=true", "--set", "ppo-job.actor.ppoMaxTokenLenPerGpu=4096",
                "--set", "ppo-job.rollout.logProbMaxTokenLenPerGpu=8192",
                "--set", "ppo-job.ref.logProbMaxTokenLenPerGpu=12288",
                "--set", "ppo-job.critic.ppoMaxTokenLenPerGpu=2048",
                "--set", "ppo-job.critic.forwardMaxTokenLenPerGpu=6144",
                "--set", "ppo-job.model.enableGradientCheckpointing=false"]
    config = compose_with_verl(version, rendered_command(*settings)[3:])
    actor_rollout_ref = config.actor_rollout_ref
    assert actor_rollout_ref.actor.use_dynamic_bsz and actor_rollout_ref.actor.ppo_max_token_len_per_gpu == 4096
    rollout, ref = actor_rollout_ref.rollout, actor_rollout_ref.ref
    assert rollout.log_prob_use_dynamic_bsz and rollout.log_prob_max_token_len_per_gpu == 8192
    assert ref.log_prob_use_dynamic_bsz and ref.log_prob_max_token_len_per_gpu == 12288
    assert actor_rollout_ref.model.enable_gradient_checkpointing is False
    if algorithm == "ppo":
        assert config.critic.use_dynamic_bsz
        forward_key = VERSIONS[version].critic_forward_budget_key.lstrip("+")  # the key the version's critic reads
        assert (config.critic.ppo_max_token_len_per_gpu, OmegaConf.select(config, forward_key)) == (2048, 6144)
        assert config.critic.model.enable_gradient_checkpointing is False


@pytest.mark.parametrize("engine", ["vllm", "sglang"])
def test_rollout_server_metrics_compose_and_switch_verls_metrics_on(engine):
    """0.9.1's async servers record and serve their metrics only with both switches: prometheus.enable alone
    fails at start-up while disable_log_stats keeps its default (true)."""
    words = rendered_command(*image_args("0.9.1"), "--set",
                             f"ppo-job.rollout.name={engine},global.rolloutMetrics.enabled=true")[3:]
    config = compose_with_verl("0.9.1", words)
    rollout = config.actor_rollout_ref.rollout
    assert (rollout.mode, rollout.name, rollout.prometheus.enable, rollout.disable_log_stats) == \
        ("async", engine, True, False)
    # The head's sidecar listens on that port and reads that file (raycluster.rolloutPrometheusContainer).
    assert (rollout.prometheus.port, rollout.prometheus.file) == (9090, "/tmp/ray/verl-ppo/rollout-prometheus.yml")
    assert verlconfig.type_violations(verl_config_dir("0.9.1"), config) == []


LORA_VERSIONS = [version for version, entry in VERSIONS.items() if dict(entry.other).get("loraKeys")]


@pytest.mark.parametrize("version", LORA_VERSIONS)
@pytest.mark.parametrize("algorithm", ["ppo", "grpo"])
def test_lora_lands_where_each_version_reads_it(algorithm, version):
    """model.lora and critic.lora, as far as the version reads them (files/verl-versions.yaml loraKeys), composed with
    its config; the rollout loads vLLM's base from the safetensors (veRL's LoRA guide), the frozen base in bf16 where
    the version has the key."""
    facts = dict(VERSIONS[version].other)
    keys = facts["loraKeys"]
    settings = ["--set", f"ppo-job.algorithm.name={algorithm}", *image_args(version),
                "--set", "ppo-job.model.path=/data/Qwen2.5-7B-Instruct",
                "--set", "ppo-job.model.lora.rank=32,ppo-job.model.lora.alpha=64,ppo-job.model.lora.layeredSummon=true",
                "--set-json", 'ppo-job.model.lora.targetModules=["q_proj","v_proj"]']
    if algorithm == "ppo":  # the critic's LoRA where there is a critic (the rulebook refuses it elsewhere)
        settings += ["--set", "ppo-job.critic.lora.rank=8"]
        if "excludeModules" in keys:
            settings += ["--set-json", 'ppo-job.critic.lora.excludeModules=["down_proj"]']
    if "adapterPath" in keys:
        settings += ["--set", "ppo-job.model.lora.adapterPath=/data/adapters/run 1/lora_adapter"]
    config = compose_with_verl(version, rendered_command(*settings)[3:])
    assert verlconfig.type_violations(verl_config_dir(version), config) == []
    model, rollout = config.actor_rollout_ref.model, config.actor_rollout_ref.rollout
    assert (model.lora_rank, model.lora_alpha, list(model.target_modules)) == (32, 64, ["q_proj", "v_proj"])
    assert (rollout.load_format, rollout.layered_summon) == ("safetensors", True)
    if "adapterPath" in keys:
        assert model.lora_adapter_path == "/data/adapters/run 1/lora_adapter"
    if facts["loraBaseDtype"]:
        assert config.actor_rollout_ref.actor.fsdp_config.model_dtype == "bf16"
    if facts.get("loraActorStrategy"):  # the reference follows the actor's engine
        assert config.actor_rollout_ref.actor.strategy == facts["loraActorStrategy"]
        assert config.actor_rollout_ref.ref.strategy == facts["loraActorStrategy"]
    if algorithm == "ppo":
        critic = config.critic.model
        assert (critic.lora_rank, critic.lora_alpha, critic.target_modules) == (8, 16, "all-linear")
        if "excludeModules" in keys:
            assert critic.exclude_modules == ".*[.](down_proj)"  # peft: a pattern of the whole module name
    else:
        assert config.critic.model.lora_rank == 0  # no critic: its LoRA is not rendered


@pytest.mark.parametrize("version", verl_versions())
def test_no_lora_key_is_rendered_without_lora(version):
    """LoRA off (rank 0, the default) renders none of its keys: every existing run's command stays as it was."""
    words = rendered_command(*image_args(version))
    assert not [word for word in words if "lora" in word or "load_format" in word or "model_dtype" in word
                or word.startswith("actor_rollout_ref.actor.strategy=")]
