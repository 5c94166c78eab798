"""ppo-job.trainer.mode and the chart's plug-ins (issue 34) in veRL's own config: each mode the table gives a
version composes with that version's Hydra config into its trainer.v1.trainer_mode; the replay buffer's keys
compose and carry what veRL hands its own replay buffer (DAPO's group filtering); the final-output agent loop
manager composes into the key veRL loads it by; the versions without them render neither, and the rulebook and
`generator check` refuse a mode a version lacks, an interval nothing polls (an older veRL, the legacy trainer, which
reads no trainer.v1.sampler) and a trainer switch that is neither plainly true nor false."""

from __future__ import annotations

import ast
import json
import warnings

import pytest
import yaml
from omegaconf import OmegaConf

from generator import verlconfig
from generator.cli import main as generator_main
from generator.verlversions import by_version
from support import helm as helm_cli
from support import verlreads
from support.tools import ROOT, helm_binaries, image_args, verl_config_dir, verl_versions
from test_verl_config import compose_with_verl, rendered_command, rendered_keys

VERSIONS = by_version()


def flat(output: str) -> str:
    """Helm's and generator check's output on one line, as they wrap a long finding."""
    return " ".join(output.split())


MODES = [pytest.param(version, mode, id=f"{version}-{mode}")
         for version in verl_versions() for mode in VERSIONS[version].trainer_modes]


def plugins_source() -> str:
    from support.tools import ROOT

    return (ROOT / "charts/verl-ppo/charts/ppo-job/files/verl_plugins.py").read_text()


def handed_on() -> tuple[str, ...]:
    """The sampler_kwargs names the chart's replay buffer hands on to veRL's (its HANDED_ON), and its interval."""
    for statement in ast.parse(plugins_source()).body:
        if isinstance(statement, ast.Assign) and getattr(statement.targets[0], "id", "") == "HANDED_ON":
            return (*ast.literal_eval(statement.value), "poll_interval_s")
    raise AssertionError("verl_plugins.py has no HANDED_ON")


@pytest.mark.parametrize("version, mode", MODES)
def test_each_mode_composes_into_the_versions_trainer_mode(version, mode):
    # separate_async needs its pool (tests/verl/test_rollout_pool.py).
    pool = ["--set", "global.rolloutPool.enabled=true"] if mode == "separate_async" else []
    words = rendered_command(*image_args(version), "--set", f"ppo-job.trainer.mode={mode}", *pool)
    config = compose_with_verl(version, words[3:])
    assert OmegaConf.missing_keys(config) == set()
    assert verlconfig.type_violations(verl_config_dir(version), config) == []
    facts = VERSIONS[version]
    if facts.trainer_mode_key:
        assert OmegaConf.select(config, facts.trainer_mode_key) == mode
        assert mode in OmegaConf.select(config, facts.trainer_mode_key.rsplit(".", 1)[0])  # veRL has its settings
    else:
        assert not any(key.startswith("trainer.v1") for key in rendered_keys(words[3:]))


@pytest.mark.parametrize("version", verl_versions())
@pytest.mark.parametrize("algorithm", ["ppo", "dapo"])
def test_the_replay_buffer_composes_and_gets_what_veRL_gives_its_own(version, algorithm):
    args = (*image_args(version), "--set", f"ppo-job.algorithm.name={algorithm}")
    if algorithm == "dapo" and version != "0.9.1":
        return  # DAPO is in 0.9.1's trainer only (its since); the rulebook refuses it elsewhere
    words = rendered_command(*args)[3:]
    config = compose_with_verl(version, words)
    sampler = OmegaConf.select(config, "trainer.v1.sampler")
    if not VERSIONS[version].quick_poll_sampler:
        assert sampler is None and not any("sampler" in word for word in words)
        return
    assert (sampler.custom_sampler.path, sampler.custom_sampler.name) == \
        ("pkg://verl_ppo_plugins", "quick_poll_replay_buffer")
    assert "def quick_poll_replay_buffer(" in plugins_source()
    kwargs = OmegaConf.to_container(sampler.sampler_kwargs)
    assert set(kwargs) <= set(handed_on()) and kwargs["poll_interval_s"] == 0.05
    if algorithm == "dapo":  # veRL's _build_replay_buffer gives its own these for group filtering (sync)
        filter_groups = config.algorithm.filter_groups
        assert kwargs == {"poll_interval_s": 0.05, "filter_groups_metric": filter_groups.metric, "gen_batch_size": 1,
                          "max_inflight_gen_batches": filter_groups.get("max_inflight_gen_batches", 1),
                          "train_batch_size": config.data.train_batch_size}
    else:
        assert kwargs == {"poll_interval_s": 0.05}
    off = compose_with_verl(version, rendered_command(*args, "--set", "ppo-job.trainer.rolloutPollSeconds=null")[3:])
    assert off.trainer.v1.sampler.custom_sampler.path is None and off.trainer.v1.sampler.sampler_kwargs == {}


