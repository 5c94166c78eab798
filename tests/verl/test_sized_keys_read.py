"""Every key the sizing renders is one veRL uses (issue 34): each sized value of values/*.yaml (every number and
switch under ppo-job) is followed, by rendering it changed, to the Hydra keys of the chart's command it moves;
for each supported veRL version, each such key must be in veRL's resolved config (its Hydra config composed with
the command) and read by veRL's code (support.verlreads: an index of the version's source that setup keeps). A
budget veRL declares but never reads (0.9.1's critic.forward_max_token_len_per_gpu) fails here."""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path
from typing import Any

import pytest
import yaml
from omegaconf import OmegaConf

from generator.verlversions import by_version
from support import verlreads
from support.tools import ROOT, image_args, verl_versions
from test_verl_config import compose_with_verl, rendered_command

VALUES_FILES = sorted((ROOT / "values").glob("*.yaml"))
# Values of a values file that choose rather than size: text (paths, names) and the version itself.
NOT_SIZED = {"verlVersion", "algorithm.name", "model.path"}
ABSENT = object()


def sized_values(path: Path) -> dict[str, Any]:
    """ppo-job's numbers and switches in a values file, by dotted path under ppo-job."""
    found: dict[str, Any] = {}

    def walk(node: Any, prefix: str) -> None:
        if isinstance(node, dict):
            for key, value in node.items():
                walk(value, f"{prefix}.{key}" if prefix else key)
        elif isinstance(node, (bool, int, float)) and prefix not in NOT_SIZED:
            found[prefix] = node

    walk((yaml.safe_load(path.read_text()) or {}).get("ppo-job", {}), "")
    return found


