"""The rollout pool (issue 36) in veRL's own config: every trainer mode of veRL 0.9.1, with every algorithm it has,
renders a command that composes with its Hydra config; separate_async's carries the pool's size from
global.rolloutPool and passes what veRL 0.9.1's separate_async trainer asserts at start
(verl/trainer/ppo/v1/trainer_separate_async.py), read here from the composed config: the hybrid engine off, a pool
of at least one node and one GPU, at least one rollout replica, a weight sync other than naive, and
train_batch_size = parameter_sync_step x ppo_mini_batch_size. The other modes leave veRL's pool settings alone."""

from __future__ import annotations

import json
import shlex
import sys

import pytest
from omegaconf import OmegaConf

from generator import verlconfig
from generator.algorithms import algorithms
from generator.verlversions import by_version
from support.tools import ROOT, image_args, verl_config_dir
from test_verl_config import compose_with_verl, rendered_command, rendered_keys

VERSION = "0.9.1"
MODES = by_version()[VERSION].trainer_modes
NAMES = [name for name, entry in algorithms().items() if VERSION in entry.versions]
# A pool of its own node type: 2 nodes of 4 GPUs, each rollout replica 2 of them.
POOL = ["--set", "global.rolloutPool.enabled=true", "--set", "global.rolloutPool.nodes=2",
        "--set", "global.rolloutPool.perNode=4", "--set", "raycluster.rolloutPool.nodeSelector.pool=inference",
        "--set", "ppo-job.rollout.tensorModelParallelSize=2"]


def composed(mode: str, algorithm: str, *extra: str):
    args = [*image_args(VERSION), "--set", f"ppo-job.trainer.mode={mode}",
            "--set", f"ppo-job.algorithm.name={algorithm}", *extra]
    words = rendered_command(*args)[3:]
    config = compose_with_verl(VERSION, words)
    assert OmegaConf.missing_keys(config) == set()
    assert verlconfig.type_violations(verl_config_dir(VERSION), config) == []
    return words, config


@pytest.mark.parametrize("algorithm", NAMES)
@pytest.mark.parametrize("mode", MODES)
def test_every_mode_and_algorithm_composes(mode, algorithm):
    words, config = composed(mode, algorithm, *(POOL if mode == "separate_async" else []))
    assert config.trainer.v1.trainer_mode == mode
    rollout = config.actor_rollout_ref.rollout
    if mode != "separate_async":
        assert config.actor_rollout_ref.hybrid_engine is True and rollout.nnodes == 0
        assert not any(key.startswith(("trainer.v1.separate_async", "actor_rollout_ref.rollout.nnodes"))
                       for key in rendered_keys(words))
        return
    # What PPOTrainerSeparateAsync.__init__ asserts, and LLMServerManager's replica count (world // replica size).
    assert config.actor_rollout_ref.hybrid_engine is False
    assert (rollout.nnodes, rollout.n_gpus_per_node) == (2, 4)
    assert rollout.checkpoint_engine.backend != "naive"
    separate = config.trainer.v1.separate_async
    mini_batch = config.actor_rollout_ref.actor.ppo_mini_batch_size
    assert config.data.train_batch_size == separate.parameter_sync_step * mini_batch
    replica = rollout.tensor_model_parallel_size * rollout.data_parallel_size * rollout.pipeline_model_parallel_size
    assert rollout.nnodes * rollout.n_gpus_per_node // replica == 4
    # Training keeps the training group's GPUs: the pool is no part of veRL's global pool.
    assert (config.trainer.nnodes, config.trainer.n_gpus_per_node) == (2, 2)


def test_the_pool_alone_is_one_node_like_the_training_nodes():
    _, config = composed("separate_async", "ppo", "--set", "global.rolloutPool.enabled=true")
    assert (config.actor_rollout_ref.rollout.nnodes, config.actor_rollout_ref.rollout.n_gpus_per_node) == \
        (1, config.trainer.n_gpus_per_node)