def test_the_replay_buffer_travels_with_the_run():
    """The module the command names is the ConfigMap's file the submitter ships (VERL_PPO_RUN_MODULE)."""
    result = helm_cli.template(helm_binaries()["helm3"], *image_args("0.9.1"))
    assert result.returncode == 0, result.output
    config_map = next(d for d in result.documents() if d["kind"] == "ConfigMap" and "job.json" in d["data"])
    assert config_map["data"]["verl_ppo_plugins.py"].strip() == plugins_source().strip()
    assert submitter_env(result.documents())["VERL_PPO_RUN_MODULE"] == "/etc/verl-ppo/verl_ppo_plugins.py"
    off = helm_cli.template(helm_binaries()["helm3"], *image_args("0.9.1"),
                            "--set", "ppo-job.trainer.rolloutPollSeconds=null")
    assert not any("verl_ppo_plugins.py" in (d.get("data") or {}) for d in off.documents())
    assert "VERL_PPO_RUN_MODULE" not in submitter_env(off.documents())


def submitter_env(documents: list[dict]) -> dict[str, str]:
    job = next(d for d in documents if d["kind"] == "Job" and "helm.sh/hook" not in
               (d["metadata"].get("annotations") or {}))
    return {e["name"]: e.get("value") for e in job["spec"]["template"]["spec"]["containers"][0]["env"]}


BAD_MODES = [
    (["--set-string", "ppo-job.verlVersion=0.4.1", "--set", "ppo-job.trainer.mode=colocate_async"],
     "ppo-job.trainer.mode=colocate_async: is not a trainer mode of veRL 0.4.1 (it has sync). Fix: --set "
     "ppo-job.trainer.mode=sync, or --set-string ppo-job.verlVersion=0.9.1"),
    ([*image_args("0.9.1"), "--set", "ppo-job.trainer.mode=colocate_async",
      "--set", "ppo-job.extraArgs[0]=trainer.use_v1=False"],
     "ppo-job.trainer.mode=colocate_async: needs veRL's default trainer, but ppo-job.extraArgs[0]=trainer.use_v1=False "
     "asks for its legacy one, which has only sync"),
    ([*image_args("0.9.1"), "--set", "ppo-job.extraArgs[0]=trainer.v1.trainer_mode=sync"],
     "ppo-job.extraArgs[0]=trainer.v1.trainer_mode=sync: sets a key the chart renders from values"),
]


@pytest.mark.parametrize("args, message", BAD_MODES, ids=["version-without-modes", "legacy-trainer", "mode-in-extra"])
def test_a_mode_veRL_would_not_run_is_refused_by_helm_and_generator_check(args, message, capsys):
    result = helm_cli.template(helm_binaries()["helm4"], *args)
    assert result.returncode != 0 and message in flat(result.output), result.output
    assert generator_main(["check", *args]) == 1
    assert message in flat(capsys.readouterr().out)


# Ways to write trainer.use_v1's value. veRL tests it by Python's truth: what Hydra makes of each picks the trainer.
# The last ones are plainly true: a number Hydra reads as non-zero, the smallest with 199 zeros after the point.
USE_V1_SPELLINGS = ["false", "False", "FALSE", "0", "-0", "0.0", ".0", "0e0", "null", "NULL", "''", '""', "[]", "{}",
                    "'false'", '"false"', "'False'", '"False"', "true", "True", "1", "0.5", "-1", ".5", "1_000", "1e3",
                    "1e-99", "0." + "0" * 199 + "1"]
SWITCH_REFUSAL = "is not plainly true or false"


@pytest.mark.parametrize("spelling", USE_V1_SPELLINGS)
def test_each_spelling_of_the_legacy_trainer_meets_the_mode_rule(spelling):
    """Beside a mode, the rulebook (ppo-job.hydraFalse) refuses each trainer.use_v1 that veRL 0.9.1's config, composed
    with Hydra, reads as false, and false quoted: Hydra keeps that as text veRL would take for true, against its
    writer's word. Every other spelling passes the rule."""
    value = compose_with_verl("0.9.1", [f"trainer.use_v1={spelling}"]).trainer.use_v1
    asks_legacy = not value or (isinstance(value, str) and value.lower() == "false")
    extra = "ppo-job.extraArgs=" + json.dumps([f"trainer.use_v1={spelling}"])
    result = helm_cli.template(helm_binaries()["helm4"], *image_args("0.9.1"),
                               "--set", "ppo-job.trainer.mode=colocate_async", "--set-json", extra)
    refusal = ("ppo-job.trainer.mode=colocate_async: needs veRL's default trainer, but "
               f"ppo-job.extraArgs[0]=trainer.use_v1={spelling} ")
    assert (refusal in result.output) == asks_legacy, (value, result.output)
    assert (result.returncode != 0) == asks_legacy, (value, result.output)
    assert SWITCH_REFUSAL not in result.output, result.output


