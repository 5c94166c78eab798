"""Tier 1: `render --rollout-shape` (issue 36): a rollout pool on its own node type, its replicas sized for its GPU, its
nodes balanced against training and the balance stated; the rendered values pass check and helm template; a pool's
CPU and memory are held to its node type by the rulebook."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from generator import memory, paths
from generator.catalog import load_catalog
from generator.check import check
from generator.cli import main
from generator.helm import HelmInputs, template
from generator.sizing import pod_resources

CATALOG = load_catalog()
PAIRS = [("h800-80g-x8", "l20-48g-x8"), ("h20-96g-x8", "h20-96g-x8")]


def render(tmp_path: Path, capsys, training: str, pool: str, *extra: str) -> tuple[dict, str, str]:
    """The values file rendered for the pair, its text and render's output."""
    assert main(["render", training, "--rollout-shape", pool, "--output", str(tmp_path), *extra]) == 0
    path = tmp_path / f"{training}-rollout-{pool}.yaml"
    text = path.read_text()
    return yaml.safe_load(text), text, capsys.readouterr().out


def findings(*files: Path) -> list[str]:
    return [str(finding) for finding in check(paths.CHART, HelmInputs(files=files)).findings]


@pytest.mark.parametrize("training, pool", PAIRS)
def test_a_pair_renders_separate_async_sized_for_each_gpu_and_passes(training, pool, tmp_path: Path, capsys):
    values, text, out = render(tmp_path, capsys, training, pool)
    pool_shape, job = CATALOG.shapes[pool], values["ppo-job"]
    assert values["global"]["rolloutPool"] == {"enabled": True, "nodes": 1, "perNode": pool_shape.gpus_per_node}
    assert values["global"]["image"] == {"repository": CATALOG.verl.image_repository, "tag": CATALOG.verl.image_tag}
    assert job["verlVersion"] == CATALOG.verl.version == "0.9.1"
    assert job["trainer"]["mode"] == "separate_async"
    assert job["data"]["trainBatchSize"] == job["trainer"]["separateAsync"]["parameterSyncStep"] * \
        job["actor"]["ppoMiniBatchSize"]
    # The pool's placement and resources from its node type, the training group's from the training one.
    placed = values["raycluster"]["rolloutPool"]
    assert placed["nodeSelector"] == pool_shape.node_labels
    assert placed["gpuShape"]["name"] == pool and placed["gpuShape"]["allocatable"]["cpu"] == pool_shape.allocatable_cpu
    assert (placed["resources"]["cpu"], placed["resources"]["memory"]) == pod_resources(pool_shape, 0.8)
    assert placed["rdma"] == {"enabled": pool_shape.rdma}
    assert values["raycluster"]["gpuShape"]["name"] == training
    # A replica's memory share is the pool GPU's, not the colocated one; the token budgets the training node's.
    assert job["rollout"]["gpuMemoryUtilization"] == memory.pool_rollout_memory_fraction(pool_shape.gpu_memory_gib)
    assert job["rollout"]["tensorModelParallelSize"] == 1  # 0.5B: one GPU holds a replica
    plain = yaml.safe_load((paths.VALUES_DIR / f"{training}.yaml").read_text())["ppo-job"]
    assert job["actor"] == plain["actor"] and job["critic"] == plain["critic"]
    assert job["rollout"]["logProbMaxTokenLenPerGpu"] == plain["rollout"]["logProbMaxTokenLenPerGpu"]
    # The balance, stated where render prints and in the file.
    stated = f"rollout pool: 1 node(s) x {pool_shape.gpus_per_node} {pool_shape.gpu_model} = "
    assert stated in out and "predicted gen" in out and " vs train " in out
    assert "# rollout pool: 1 node(s)" in text and "predicted gen" in text
    path = tmp_path / f"{training}-rollout-{pool}.yaml"
    assert findings(path) == []
    rendered = template(paths.CHART, HelmInputs(files=(path,)))
    assert rendered.returncode == 0, rendered.stderr
    assert "groupName: rolloutpool" in rendered.stdout


def test_a_larger_model_gets_its_pool_balanced_against_slower_training(tmp_path: Path, capsys):
    """3B on four A10s trains for longer than one pool node of eight L20s generates: one node keeps up, and the
    output says so."""
    values, _, out = render(tmp_path, capsys, "a10-24g-x4", "l20-48g-x8", "--model", "qwen2.5-3b")
    assert "generation keeps up with training on one node" in out
    assert values["global"]["rolloutPool"]["nodes"] == 1
    assert findings(tmp_path / "a10-24g-x4-rollout-l20-48g-x8.yaml") == []


