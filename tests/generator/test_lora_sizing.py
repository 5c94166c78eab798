"""LoRA runs sized and planned (issue 35 item 2): the actor's frozen base in bf16, the adapters' states only, the
reference as the actor without its adapters, and what that frees given to the rollout."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
import yaml

from generator import memory, paths
from generator.algorithms import algorithms
from generator.catalog import load_catalog
from generator.cli import main
from generator.plan import inputs_for, plan

CATALOG = load_catalog()
SEVEN_B = CATALOG.models["qwen2.5-7b"]
ONE_H200 = replace(CATALOG.shapes["h200-141g-x8"], name="h200-141g-x1", gpus_per_node=1)


def planned(lora_rank: int, shape=ONE_H200, algorithm: str = "grpo"):
    return plan(inputs_for(CATALOG, shape, SEVEN_B, algorithms()[algorithm], 1, lora_rank=lora_rank))


def parts(phase) -> dict[str, float]:
    return {part.label: part.gib for part in phase.training}


def test_adapters_are_counted_from_the_models_linear_layers():
    # Qwen2.5-7B's config.json: 28 layers of q, k, v, o (3,584 wide, K and V 512) and the MLP's 18,944.
    assert memory.adapter_params(SEVEN_B, 32) == 32 * 28 * (2 * 3584 + 2 * (3584 + 512) + 2 * 3584 + 3 * (3584 + 18944))
    assert memory.vllm_lora_rank(24) == 32 and memory.vllm_lora_rank(512) == 512


def test_the_lora_actor_holds_a_bf16_base_and_the_adapters_states_only():
    lora, full = planned(32), planned(0)
    update = next(phase for phase in lora.phases if phase.name == "update_actor")
    held = parts(update)
    weights = next(gib for label, gib in held.items() if label.startswith("actor weights"))
    assert weights == pytest.approx((7.62e9 * 2 + memory.adapter_params(SEVEN_B, 32) * 2) / 2**30)
    assert held["actor grads"] == pytest.approx(memory.adapter_params(SEVEN_B, 32) * 2 / 2**30)
    assert held["actor grads"] < 0.01 * 7.62e9 * 4 / 2**30
    # The reference is the actor with its adapters off: no weights of its own.
    ref = next(phase for phase in lora.phases if phase.name == "ref")
    assert not [label for label in parts(ref) if label.startswith("reference weights")]
    assert lora.fits and max(p.gpu_gib for p in lora.phases) < max(p.gpu_gib for p in full.phases)


def test_lora_frees_a_whole_7b_run_on_one_h200_from_offload_and_gives_the_rollout_more():
    lora, full = planned(32).inputs.sizing, planned(0).inputs.sizing
    assert (full.param_offload, full.optimizer_offload) == (True, True)  # 7.62B x 16 bytes: no room without
    assert (lora.param_offload, lora.optimizer_offload) == (False, False)
    assert lora.rollout_memory_fraction >= full.rollout_memory_fraction and lora.dynamic_batching


def test_lora_values_for_every_node_type(tmp_path: Path, capsys):
    """`python -m generator render --model qwen2.5-7b --lora-rank 32`: one file per node type, on a veRL with LoRA;
    PPO's critic, a copy of the model too, gets adapters at the same rank (whole, its update would not fit 24-GiB
    GPUs)."""
    assert main(["render", "--model", "qwen2.5-7b", "--lora-rank", "32", "--output", str(tmp_path)]) == 0
    for shape in CATALOG.shapes.values():
        job = yaml.safe_load((tmp_path / f"{shape.name}-lora32.yaml").read_text())["ppo-job"]
        assert job["model"]["lora"] == {"rank": 32, "alpha": 32, "targetModules": "all-linear",
                                        **({"layeredSummon": True} if shape.gpu_memory_gib < 48 else {})}
        assert job["critic"]["lora"] == {"rank": 32, "alpha": 32, "targetModules": "all-linear"}
        assert job["prepare"] == {"model": {"id": "Qwen/Qwen2.5-7B-Instruct"}}  # what prepare fetches into the path
        assert job["verlVersion"] == "0.9.1" and job["model"]["path"] == SEVEN_B.path
    capsys.readouterr()
    assert main(["check", *map(str, sorted(tmp_path.glob("*-lora32.yaml")))]) == 0, capsys.readouterr().out
    assert main(["render", "--model", "qwen2.5-7b", "--algorithm", "grpo", "--lora-rank", "32",
                 "--output", str(tmp_path)]) == 0
    assert "critic" not in yaml.safe_load((tmp_path / "a10-24g-x4-grpo-lora32.yaml").read_text())["ppo-job"]


def test_the_critics_adapters_are_planned_as_the_actors(capsys):
    """A PPO plan with LoRA holds the critic's frozen bf16 base and its adapters' states, not a whole critic's."""
    lora, full = (plan(inputs_for(CATALOG, CATALOG.shapes["a10-24g-x4"], SEVEN_B, algorithms()["ppo"], 1,
                                  lora_rank=rank)) for rank in (32, 0))
    update = next(phase for phase in lora.phases if phase.name == "update_critic")
    labels = [part.label for part in update.training]
    assert "critic weights (bf16 base and adapters) (from CPU)" in labels and lora.fits and not full.fits
    assert main(["plan", "--shape", "a10-24g-x4", "--model", "qwen2.5-7b", "--lora-rank", "32"]) == 0
    assert "the critic's alike" in capsys.readouterr().out


def test_cli_plan_of_a_lora_run_names_its_measurement_and_times_by_a_lora_run(capsys):
    code = main(["plan", "--shape", "h200-141g-x8", "--model", "qwen2.5-7b", "--algorithm", "grpo",
                 "--lora-rank", "32", "--nodes", "1"])
    out = capsys.readouterr().out
    assert code == 0 and "bf16 base and adapters" in out
    assert "LoRA rank 32, all-linear: 80.7M adapter parameters" in out and "measured at 7B on one H200" in out
    assert "from the measured run `lora-7b-grpo`" in out  # a LoRA update's seconds, not a full fine-tune's


def test_a_model_without_adapter_figures_cannot_be_sized_for_lora(tmp_path: Path, capsys):
    catalog = yaml.safe_load(paths.CATALOG.read_text())
    for model in catalog["models"]:
        model.pop("adapterParamsPerRank", None)
    (tmp_path / "catalog.yaml").write_text(yaml.safe_dump(catalog))
    assert main(["render", "seed-2gpu", "--lora-rank", "8", "--catalog", str(tmp_path / "catalog.yaml"),
                 "--output", str(tmp_path / "out")]) == 2
    assert "no adapterParamsPerRank" in capsys.readouterr().err