# Neither plainly true nor false: Hydra keeps each as text (a list, a map; nan and inf are no switch), which veRL,
# testing the switch by Python's truth, reads as true, whatever its writer meant.
UNPLAIN_SPELLINGS = ["00", "01", "'0'", '"0"', "no", "off", "'no'", "n", "yes", "on", "'true'", "0x1", "nan", "inf",
                     "[0]", "{a:1}"]
SWITCHES = ["trainer.use_v1", "actor_rollout_ref.hybrid_engine"]


def switch_refusal(key: str, arg: str) -> str:
    return (f"ppo-job.extraArgs[0]={arg}: is not plainly true or false: veRL tests {key} by Python's truth, which "
            f"takes a text Hydra keeps (no, off, 00, '0') for true. Fix: write {key}=true or {key}=false")


@pytest.mark.parametrize("key", SWITCHES)
@pytest.mark.parametrize("spelling", UNPLAIN_SPELLINGS)
def test_a_switch_veRL_reads_as_true_against_its_spelling_is_refused(key, spelling, capsys):
    """veRL 0.9.1's config, composed with Hydra, holds each such spelling as a value that is no bool and is true;
    the rulebook refuses it, naming the item, the value and the fix, and generator check says the same words."""
    value = OmegaConf.select(compose_with_verl("0.9.1", [f"{key}={spelling}"]), key)
    assert not isinstance(value, bool) and value, value
    args = [*image_args("0.9.1"), "--set-json", "ppo-job.extraArgs=" + json.dumps([f"{key}={spelling}"])]
    result = helm_cli.template(helm_binaries()["helm4"], *args)
    assert result.returncode != 0 and switch_refusal(key, f"{key}={spelling}") in flat(result.output), result.output
    assert generator_main(["check", *args]) == 1
    assert switch_refusal(key, f"{key}={spelling}") in flat(capsys.readouterr().out)


@pytest.mark.parametrize("spelling", ["1e-400", "0." + "0" * 400 + "1"])
def test_a_number_hydra_reads_as_zero_is_refused_as_no_plain_switch(spelling):
    """A non-zero spelling that underflows to 0.0: veRL reads false (the legacy trainer), which ppo-job.hydraFalse
    does not see; the switch rule refuses it."""
    assert compose_with_verl("0.9.1", [f"trainer.use_v1={spelling}"]).trainer.use_v1 == 0.0
    result = helm_cli.template(helm_binaries()["helm4"], *image_args("0.9.1"),
                               "--set-json", "ppo-job.extraArgs=" + json.dumps([f"trainer.use_v1={spelling}"]))
    assert result.returncode != 0, result.output
    assert switch_refusal("trainer.use_v1", f"trainer.use_v1={spelling}") in flat(result.output), result.output


@pytest.mark.parametrize("setting, field", [("ppo-job.trainer.mode=separate", "/trainer/mode"),
                                            ("ppo-job.trainer.rolloutPollSeconds=0.001", "/trainer/rolloutPollSeconds"),
                                            ("ppo-job.trainer.rolloutPollSeconds=3", "/trainer/rolloutPollSeconds")])
def test_the_schema_bounds_the_mode_and_the_poll(setting, field):
    result = helm_cli.template(helm_binaries()["helm4"], "--set", setting)
    assert result.returncode != 0 and field in result.output, result.output


@pytest.mark.parametrize("version", verl_versions())
def test_a_poll_interval_is_refused_where_nothing_polls(version, capsys):
    """A version whose trainer polls no replay buffer renders no interval: there the default and null pass, another
    value is refused, naming it, by Helm and generator check alike; a version that polls takes each."""
    polls = VERSIONS[version].quick_poll_sampler
    for seconds in ("null", "0.05", "0.5"):
        args = [*image_args(version), "--set-json", f"ppo-job.trainer.rolloutPollSeconds={seconds}"]
        refused = seconds == "0.5" and not polls
        result = helm_cli.template(helm_binaries()["helm4"], *args)
        assert (result.returncode != 0) == refused, result.output
        assert generator_main(["check", *args]) == int(refused)
        if refused:
            said = flat(capsys.readouterr().out)
            assert f"ppo-job.trainer.rolloutPollSeconds=0.5: is ignored by veRL {version}" in said, said
            assert "Fix: leave ppo-job.trainer.rolloutPollSeconds at 0.05 or null" in said, said


