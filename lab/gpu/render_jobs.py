"""Render, with the project's Helm, the PPO runs of the GPU proof into $GPU_BUNDLE/jobs/<run>-<n>lab/gpu/.

Each run is `helm template` of an H200 (or the seed's) values file, changed only where the GPU machine
differs from a cluster: the mount path and the data and model paths on it (a local folder), the model,
the GPUs of one machine, the veRL version the carried wheels hold (the profile: veRL 0.3.0.post1 with
its HF rollout, or veRL 0.9.1 with the chart's own vLLM rollout), and the step count. From the rendered objects it keeps what the submitter Job would run: the ConfigMap's
job.json, submitter.py with its logtail.py, and the Job's environment (downward-API values resolved as Kubernetes would).

Usage: python3 lab/gpu/render_jobs.py [--chart-root DIR] [--gpus 1 2 ...]
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]
# Where the GPU machine keeps what a cluster keeps on the shared volume.
MOUNT_PATH = "/tmp/verl-ppo-gpu/volume"
NAMESPACE = "default"


# What each wheel profile (lab/gpu/wheels.sh) changes in the values: the veRL version it carries and, for
# veRL 0.3.0.post1, its HF rollout. The vllm profile keeps the chart's rollout engine (vllm).
PROFILES = {
    "hf": {"ppo-job.verlVersion": "0.3.0.post1", "ppo-job.rollout.name": "hf"},
    "vllm": {"ppo-job.verlVersion": "0.9.1"},
}


@dataclass(frozen=True)
class Run:
    values_file: str
    release: str
    model: str  # a lab/gpu/build_model.py size
    steps: int
    settings: tuple[tuple[str, str], ...] = ()  # further values as JSON literals, for experiments only
    profile: str = "hf"


RUNS = {
    # The chart's H200 profile with a tiny model: proves the rendered command trains and checkpoints.
    "smoke": Run("values/h200-141g-x8.yaml", "verl-ppo", "tiny", 3),
    # Same command, Qwen2.5-0.5B's shape: the generated H200 profile against the seed's parameters.
    "bench-generated": Run("values/h200-141g-x8.yaml", "bench-generated", "qwen2.5-0.5b", 5),
    "bench-seed": Run("values/seed-2gpu.yaml", "bench-seed", "qwen2.5-0.5b", 5),
    # A sizing experiment, not a chart profile: the micro batch the memory rule gives an H200 (16) where the
    # per-GPU mini batch allows it (on 8 GPUs a mini batch of 64 caps it at 8).
    "bench-micro16": Run("values/h200-141g-x8.yaml", "bench-micro16", "qwen2.5-0.5b", 5, (
        ("ppo-job.actor.ppoMicroBatchSizePerGpu", "16"), ("ppo-job.rollout.logProbMicroBatchSizePerGpu", "32"),
        ("ppo-job.ref.logProbMicroBatchSizePerGpu", "16"), ("ppo-job.critic.ppoMicroBatchSizePerGpu", "16"))),
    # veRL 0.9.1 with the vLLM rollout, as the chart renders it (issue 17): a smoke run, then the seed's
    # parameters against the generated profile, and the generated profile with the rollout memory fraction of
    # the rule before the vLLM measurement (0.7 on an H200; now 0.4), which isolates the effect of that value.
    "vllm-smoke": Run("values/h200-141g-x8.yaml", "verl-ppo", "tiny", 3, profile="vllm"),
    "vllm-seed": Run("values/seed-2gpu.yaml", "vllm-seed", "qwen2.5-0.5b", 3, profile="vllm"),
    "vllm-generated": Run("values/h200-141g-x8.yaml", "vllm-generated", "qwen2.5-0.5b", 3, profile="vllm"),
    "vllm-generated-mem07": Run("values/h200-141g-x8.yaml", "vllm-generated-mem07", "qwen2.5-0.5b", 3, (
        ("ppo-job.rollout.gpuMemoryUtilization", "0.7"),), profile="vllm"),
    # The seed's multi-node shape on one machine (issue 14): rendered for 2 nodes of 1 GPU and for 1 node of 2,
    # compared in one command. HF profile (its wheels fit one command's carry); vLLM the same with veRL 0.9.1.
    "two-node": Run("values/seed-2gpu.yaml", "two-node", "qwen2.5-0.5b", 3),
    "vllm-two-node": Run("values/seed-2gpu.yaml", "vllm-two-node", "qwen2.5-0.5b", 3, profile="vllm"),
    # GRPO as the chart renders it (issue 11): no critic, KL in the loss, 5 responses per prompt. It needs a
    # rollout that samples n: veRL 0.3.0.post1's HF rollout samples one response per prompt (the chart's
    # rulebook refuses n > 1 there), so it runs on the vllm profile (veRL 0.9.1). Mode vllm-grpo.
    "grpo": Run("values/h200-141g-x8.yaml", "grpo", "tiny", 3, (("ppo-job.algorithm.name", '"grpo"'),), profile="vllm"),
}


def model_path(size: str) -> str:
    return f"{MOUNT_PATH}/models/{size}-random"


def run_folder(name: str, gpus: int, nodes: int = 1) -> str:
    """jobs/<run>-<n>gpu for one node of n GPUs, jobs/<run>-<nodes>x<n>gpu for several nodes."""
    return f"{name}-{gpus}gpu" if nodes == 1 else f"{name}-{nodes}x{gpus}gpu"


def helm_command(chart_root: Path, run: Run, gpus: int, nodes: int = 1) -> list[str]:
    """gpus: GPUs of each node; nodes: Ray nodes (a head and nodes - 1 worker raylets)."""
    helm = os.environ.get("HELM") or str(
        Path(os.environ.get("VERL_PPO_CACHE", Path.home() / ".cache/verl-ppo")) / "bin" / "helm4")
    settings = {
        "global.storage.mountPath": MOUNT_PATH,
        "ppo-job.data.trainFiles": f"{MOUNT_PATH}/data/gsm8k/train.parquet",
        "ppo-job.data.valFiles": f"{MOUNT_PATH}/data/gsm8k/test.parquet",
        "ppo-job.model.path": model_path(run.model),
        "global.gpu.perNode": str(gpus),
        "global.gpu.nodes": str(nodes),
        **PROFILES[run.profile],
    }
    command = [helm, "template", run.release, str(chart_root / "charts/verl-ppo"), "--namespace", NAMESPACE,
               "-f", str(chart_root / run.values_file)]
    for key, value in settings.items():
        command += ["--set-string" if key == "ppo-job.verlVersion" else "--set", f"{key}={value}"]
    for key, value in run.settings:  # JSON: Helm 4's --set reads 0.4 as a string
        command += ["--set-json", f"{key}={value}"]
    return command + ["--set-json", f'ppo-job.extraArgs=["trainer.total_training_steps={run.steps}"]']


def submitter_job(objects: list[dict]) -> dict:
    """The Job that submits the run (not the test pod or the uninstall hook)."""
    jobs = [o for o in objects if o.get("kind") == "Job"
            and "helm.sh/hook" not in (o["metadata"].get("annotations") or {})]
    if len(jobs) != 1:
        sys.exit(f"render: expected one submitter Job, found {[j['metadata']['name'] for j in jobs]}")
    return jobs[0]


def job_environment(job: dict) -> dict[str, str]:
    """The submitter container's env, with the downward-API fields a Kubernetes node would fill in."""
    fields = {"metadata.namespace": NAMESPACE,
              "metadata.labels['batch.kubernetes.io/job-name']": job["metadata"]["name"]}
    env = {}
    for item in job["spec"]["template"]["spec"]["containers"][0].get("env", []):
        if "value" in item:
            env[item["name"]] = item["value"]
        elif item.get("valueFrom", {}).get("fieldRef", {}).get("fieldPath") in fields:
            env[item["name"]] = fields[item["valueFrom"]["fieldRef"]["fieldPath"]]
        else:
            sys.exit(f"render: cannot resolve env {item['name']} of the submitter Job outside Kubernetes")
    return env


