"""The GPU proof's parts that need no GPU (the GPU runs themselves are docs/gpu-proof.md's, never CI's):
the early exit where no GPU is, the rendering of the runs with the real Helm, and the step-line parser."""

import json
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from support import tools

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "gpu"))

import proof  # noqa: E402
import render_jobs  # noqa: E402

# What the proof may change in the command the chart renders for a cluster (the issue's "paths, model,
# step count", plus the GPUs of one machine and the rollout engine that fits its carry limit).
ADJUSTED = {"data.train_files", "data.val_files", "actor_rollout_ref.model.path", "critic.model.path",
            "trainer.default_local_dir", "trainer.n_gpus_per_node", "trainer.nnodes",
            "actor_rollout_ref.rollout.name", "trainer.total_training_steps"}


def overrides(entrypoint: str) -> dict[str, str]:
    words = shlex.split(entrypoint)
    assert words[:3] == ["python3", "-m", "verl.trainer.main_ppo"]
    return dict(word.split("=", 1) for word in words[3:])


def test_gpu_targets_stop_early_without_a_gpu():
    if proof.gpu_count():
        pytest.skip("this machine has a GPU")
    done = subprocess.run(["make", "-s", "gpu-smoke"], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert done.returncode != 0
    assert "no NVIDIA GPU here" in done.stderr and "make gpu-wheels" in done.stderr


def test_rendered_runs_change_only_paths_model_gpus_and_steps(tmp_path, monkeypatch):
    monkeypatch.setenv("HELM", str(tools.helm_binaries()["helm4"]))
    render_jobs.render(ROOT, "smoke", render_jobs.RUNS["smoke"], 2, tmp_path / "smoke")
    run = json.loads((tmp_path / "smoke" / "run.json").read_text())
    proofed = overrides(json.loads((tmp_path / "smoke" / "job.json").read_text())["entrypoint"])

    plain = subprocess.run([str(tools.helm_binaries()["helm4"]), "template", "verl-ppo", str(ROOT / "charts/verl-ppo"),
                            "-f", str(ROOT / "values/h200-141g-x8.yaml"), "--set-string", "ppo-job.verlVersion=0.3.0.post1"],
                           check=True, capture_output=True, text=True).stdout
    config_map = next(o for o in yaml.safe_load_all(plain) if o and o["kind"] == "ConfigMap" and "job.json" in o["data"])
    cluster = overrides(json.loads(config_map["data"]["job.json"])["entrypoint"])

    changed = {key for key in cluster.keys() | proofed.keys() if cluster.get(key) != proofed.get(key)}
    assert changed <= ADJUSTED
    assert proofed["trainer.total_training_steps"] == "3" and proofed["trainer.n_gpus_per_node"] == "2"
    assert proofed["trainer.default_local_dir"] == run["checkpoint_dir"] == \
        f"{render_jobs.MOUNT_PATH}/checkpoints/verl-ppo/gsm8k"
    # The submitter and its environment are the chart's, with the downward-API fields resolved.
    assert (tmp_path / "smoke" / "submitter.py").read_text() == \
        (ROOT / "charts/verl-ppo/charts/ppo-job/files/submitter.py").read_text()
    assert run["env"]["VERL_PPO_SUBMISSION_PREFIX"] == run["submitter_job"]
    assert run["env"]["VERL_PPO_EXPECTED_GPUS"] == "2"


def test_the_grpo_run_is_the_charts_grpo_command(tmp_path, monkeypatch):
    """GRPO's run: the chart's critic-free command with 5 responses per prompt and the KL in the loss."""
    monkeypatch.setenv("HELM", str(tools.helm_binaries()["helm4"]))
    render_jobs.render(ROOT, "grpo", render_jobs.RUNS["grpo"], 1, tmp_path / "grpo")
    command = overrides(json.loads((tmp_path / "grpo" / "job.json").read_text())["entrypoint"])
    assert command["algorithm.adv_estimator"] == "grpo" and command["actor_rollout_ref.rollout.n"] == "5"
    assert command["actor_rollout_ref.actor.use_kl_loss"] == "true" and command["actor_rollout_ref.rollout.name"] == "vllm"
    assert not [key for key in command if key.startswith("critic.")]
    assert command["trainer.default_local_dir"] == f"{render_jobs.MOUNT_PATH}/checkpoints/grpo/gsm8k"


def test_step_lines_give_steady_state_figures():
    log = "\n".join(
        f"(TaskRunner pid=7) step:{n} - timing_s/gen:{gen:.3f} - perf/time_per_step:{seconds:.3f} - "
        f"perf/total_num_tokens:76000.000 - perf/throughput:1.000 - perf/max_memory_allocated_gb:{n:.3f}"
        for n, gen, seconds in ((1, 25.0, 40.0), (2, 9.0, 20.0), (3, 11.0, 22.0), (4, 30.0, 50.0)))
    steps = proof.step_metrics(log)
    assert sorted(steps) == [1, 2, 3, 4]
    summary = proof.summarize({"steps": 4}, steps, [30000, 31000])
    # Steps 2 and 3 only: the first warms up, the last validates and writes the checkpoint.
    assert summary["steady_steps"] == 2
    assert summary["seconds_per_step"] == 21.0 and summary["timing_s"]["gen"] == 10.0
    assert summary["tokens_per_second"] == round(76000 / 21.0, 1)
    assert summary["torch_max_allocated_gib"] == 4.0
    slower = {**summary, "seconds_per_step": 42.0, "tokens_per_second": summary["tokens_per_second"] / 2}
    comparison = proof.compare({"bench-generated": summary, "bench-seed": slower})
    assert comparison["speedup_seconds_per_step"] == 2.0 and comparison["tokens_per_second_ratio"] == 2.0
