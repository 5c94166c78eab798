"""Tier 1: the micro-batch rule over per-GPU mini batches that are not powers of two, read from what
`size` returns (the mini batch it raised to whole samples per GPU), not from the run's input."""

from __future__ import annotations

from dataclasses import replace

import pytest

from generator.catalog import ModelProfile, load_catalog
from generator import sizing as sizing_module
from generator.memory import phase_memory
from generator.planwork import PlanInputs
from generator.sizing import (RunShape, batches_for, memory_micro_batch, pod_resources, rollout_memory_cap, size,
                              tensor_parallel)

CATALOG = load_catalog()
MODEL = CATALOG.models["qwen2.5-0.5b"]


@pytest.mark.parametrize("shape_name", sorted(CATALOG.shapes))
@pytest.mark.parametrize("mini", [48, 72, 96, 160, 200])
@pytest.mark.parametrize("nodes", [1, 2, 3, 5])
def test_micro_batch_divides_the_sized_per_gpu_mini_batch(shape_name, mini, nodes):
    shape = CATALOG.shapes[shape_name]
    run = RunShape(nodes=nodes, ppo_mini_batch_size=mini)
    gpus = nodes * shape.gpus_per_node
    sizing = size(shape, MODEL, run)
    per_gpu = sizing.ppo_mini_batch_size * run.responses_per_prompt // gpus
    assert per_gpu >= 1 and per_gpu % sizing.micro_batch == 0, (per_gpu, sizing.micro_batch)
    assert 1 <= sizing.micro_batch <= memory_micro_batch(shape, MODEL, batches_for(run, gpus))
    assert sizing.critic_micro_batch == sizing.micro_batch


@pytest.mark.parametrize("shape_name, nodes, mini, expected", [
    ("a10-24g-x4", 2, 48, (48, 2)),     # 6 per GPU, memory allows 4: halved to 2
    ("l20-48g-x8", 1, 48, (48, 6)),     # 6 per GPU, memory allows 8: the whole per-GPU batch
    ("l20-48g-x8", 1, 160, (160, 4)),   # 20 per GPU, memory allows 8: halved to 4
    ("a100-40g-x8", 3, 160, (168, 1)),  # raised to 7 per GPU (odd): only 1 divides it among the halvings
    ("seed-2gpu", 3, 160, (162, 1)),    # 6 GPUs: 160 raised to 162, 27 per GPU
])
def test_micro_batch_of_odd_per_gpu_batches(shape_name, nodes, mini, expected):
    sizing = size(CATALOG.shapes[shape_name], MODEL, RunShape(nodes=nodes, ppo_mini_batch_size=mini))
    assert (sizing.ppo_mini_batch_size, sizing.micro_batch) == expected


def test_the_guides_batches_are_the_defaults():
    sizing = size(CATALOG.shapes["seed-2gpu"], MODEL, RunShape(nodes=2))
    assert (sizing.train_batch_size, sizing.ppo_mini_batch_size) == (256, 64)


def test_micro_batches_stop_at_32_on_the_largest_gpus():
    """Short sequences on H200: memory alone would allow 64 per micro batch."""
    run = RunShape(nodes=1, train_batch_size=1024, ppo_mini_batch_size=512, max_prompt_length=128,
                   max_response_length=128)
    sizing = size(CATALOG.shapes["h200-141g-x8"], MODEL, run)
    assert (sizing.micro_batch, sizing.log_prob_micro_batch, sizing.ref_log_prob_micro_batch) == (32, 32, 32)


ONE_H200 = replace(CATALOG.shapes["h200-141g-x8"], name="h200-141g-x1", gpus_per_node=1)  # lab/gpu's one-GPU profile
V091 = RunShape(nodes=1, verl_version="0.9.1")


def planned(shape, model, sizing, run=V091):
    """Every phase's memory as the sizing checks it: full rows, every budgeted micro batch full."""
    gpus = run.nodes * shape.gpus_per_node
    return phase_memory(PlanInputs(shape, model, None, batches_for(run, gpus), sizing, gpus, run.sequence_length, True))


def worst(phases) -> float:
    return max(phase.margin_gib for phase in phases)