def render(chart_root: Path, name: str, run: Run, gpus: int, out: Path, nodes: int = 1) -> None:
    command = helm_command(chart_root, run, gpus, nodes)
    rendered = subprocess.run(command, check=True, capture_output=True, text=True).stdout
    objects = [o for o in yaml.safe_load_all(rendered) if o]
    job = submitter_job(objects)
    config_maps = {o["metadata"]["name"]: o for o in objects if o.get("kind") == "ConfigMap"}
    volume = next(v for v in job["spec"]["template"]["spec"]["volumes"] if "configMap" in v)
    files = config_maps[volume["configMap"]["name"]]["data"]
    out.mkdir(parents=True, exist_ok=True)
    for file_name in ("job.json", "submitter.py", "logtail.py"):
        (out / file_name).write_text(files[file_name])
    spec = json.loads(files["job.json"])
    manifest = {
        "run": name, "profile": run.profile, "gpus": gpus, "nodes": nodes, "release": run.release, "values_file": run.values_file, "steps": run.steps,
        "model_size": run.model, "model_path": model_path(run.model), "mount_path": MOUNT_PATH,
        "checkpoint_dir": spec["metadata"]["checkpointDir"], "submitter_job": job["metadata"]["name"],
        "submitter_command": job["spec"]["template"]["spec"]["containers"][0]["command"],
        "env": job_environment(job),
        "helm_command": shlex.join(["helm"] + command[1:]).replace(str(chart_root) + "/", ""),
    }
    (out / "run.json").write_text(json.dumps(manifest, indent=2) + "\n")
    print(f"rendered {out.name}: {spec['entrypoint'][:100]}...")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chart-root", type=Path, default=ROOT, help="checkout whose chart is rendered")
    parser.add_argument("--gpus", type=int, nargs="+", default=[1, 2], help="GPUs of the machine(s) to run on")
    parser.add_argument("--nodes", type=int, nargs="+", default=[1],
                        help="Ray nodes to split those GPUs over (2: a head and a worker raylet)")
    args = parser.parse_args()
    bundle = Path(os.environ.get("GPU_BUNDLE", ROOT / ".gpu"))
    for gpus in args.gpus:
        for nodes in (n for n in args.nodes if gpus % n == 0 and gpus // n):
            for name, run in RUNS.items():
                render(args.chart_root.resolve(), name, run, gpus // nodes,
                       bundle / "jobs" / run_folder(name, gpus // nodes, nodes), nodes)
    # The preparation program the chart ships, next to the runs it feeds.
    shutil.copy(args.chart_root / "charts/verl-ppo/charts/ppo-job/files/prepare.py", bundle / "prepare.py")


if __name__ == "__main__":
    main()