def test_the_pool_memory_share_leaves_the_engine_and_the_weight_sync_room():
    assert memory.pool_rollout_memory_fraction(24) == 0.7
    assert memory.pool_rollout_memory_fraction(48) == 0.85
    assert memory.pool_rollout_memory_fraction(96) == memory.POOL_MAX_MEMORY_FRACTION
    assert memory.pool_rollout_memory_fraction(6) == 0.0


def test_a_pool_gpu_that_cannot_hold_one_replica_is_refused_with_the_fix(tmp_path: Path, capsys):
    catalog = yaml.safe_load(paths.CATALOG.read_text())
    catalog["models"].append({"name": "dense-400b", "path": "/data/dense-400b", "paramsBillion": 400})
    custom = tmp_path / "catalog.yaml"
    custom.write_text(yaml.safe_dump(catalog))
    assert main(["render", "h200-141g-x8", "--rollout-shape", "a10-24g-x4", "--model", "dense-400b",
                 "--catalog", str(custom), "--output", str(tmp_path)]) == 2
    error = capsys.readouterr().err
    assert "--rollout-shape a10-24g-x4" in error and "dense-400b" in error
    assert "tensor parallel 4" in error and "more GPU memory or more GPUs a node" in error
    assert not list(tmp_path.glob("*-rollout-*.yaml"))


def test_an_unknown_rollout_shape_is_named_with_the_known_ones(tmp_path: Path, capsys):
    assert main(["render", "h800-80g-x8", "--rollout-shape", "b300", "--output", str(tmp_path)]) == 2
    error = capsys.readouterr().err
    assert "unknown --rollout-shape 'b300'" in error and "l20-48g-x8" in error and "generator shapes" in error
    assert not list(tmp_path.glob("*.yaml"))


def test_pool_pods_are_held_to_their_node_type(tmp_path: Path, capsys):
    """The pool's own resources, and the training workers' it takes when its own are null, against the pool's node
    type; a pool without a node type of its own is held to the training one's."""
    render(tmp_path, capsys, "h800-80g-x8", "l20-48g-x8")
    rendered = tmp_path / "h800-80g-x8-rollout-l20-48g-x8.yaml"
    inherited = tmp_path / "inherited.yaml"
    inherited.write_text("raycluster:\n  rolloutPool:\n    resources: null\n")
    found = findings(rendered, inherited)
    assert any(line.startswith("raycluster.rolloutPool.resources.cpu=150: does not fit the 124 allocatable CPU of a "
                               "l20-48g-x8 node (raycluster.rolloutPool.gpuShape.allocatable.cpu)") for line in found)
    assert any("raycluster.rolloutPool.resources.memory=1520Gi" in line and "at most 900Gi" in line for line in found)
    own = tmp_path / "own.yaml"
    own.write_text("raycluster:\n  rolloutPool:\n    gpuShape: null\n    resources: {cpu: '200', memory: 100Gi}\n")
    found = findings(rendered, own)
    assert found == ["raycluster.rolloutPool.resources.cpu=200: does not fit the 188 allocatable CPU of a h800-80g-x8 "
                     "node (raycluster.gpuShape.allocatable.cpu). Fix: --set raycluster.rolloutPool.resources.cpu="
                     "<at most 188>; the generator uses 80% of allocatable"]


def test_training_gpus_are_sized_without_an_engine_on_them(tmp_path: Path, capsys):
    """7B on 40 GB A100s: colocated, the awake engine beside the training states needs the optimizer offloaded; with
    the rollout on a pool no engine wakes on the training GPUs (memory.phase_memory has no gen phase there)."""
    assert main(["render", "a100-40g-x8", "--model", "qwen2.5-7b", "--output", str(tmp_path)]) == 0
    colocated = yaml.safe_load((tmp_path / "a100-40g-x8.yaml").read_text())["ppo-job"]["actor"]
    pooled, _, _ = render(tmp_path, capsys, "a100-40g-x8", "l20-48g-x8", "--model", "qwen2.5-7b")
    assert colocated["optimizerOffload"] is True
    assert pooled["ppo-job"]["actor"]["optimizerOffload"] is False