@pytest.mark.parametrize("params, offload", [
    (2.5, (False, False)),  # the rollout with both models' states: 130.5 GiB with the margin, of 141
    (3.09, (False, True)),  # 148.4 without offload: the optimizer's moments leave the GPU between updates
    (7.62, (True, True)),  # nothing fits one H200 (the update alone holds 16 bytes a parameter): both, the last
])
def test_offload_only_where_a_phase_would_not_fit_with_the_margin(params, offload):
    sizing = size(ONE_H200, model_of(params), V091)
    assert (sizing.param_offload, sizing.optimizer_offload) == offload
    none = replace(sizing, param_offload=False, optimizer_offload=False)
    assert (worst(planned(ONE_H200, model_of(params), none)) <= ONE_H200.gpu_memory_gib) == (offload == (False, False))


def test_the_3b_on_one_h200_offloads_the_optimizer_for_the_rollout():
    """The next ladder run: without offload the rollout phase (vLLM's share beside both models' fp32 weights and Adam
    moments) passes the GPU with the margin; with the optimizer offloaded every phase fits, the update included,
    where veRL brings the moments back."""
    model = CATALOG.models["qwen2.5-3b"]
    sizing = size(ONE_H200, model, V091)
    assert (sizing.param_offload, sizing.optimizer_offload, sizing.train_token_budget) == (False, True, 8192)
    phases = {phase.name: phase for phase in planned(ONE_H200, model, sizing)}
    assert all(phase.margin_gib <= 141 for phase in phases.values())
    none = {phase.name: phase for phase in planned(ONE_H200, model, replace(sizing, optimizer_offload=False))}
    assert none["gen"].margin_gib > 141 >= none["gen"].gpu_gib  # fits by the plan alone, not with the margin


def test_the_offload_order_is_none_then_the_optimizer_then_both():
    assert sizing_module.OFFLOAD_CHOICES == ((False, False), (False, True), (True, True))


def test_token_budgets_only_for_the_version_they_were_measured_on():
    """veRL 0.9.1's token budgets were measured on an H200; the guide's 0.4.1 keeps its fixed micro batches."""
    h200 = CATALOG.shapes["h200-141g-x8"]
    for version in ("", "0.3.0.post1", "0.4.1"):
        fixed = size(h200, MODEL, RunShape(nodes=1, verl_version=version))
        assert (fixed.dynamic_batching, fixed.gradient_checkpointing, fixed.train_token_budget) == (False, True, 0)


def test_the_h200_budget_is_the_measured_one_without_checkpointing():
    """16,384 training tokens a GPU without checkpointing peaked at 52.7 GiB of 141 (docs/sizing.md)."""
    h200 = size(CATALOG.shapes["h200-141g-x8"], MODEL, RunShape(nodes=1, verl_version="0.9.1"))
    assert (h200.dynamic_batching, h200.gradient_checkpointing) == (True, False)
    assert (h200.train_token_budget, h200.forward_token_budget) == (16384, 32768)


def test_checkpointing_only_where_it_buys_a_larger_budget_under_the_launch_floor():
    """Four A10s at 1.5B: 2,048 tokens without checkpointing (under the launch floor), 4,096 with it: on. At 0.5B both
    stop at 4,096, where the forward-only pass at twice the budget is what does not fit: off (no recompute for
    nothing)."""
    a10 = CATALOG.shapes["a10-24g-x4"]
    run = batches_for(V091, 4)
    big = size(a10, CATALOG.models["qwen2.5-1.5b"], V091)
    assert (big.gradient_checkpointing, big.train_token_budget) == (True, 4096)
    assert sizing_module.largest_budget(a10, CATALOG.models["qwen2.5-1.5b"], run, big, 4, False) == 2048
    small = size(a10, MODEL, V091)
    assert (small.gradient_checkpointing, small.train_token_budget) == (False, 4096)
    assert sizing_module.largest_budget(a10, MODEL, run, small, 4, True) == 4096


def test_checkpointing_goes_off_at_the_launch_floor_not_below():
    """One H200: 3B without checkpointing fits 8,192 tokens (the launch floor): off; a 24 GiB GPU at 1.5B fits less."""
    three = size(ONE_H200, CATALOG.models["qwen2.5-3b"], V091)
    assert (three.gradient_checkpointing, three.train_token_budget) == (False, sizing_module.LAUNCH_BOUND_TOKENS)
    a10 = size(CATALOG.shapes["a10-24g-x4"], CATALOG.models["qwen2.5-1.5b"], V091)
    assert a10.gradient_checkpointing and a10.train_token_budget < sizing_module.LAUNCH_BOUND_TOKENS * 2


