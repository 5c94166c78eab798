"""`generator check` plans the values it is given: a hand-edited budget or model that would run out of GPU memory is
refused at check with the changes that fit, the plan being the one `generator plan` makes of the generator's values."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from generator import paths
from generator.algorithms import algorithms
from generator.catalog import load_catalog
from generator.check import check
from generator.cli import main
from generator.helm import HelmInputs, merged_values
from generator.plan import inputs_for, plan
from generator.render import lora_version_for, render_shape, run_for, verl_version_for
from generator.valuesplan import memory_findings, unplanned_reason, values_plan

CATALOG = load_catalog()
A10 = paths.VALUES_DIR / "a10-24g-x4.yaml"
TOO_LARGE_A_BUDGET = ("ppo-job.actor.ppoMaxTokenLenPerGpu=65536",)


@pytest.mark.parametrize(("model", "algorithm", "rank"), [("qwen2.5-0.5b", "ppo", 0), ("qwen2.5-3b", "grpo", 0),
                                                         ("qwen2.5-7b", "ppo", 32), ("qwen2.5-1.5b", "dapo", 0)])
def test_the_plan_of_rendered_values_is_the_sizings_plan(model, algorithm, rank, tmp_path: Path):
    """Every setting the plan reads comes back from the values as the sizing set it, on every node type."""
    chosen = algorithms()[algorithm]
    for shape in CATALOG.shapes.values():
        version = lora_version_for(verl_version_for(CATALOG.verl, shape, chosen), rank)
        run = run_for(chosen, shape.default_nodes, verl_version=version, lora_rank=rank)
        values_file = tmp_path / f"{shape.name}.yaml"
        values_file.write_text(render_shape(shape, CATALOG.models[model], run, chosen, CATALOG.verl))
        values = merged_values(paths.CHART, HelmInputs(files=(values_file,)))
        assert unplanned_reason(values, CATALOG) == ""
        from_values = values_plan(values, CATALOG)
        sized = plan(inputs_for(CATALOG, shape, CATALOG.models[model], chosen, shape.default_nodes, lora_rank=rank))
        assert [(p.name, round(p.gpu_gib, 6)) for p in from_values.phases] == \
            [(p.name, round(p.gpu_gib, 6)) for p in sized.phases], shape.name


def test_check_refuses_a_budget_the_gpu_cannot_hold_and_names_a_change_that_fits(capsys):
    assert main(["check", str(A10), "--set", *TOO_LARGE_A_BUDGET]) == 1
    out = capsys.readouterr().out
    assert f"{A10}: raycluster.gpuShape.gpuMemoryGiB=24: holds less than the plan of these values needs" in out
    assert "update_actor" in out and "CUDA out of memory" in out
    fix = out.split("Fix: one of --set ", 1)[1].split(" ", 1)[0].rstrip(";")
    # The first change it names, given too, is accepted.
    assert main(["check", str(A10), "--set", *TOO_LARGE_A_BUDGET, "--set", fix]) == 0, capsys.readouterr().out


def test_another_model_on_the_guides_gpus_is_refused_with_the_generators_values_as_the_fix():
    verdict = check(paths.CHART, HelmInputs(files=(paths.VALUES_DIR / "seed-2gpu.yaml",),
                                            sets=("ppo-job.model.path=/data/Qwen2.5-7B-Instruct",)))
    (finding,) = verdict.findings
    assert finding.field == "raycluster.gpuShape.gpuMemoryGiB" and finding.value == "24"
    assert "python -m generator render seed-2gpu --model qwen2.5-7b --algorithm ppo" in finding.fix


def test_an_overflow_within_the_plans_error_is_a_note_and_values_beyond_the_plan_pass():
    values = merged_values(paths.CHART, HelmInputs(files=(A10,), sets=TOO_LARGE_A_BUDGET))
    findings, notes = memory_findings(values, CATALOG, error=0.99)
    assert not findings and notes and "may run out of memory" in notes[0]
    own_model = merged_values(paths.CHART, HelmInputs(files=(A10,), sets=(
        *TOO_LARGE_A_BUDGET, "ppo-job.model.path=/data/my-model")))
    assert "none of the catalog's models" in unplanned_reason(own_model, CATALOG)
    assert memory_findings(own_model, CATALOG, error=0.0) == ([], [])


def test_every_values_file_and_example_fits_by_the_plan():
    for path in sorted(paths.VALUES_DIR.glob("*.yaml")):
        values = merged_values(paths.CHART, HelmInputs(files=(path,)))
        assert values_plan(values, CATALOG).fits, path
    example = yaml.safe_load((paths.VALUES_DIR / "examples" / "lora-7b.yaml").read_text())
    stacked = merged_values(paths.CHART, HelmInputs(files=(paths.VALUES_DIR / "seed-2gpu.yaml",
                                                           paths.VALUES_DIR / "examples" / "lora-7b.yaml")))
    assert example["ppo-job"]["model"]["lora"]["rank"] == 32 and values_plan(stacked, CATALOG).fits
