"""Tier 1: the micro-batch rule over per-GPU mini batches that are not powers of two, read from what
`size` returns (the mini batch it raised to whole samples per GPU), not from the run's input."""

from __future__ import annotations

from dataclasses import replace

import pytest

from generator.catalog import ModelProfile, load_catalog
from generator import sizing as sizing_module
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


@pytest.mark.parametrize("nodes, offload", [(1, (True, True)), (3, (False, True)), (4, (False, False))])
def test_offload_thresholds_by_the_share_of_one_gpu(nodes, offload):
    """7.6B Adam states, 16 bytes a parameter, sharded over 4, 12 or 16 A10s: 1.18, 0.39 and 0.30 of a
    24 GiB GPU each: over a half offloads both, over a third the optimizer only."""
    sizing = size(CATALOG.shapes["a10-24g-x4"], CATALOG.models["qwen2.5-7b"], RunShape(nodes=nodes))
    assert (sizing.param_offload, sizing.optimizer_offload) == offload


def test_a_shard_of_a_fraction_of_a_gib_counts():
    """8.5 GiB of Adam states a GPU (12 A10s): over a third of 24 GiB, though 8 GiB would not be."""
    params = 8.5 * 12 * 2**30 / 16e9
    sizing = size(CATALOG.shapes["a10-24g-x4"], model_of(params), RunShape(nodes=3))
    assert (sizing.param_offload, sizing.optimizer_offload) == (False, True)
    exactly_a_third = size(CATALOG.shapes["a10-24g-x4"], model_of(8 * 12 * 2**30 / 16e9), RunShape(nodes=3))
    assert (exactly_a_third.param_offload, exactly_a_third.optimizer_offload) == (False, False)  # over, not at


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


def test_checkpointing_stays_where_the_budget_without_it_is_launch_bound():
    """On 24 GiB the budget without checkpointing (2,048 tokens) runs at the launch floor; with it twice the
    tokens fit for the same launches."""
    a10 = size(CATALOG.shapes["a10-24g-x4"], MODEL, RunShape(nodes=1, verl_version="0.9.1"))
    assert (a10.dynamic_batching, a10.gradient_checkpointing, a10.train_token_budget) == (True, True, 4096)
    assert sizing_module.budget_for(24 * sizing_module.TRAINING_MEMORY_SHARE - 0.46, MODEL, False) == 2048


def test_no_dynamic_batching_where_one_sequence_does_not_fit():
    big = CATALOG.models["qwen2.5-7b"]
    l20 = size(CATALOG.shapes["l20-48g-x8"], big, RunShape(nodes=1, verl_version="0.9.1"))
    assert (l20.dynamic_batching, l20.train_token_budget) == (False, 0)
    h200 = size(CATALOG.shapes["h200-141g-x8"], big, RunShape(nodes=1, verl_version="0.9.1"))
    assert (h200.dynamic_batching, h200.gradient_checkpointing, h200.train_token_budget) == (True, True, 4096)


@pytest.mark.parametrize("model", sorted(CATALOG.models))
@pytest.mark.parametrize("shape_name", sorted(CATALOG.shapes))
def test_budgets_hold_a_whole_row_and_are_powers_of_two(shape_name, model):
    run = RunShape(nodes=1, verl_version="0.9.1")
    sizing = size(CATALOG.shapes[shape_name], CATALOG.models[model], run)
    if sizing.dynamic_batching:
        assert sizing.train_token_budget >= run.sequence_length
        assert sizing.train_token_budget & (sizing.train_token_budget - 1) == 0
        assert sizing.forward_token_budget == 2 * sizing.train_token_budget
        if not sizing.gradient_checkpointing:
            assert sizing.train_token_budget >= sizing_module.LAUNCH_BOUND_TOKENS


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