@pytest.mark.parametrize("model", ["qwen2.5-0.5b", "qwen2.5-1.5b", "qwen2.5-3b"])
def test_a_budget_is_the_largest_that_fits_with_the_margin(model):
    """The budget chosen fits every phase with the margin, full micro batches; twice it does not, or passes the
    largest measured budget."""
    profile = CATALOG.models[model]
    sizing = size(ONE_H200, profile, V091)
    assert worst(planned(ONE_H200, profile, sizing)) <= ONE_H200.gpu_memory_gib
    doubled = replace(sizing, train_token_budget=2 * sizing.train_token_budget,
                      forward_token_budget=4 * sizing.train_token_budget)
    assert (2 * sizing.train_token_budget > sizing_module.MAX_TOKEN_BUDGET
            or worst(planned(ONE_H200, profile, doubled)) > ONE_H200.gpu_memory_gib)


def test_the_measured_one_h200_profiles_stay_where_the_model_allows():
    """0.5B: 16,384 tokens without checkpointing as measured (38.7 GiB); 1.5B: the same budget without checkpointing,
    which the run's 48.4 GiB at 8,192 with it leaves room for (131 GiB planned at full rows, full micro batches)."""
    for model in ("qwen2.5-0.5b", "qwen2.5-1.5b"):
        sizing = size(ONE_H200, CATALOG.models[model], V091)
        assert (sizing.train_token_budget, sizing.forward_token_budget, sizing.gradient_checkpointing) == (
            16384, 32768, False)
        assert not (sizing.param_offload or sizing.optimizer_offload)


@pytest.mark.parametrize("shape, model, critic", [
    (ONE_H200, "qwen2.5-0.5b", 32768),  # the forward budget: the critic's update of 32,768 tokens fits (62.4 GiB)
    (ONE_H200, "qwen2.5-1.5b", 16384),  # 32,768 tokens without checkpointing: 88 GiB of activations, too many
    (ONE_H200, "qwen2.5-3b", 8192),  # the training budget
    (CATALOG.shapes["a10-24g-x4"], "qwen2.5-0.5b", 8192),  # above the actor's 4,096: no logits in the critic's
])
def test_the_critics_budget_is_the_largest_that_fits_its_update_up_to_the_forward_budget(shape, model, critic):
    """veRL 0.9.1's default trainer packs the critic's update by the budget of its values pass (files/verl-versions.yaml
    criticUpdateBudget): the critic's budget is the largest power of two with which every phase fits with the margin,
    its update planned at it, at most the forward budget; twice it does not fit."""
    profile = CATALOG.models[model]
    sizing = size(shape, profile, V091)
    assert sizing.critic_token_budget == critic
    assert sizing.train_token_budget <= critic <= sizing.forward_token_budget
    phases = {phase.name: phase for phase in planned(shape, profile, sizing)}
    assert f"activations of {critic:,} tokens" in phases["update_critic"].training[-1].label
    assert worst(phases.values()) <= shape.gpu_memory_gib
    if critic < sizing.forward_token_budget:
        doubled = replace(sizing, critic_token_budget=2 * critic)
        update = next(phase for phase in planned(shape, profile, doubled) if phase.name == "update_critic")
        assert update.margin_gib > shape.gpu_memory_gib


def test_no_dynamic_batching_where_one_sequence_does_not_fit():
    big = CATALOG.models["qwen2.5-7b"]
    a10 = size(CATALOG.shapes["a10-24g-x4"], big, V091)
    assert (a10.dynamic_batching, a10.train_token_budget, a10.param_offload) == (False, 0, True)
    h200 = size(CATALOG.shapes["h200-141g-x8"], big, V091)
    assert h200.dynamic_batching and h200.train_token_budget >= 768


@pytest.mark.parametrize("model", sorted(CATALOG.models))
@pytest.mark.parametrize("shape_name", sorted(CATALOG.shapes))
def test_budgets_hold_a_whole_row_and_are_powers_of_two(shape_name, model):
    run = RunShape(nodes=1, verl_version="0.9.1")
    sizing = size(CATALOG.shapes[shape_name], CATALOG.models[model], run)
    if sizing.dynamic_batching:
        assert sizing.train_token_budget >= run.sequence_length
        assert sizing.train_token_budget & (sizing.train_token_budget - 1) == 0
        assert sizing.forward_token_budget == 2 * sizing.train_token_budget
        assert sizing.critic_token_budget in (sizing.train_token_budget, sizing.forward_token_budget)
        if not sizing.gradient_checkpointing and sizing.train_token_budget < sizing_module.LAUNCH_BOUND_TOKENS:
            shape, profile = CATALOG.shapes[shape_name], CATALOG.models[model]
            gpus = shape.gpus_per_node
            checkpointed = sizing_module.largest_budget(shape, profile, batches_for(run, gpus), sizing, gpus, True)
            assert checkpointed == sizing.train_token_budget  # checkpointing would fit no more


