"""Tier 1: the micro-batch rule over per-GPU mini batches that are not powers of two, read from what
`size` returns (the mini batch it raised to whole samples per GPU), not from the run's input."""

from __future__ import annotations

import pytest

from generator.catalog import load_catalog
from generator.sizing import RunShape, batches_for, memory_micro_batch, size

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