def test_the_sync_interval_and_the_weight_sync_are_values():
    _, config = composed("separate_async", "ppo", *POOL, "--set", "ppo-job.trainer.separateAsync.parameterSyncStep=2",
                         "--set", "ppo-job.actor.ppoMiniBatchSize=128", "--set",
                         "ppo-job.trainer.separateAsync.weightSyncBackend=nixl")
    assert config.trainer.v1.separate_async.parameter_sync_step == 2
    assert config.actor_rollout_ref.rollout.checkpoint_engine.backend == "nixl"
    default = compose_with_verl(VERSION, [])
    assert default.trainer.v1.separate_async.parameter_sync_step == 4  # the chart's default is veRL's


def test_a_rendered_rollout_shape_pair_composes_and_passes_the_separate_async_asserts(tmp_path, capsys):
    """`generator render --rollout-shape` (H800 training, an L20 pool): its command composes with veRL 0.9.1's config
    with the pool's size, its replicas' tensor parallel size and memory share, and what the trainer asserts."""
    from generator.cli import main

    assert main(["render", "h800-80g-x8", "--rollout-shape", "l20-48g-x8", "--output", str(tmp_path)]) == 0
    capsys.readouterr()
    words = rendered_command("-f", str(tmp_path / "h800-80g-x8-rollout-l20-48g-x8.yaml"))[3:]
    config = compose_with_verl(VERSION, words)
    assert OmegaConf.missing_keys(config) == set()
    assert verlconfig.type_violations(verl_config_dir(VERSION), config) == []
    rollout = config.actor_rollout_ref.rollout
    assert config.trainer.v1.trainer_mode == "separate_async" and config.actor_rollout_ref.hybrid_engine is False
    assert (rollout.nnodes, rollout.n_gpus_per_node, rollout.tensor_model_parallel_size) == (1, 8, 1)
    assert rollout.gpu_memory_utilization == 0.85 and rollout.checkpoint_engine.backend != "naive"
    assert config.data.train_batch_size == \
        config.trainer.v1.separate_async.parameter_sync_step * config.actor_rollout_ref.actor.ppo_mini_batch_size
    assert (config.trainer.nnodes, config.trainer.n_gpus_per_node) == (1, 8)


def test_the_gpu_proofs_separate_async_run_composes_and_passes_the_separate_async_asserts(tmp_path):
    """Issue 36 item 4: the command `make gpu-two-node VLLM=1` runs for separate_async (lab/gpu/render_jobs.py's
    vllm-separate-async, the chart's render for one training GPU and a pool of one) composes with veRL 0.9.1's config
    and passes what its separate_async trainer asserts, before any GPU runs it."""
    sys.path.insert(0, str(ROOT / "lab" / "gpu"))
    import render_jobs

    folder = tmp_path / render_jobs.run_folder("vllm-separate-async", 2)
    render_jobs.render(ROOT, "vllm-separate-async", render_jobs.RUNS["vllm-separate-async"], 2, folder)
    words = shlex.split(json.loads((folder / "job.json").read_text())["entrypoint"])
    assert words[:3] == ["python3", "-m", "verl.trainer.main_ppo"]
    config = compose_with_verl(VERSION, words[3:])
    assert OmegaConf.missing_keys(config) == set()
    assert verlconfig.type_violations(verl_config_dir(VERSION), config) == []
    rollout = config.actor_rollout_ref.rollout
    assert config.trainer.v1.trainer_mode == "separate_async" and config.actor_rollout_ref.hybrid_engine is False
    assert (config.trainer.nnodes, config.trainer.n_gpus_per_node) == (1, 1)
    assert (rollout.nnodes, rollout.n_gpus_per_node, rollout.tensor_model_parallel_size) == (1, 1, 1)
    assert rollout.checkpoint_engine.backend != "naive"
    assert config.data.train_batch_size == \
        config.trainer.v1.separate_async.parameter_sync_step * config.actor_rollout_ref.actor.ppo_mini_batch_size
    assert config.trainer.total_training_steps == render_jobs.RUNS["vllm-separate-async"].steps