def test_batches_with_several_responses_need_whole_samples_only_after_n():
    """8 GPUs, n = 4: a mini batch of 50 gives 200 samples, divisible by 8, so it stays; the train batch
    grows to whole mini batches."""
    sizing = size(CATALOG.shapes["h800-80g-x8"], MODEL,
                  RunShape(nodes=1, ppo_mini_batch_size=50, responses_per_prompt=4))
    assert (sizing.train_batch_size, sizing.ppo_mini_batch_size) == (300, 50)


SEED = CATALOG.shapes["seed-2gpu"]


def shape_with(memory_gib: float, base: str = "seed-2gpu", **changes):
    return replace(CATALOG.shapes[base], gpu_memory_gib=memory_gib, **changes)


def model_of(params_billion: float) -> ModelProfile:
    return ModelProfile(f"test-{params_billion}b", "/data/model", params_billion)


def test_memory_micro_batch_rounds_down_to_a_power_of_two():
    """The guide's 4 on 24 GiB at its 512 + 256 tokens; just under twice the memory is still 4, twice is 8."""
    run = RunShape(nodes=2)
    assert memory_micro_batch(SEED, MODEL, run) == 4
    assert memory_micro_batch(shape_with(47.99), MODEL, run) == 4
    assert memory_micro_batch(shape_with(48), MODEL, run) == 8


def test_smaller_models_get_no_larger_micro_batch_than_half_a_billion():
    run = RunShape(nodes=2)
    assert memory_micro_batch(SEED, model_of(0.25), run) == memory_micro_batch(SEED, model_of(0.5), run) == 4
    assert memory_micro_batch(SEED, model_of(1.0), run) == 2  # twice the width: half the micro batch


def test_pod_cpu_is_rounded_down_to_whole_cores():
    assert pod_resources(replace(SEED, allocatable_cpu="1999m"), 1.0)[0] == "1"
    assert pod_resources(replace(SEED, allocatable_cpu="37500m"), 0.8) == ("30", "100Gi")


@pytest.mark.parametrize("shape_name, params, expected", [
    ("h800-80g-x8", 7.62, 1),  # 14.2 GiB of weights: under a quarter of 80 GiB on one GPU
    ("a10-24g-x4", 32.0, 4),  # 59.6 GiB would want 16 GPUs: a replica never spans the node's 4
    ("h200-141g-x8", 18.9, 1),  # 35.20 GiB: under a quarter of 141 GiB (35.25 GiB), if over 35
    ("seed-2gpu", 6 * 2**30 / 2e9, 1),  # exactly a quarter of 24 GiB: still one GPU
])
def test_tensor_parallel_keeps_a_weight_shard_under_a_quarter_of_a_gpu(shape_name, params, expected):
    shape = CATALOG.shapes[shape_name]
    weights_gib = params * 1e9 * 2 / 2**30
    tp = tensor_parallel(shape, model_of(params))
    assert tp == expected, (weights_gib, shape.gpu_memory_gib / 4)
    assert weights_gib / tp <= shape.gpu_memory_gib / 4 or tp == shape.gpus_per_node


def test_rollout_memory_cap_steps_just_above_each_size():
    """The cap of the need-based rollout fraction, by GPU size (the fraction itself: tests below)."""
    assert [rollout_memory_cap(shape_with(gib)) for gib in (24, 24.5, 48, 48.5, 96, 96.5)] == \
        [0.4, 0.5, 0.5, 0.6, 0.6, 0.7]


def test_forward_micro_batches_split_the_whole_per_gpu_batch_with_n():
    """128 GPUs, 2 responses a prompt: 512 samples, 4 a GPU bound both forward-only passes."""
    sizing = size(CATALOG.shapes["h200-141g-x8"], MODEL, RunShape(nodes=16, responses_per_prompt=2))
    assert (sizing.log_prob_micro_batch, sizing.ref_log_prob_micro_batch) == (4, 4)