def changes(value: Any) -> list[Any]:
    """Other values to render a sized value with, tried in order until the chart's rules accept one."""
    if isinstance(value, bool):
        return [not value]
    if isinstance(value, int):
        return [value * 2, value // 2, value + 1] if value > 1 else [value + 1, value * 4]
    return [round(value / 2, 4), round(min(1.0, value * 1.5), 4)]


def turned_off(version: str) -> dict[str, str]:
    """ppo-job's values a user moving a values file to this version turns off because the version lacks what they
    use: the chart's agent loop manager (files/verl-versions.yaml finalOutputRollouts) for vLLM's final output only."""
    facts = dict(by_version()[version].other)
    return {} if facts.get("finalOutputRollouts") else {"rollout.finalOutputOnly": "false"}


def base_args(path: Path, version: str) -> tuple[str, ...]:
    # A values file rendered for a version whose rollout servers export no metrics: the user turns them off, and
    # their dashboard, on an image of that version; and what else that version lacks (turned_off).
    off = [word for name, value in turned_off(version).items() for word in ("--set", f"ppo-job.{name}={value}")]
    return ("-f", str(path), *image_args(version), "--set", "global.rolloutMetrics.enabled=false",
            "--set", "observability.dashboards.include={default,data,train}", *off)


def overrides(words: list[str]) -> dict[str, str]:
    return dict(word.split("=", 1) for word in words[3:])


def renders(*args: str) -> bool:
    from support import helm as helm_cli
    from support.tools import helm_binaries

    return helm_cli.template(helm_binaries()["helm3"], *args).returncode == 0


@lru_cache(maxsize=None)
def keys_moved(path: Path, version: str, name: str, value: Any) -> tuple[tuple[str, ...], tuple[str, ...]] | None:
    """The command's keys that a sized value moves (their values change, or they come or go), and the command
    with the value changed; None where the chart's rules accept none of the changed values."""
    base = overrides(rendered_command(*base_args(path, version)))
    for other in changes(value):
        args = (*base_args(path, version), "--set-json", f"ppo-job.{name}={json.dumps(other)}")
        if not renders(*args):
            continue
        words = tuple(rendered_command(*args)[3:])
        changed = overrides(["", "", "", *words])
        return tuple(sorted(key for key in base.keys() | changed.keys() if base.get(key) != changed.get(key))), words
    return None


def representative(path: Path) -> Path:
    """The first values file whose ppo-job has the same sized names and switches: the chart renders the same keys
    from it (the figures differ, not the keys), so its keys are followed once."""
    def signature(other: Path) -> tuple:
        found = sized_values(other)
        return tuple(sorted((key, value if isinstance(value, bool) else None) for key, value in found.items()))
    return next(other for other in VALUES_FILES if signature(other) == signature(path))


def scenarios() -> list[Any]:
    """Each values file with each supported version (a file rendered for another version than its own: a user's
    move, which keeps the sized figures)."""
    return [pytest.param(path, version, id=f"{path.stem}-{version}") for path in VALUES_FILES
            for version in verl_versions()]


@pytest.mark.parametrize("path, version", scenarios())
def test_every_sized_value_reaches_a_key_veRL_reads(path, version):
    assert renders(*base_args(path, version)), "every values file renders for every supported version"
    source = representative(path)
    base = tuple(rendered_command(*base_args(source, version))[3:])
    problems = []
    for name, value in sized_values(source).items():
        if name in turned_off(version):
            continue
        found = keys_moved(source, version, name, value)
        if found is None:
            problems.append(f"ppo-job.{name}={value}: the chart's rules accept none of {changes(value)}")
            continue
        moved, changed = found
        if not moved:
            problems.append(f"ppo-job.{name}={value}: moves no key of veRL {version}'s command (an inert value)")
        for key in moved:
            words = base if key in overrides(["", "", "", *base]) else changed
            config = composed(version, words)
            if OmegaConf.select(config, key.lstrip("+"), default=ABSENT) is ABSENT:
                problems.append(f"ppo-job.{name} -> {key}: not in veRL {version}'s resolved config")
            if not verlreads.is_used(version, key, config):
                problems.append(f"ppo-job.{name} -> {key}: read by no code of veRL {version} "
                                f"(outside its config declarations)")
    assert problems == [], "\n".join(problems)


@lru_cache(maxsize=None)
def composed(version: str, words: tuple[str, ...]) -> Any:
    return compose_with_verl(version, list(words))


def test_the_index_finds_a_key_only_its_declarations_name(tmp_path):
    """The source index: a key read in the code counts, one only the config packages name does not."""
    import ast

    code = "def f(cfg):\n    a = cfg.critic.ppo_infer_max_token_len_per_gpu\n    b = cfg.get('ppo_epochs')\n" \
           "    c = cfg['use_dynamic_bsz']\n    d = getattr(cfg, 'shuffle', None)\n    cfg.written = 1\n"
    assert verlreads.names_read(ast.parse(code)) >= {"ppo_infer_max_token_len_per_gpu", "ppo_epochs",
                                                      "use_dynamic_bsz", "shuffle"}
    assert "written" not in verlreads.names_read(ast.parse(code))
    assert not verlreads.is_read("0.9.1", "critic.forward_max_token_len_per_gpu")  # declared, deprecated, unread
    assert verlreads.is_read("0.9.1", "+critic.ppo_infer_max_token_len_per_gpu")
    assert verlreads.is_read("0.4.1", "critic.forward_max_token_len_per_gpu")


# The code that packs the critic's update in each version's default trainer: 0.9.1's sets the critic engine's training
# budget (trainer/ppo/v1/trainer_base.py); 0.3's and 0.4's critic packs each mini batch in update_critic.
CRITIC_UPDATE_CODE = {"0.3.0.post1": "verl/workers/critic/dp_critic.py", "0.4.1": "verl/workers/critic/dp_critic.py",
                      "0.9.1": "verl/trainer/ppo/v1/trainer_base.py"}
BUDGET_NAME = "max_token_len_per_gpu"


def critic_update_reads(version: str) -> set[str]:
    """The config names ending in max_token_len_per_gpu that pack the critic's update: the value assigned to a
    critic's `.max_token_len_per_gpu`, or read inside `update_critic`."""
    import ast

    tree = ast.parse((verlreads.source_dir(version) / CRITIC_UPDATE_CODE[version]).read_text())
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and any(isinstance(target, ast.Attribute) and target.attr == BUDGET_NAME
                                                and "critic" in ast.unparse(target) for target in node.targets):
            scope = node.value
        elif isinstance(node, ast.FunctionDef) and node.name == "update_critic":
            scope = node
        else:
            continue
        found |= {name.attr for name in ast.walk(scope)
                  if isinstance(name, ast.Attribute) and name.attr.endswith(BUDGET_NAME)}
    return found


@pytest.mark.parametrize("version", verl_versions())
def test_the_critics_update_budget_fact_is_the_key_its_trainer_packs_the_update_by(version):
    """files/verl-versions.yaml's criticUpdateBudget (the plan and the sizing train the critic at it) names the value
    whose rendered key the version's default trainer packs the critic's update by."""
    from generator.verlversions import by_version

    budgets = {"ppoMaxTokenLenPerGpu": 2048, "forwardMaxTokenLenPerGpu": 6144}
    settings = ["--set", "ppo-job.algorithm.name=ppo", *image_args(version),
                "--set", "ppo-job.actor.useDynamicBsz=true",
                *(word for name, tokens in budgets.items() for word in ("--set", f"ppo-job.critic.{name}={tokens}"))]
    rendered = overrides(rendered_command(*settings))
    fact = by_version()[version].critic_update_budget
    (key,) = [key for key, value in rendered.items() if key.lstrip("+").startswith("critic.")
              and value == str(budgets[fact])]
    assert critic_update_reads(version) == {key.rsplit(".", 1)[-1]}, (fact, key)