def values_default_poll() -> float:
    values = yaml.safe_load((ROOT / "charts/verl-ppo/charts/ppo-job/values.yaml").read_text())
    return values["trainer"]["rolloutPollSeconds"]


def test_the_legacy_trainer_reads_no_replay_buffer():
    """What ppo-job.rules.rolloutPollLegacyTrainer rests on: in veRL 0.9.1 only the v1 trainers read
    trainer.v1.sampler (where the chart's replay buffer and its interval go); the legacy trainer's modules read no
    trainer.v1 at all."""
    root = verlreads.source_dir("0.9.1")
    readers, v1_readers = set(), set()
    for module in sorted((root / "verl").rglob("*.py")):
        with warnings.catch_warnings():  # veRL's own invalid escapes are not ours to report
            warnings.simplefilter("ignore")
            tree = ast.parse(module.read_text(encoding="utf-8"))
        name = module.relative_to(root).as_posix()
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and node.attr == "v1":
                v1_readers.add(name)
            if isinstance(node, ast.Attribute) and node.attr == "sampler" and \
                    isinstance(node.value, ast.Attribute) and node.value.attr == "v1":
                readers.add(name)
    assert readers and all(name.startswith("verl/trainer/ppo/v1/") for name in readers), readers
    legacy = {"verl/trainer/main_ppo_v0.py", "verl/trainer/ppo/ray_trainer.py"}
    assert all((root / name).is_file() for name in legacy) and not legacy & v1_readers, v1_readers


@pytest.mark.parametrize("spelling", ["false", "FALSE"])
def test_a_poll_interval_is_refused_with_the_legacy_trainer(spelling, capsys):
    """With trainer.use_v1 false in extraArgs, veRL 0.9.1's legacy trainer reads no replay buffer: values.yaml's
    default and null pass (the rules' ppo-job.rolloutPollDefault is that default), another interval is refused,
    naming it, the item and the fix, by Helm 3, Helm 4 and generator check in the same words."""
    default = values_default_poll()
    extra = "ppo-job.extraArgs=" + json.dumps(["trainer.val_before_train=false", f"trainer.use_v1={spelling}"])
    for seconds in ("null", json.dumps(default), "0.5", json.dumps(round(default * 2, 6))):
        args = [*image_args("0.9.1"), "--set-json", extra,
                "--set-json", f"ppo-job.trainer.rolloutPollSeconds={seconds}"]
        refused = seconds not in ("null", json.dumps(default))
        shown = json.loads(seconds)
        message = (f"ppo-job.trainer.rolloutPollSeconds={shown}: is ignored by veRL's legacy trainer, which "
                   f"ppo-job.extraArgs[1]=trainer.use_v1={spelling} asks for: it polls no replay buffer. Fix: remove "
                   f"ppo-job.extraArgs[1], or leave ppo-job.trainer.rolloutPollSeconds at {default} or null")
        for helm in helm_binaries().values():
            result = helm_cli.template(helm, *args)
            assert (result.returncode != 0) == refused, result.output
            assert (message in flat(result.output)) == refused, result.output
        assert generator_main(["check", *args]) == int(refused)
        assert (message in flat(capsys.readouterr().out)) == refused
    # The interval would have gone where only the v1 trainers look.
    config = compose_with_verl("0.9.1", rendered_command(*image_args("0.9.1"), "--set-json", extra)[3:])
    assert config.trainer.v1.sampler.sampler_kwargs.poll_interval_s == default
    assert config.trainer.use_v1 is False


def test_the_final_output_manager_composes_and_travels_with_the_run():
    """rollout.finalOutputOnly names the plug-ins' manager in the key veRL 0.9.1 loads it by, and ships the plug-ins
    even with veRL's own replay buffer."""
    args = (*image_args("0.9.1"), "--set", "ppo-job.rollout.finalOutputOnly=true",
            "--set", "ppo-job.trainer.rolloutPollSeconds=null")
    config = compose_with_verl("0.9.1", rendered_command(*args)[3:])
    assert verlconfig.type_violations(verl_config_dir("0.9.1"), config) == []
    assert config.actor_rollout_ref.rollout.agent.agent_loop_manager_class == \
        "verl_ppo_plugins.FinalOutputAgentLoopManager"
    assert "FinalOutputAgentLoopManager" in plugins_source()
    assert config.trainer.v1.sampler.custom_sampler.path is None
    result = helm_cli.template(helm_binaries()["helm3"], *args)
    assert result.returncode == 0, result.output
    assert submitter_env(result.documents())["VERL_PPO_RUN_MODULE"] == "/etc/verl-ppo/verl_ppo_plugins.py"
    off = compose_with_verl("0.9.1", rendered_command(*image_args("0.9.1"))[3:])
    assert "agent_loop_manager_class" not in off.actor_rollout_ref.rollout.agent
