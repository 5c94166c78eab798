"""Render, with the project's Helm, the PPO runs of the GPU proof into $GPU_BUNDLE/jobs/<run>-<n>gpu/.

Each run is `helm template` of an H200 (or the seed's) values file, changed only where the GPU machine
differs from a cluster: the mount path and the data and model paths on it (a local folder), the model,
the GPUs of one machine, the veRL version the carried wheels hold (the profile: veRL 0.3.0.post1 with
its HF rollout, or veRL 0.9.1 with the chart's own vLLM rollout), the step count, and what the machine
lacks (LAB_OVERRIDES). From the rendered objects it keeps what the submitter's pod would have: every file of
every ConfigMap mounted into its container (job.json, submitter.py, logtail.py, preflight.py, ...), and the
Job's environment (downward-API values resolved as Kubernetes would; paths into a mount resolved by the proof
against the run's folder).

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
# veRL 0.3.0.post1, its HF rollout (no vLLM output kind to ask for: the final output only off). The vllm profile keeps
# the chart's rollout engine (vllm).
# The machine runs the profile's wheels, not an image: each names an image ppo-job's files/verl-versions.yaml does
# not know, so the rulebook leaves the version's pairing to the profile.
PROFILES = {
    "hf": {"ppo-job.verlVersion": "0.3.0.post1", "ppo-job.rollout.name": "hf",
           "ppo-job.rollout.finalOutputOnly": "false",
           "global.rolloutMetrics.enabled": "false", "observability.dashboards.enabled": "false",
           "global.image.repository": "verl-ppo-lab/gpu-wheels", "global.image.tag": "hf"},
    # No Prometheus on the GPU machine to take the rollout servers' metrics (the chart's head sidecar), nor a Grafana
    # for their dashboard.
    "vllm": {"ppo-job.verlVersion": "0.9.1", "global.rolloutMetrics.enabled": "false",
             "observability.dashboards.enabled": "false",
             "global.image.repository": "verl-ppo-lab/gpu-wheels", "global.image.tag": "vllm"},
}
# What the GPU machine lacks, made up for in every run of a profile alike (the seed's and the generated one).
# flash-attn has no wheel for the machine's torch: lab/gpu/shim serves its two entry points from PyTorch's own
# flash kernels (variable-length included), so veRL's packed rows (use_remove_padding, the chart's default) run
# as on the images, checked against per-sequence SDPA by lab/gpu/machine_check.py before any run.
LAB_OVERRIDES: dict[str, tuple[str, ...]] = {"hf": (), "vllm": ()}
LAB_CRITIC_OVERRIDES: dict[str, tuple[str, ...]] = {"hf": (), "vllm": ()}


@dataclass(frozen=True)
class Run:
    values_file: str  # relative to the checkout; ONE_GPU_PROFILE: the generator's profile for one H200 and the model
    release: str
    model: str  # a lab/gpu/build_model.py size (and a model of generator/catalog.yaml)
    steps: int
    settings: tuple[tuple[str, str], ...] = ()  # further values as JSON literals
    profile: str = "hf"
    extra_args: tuple[str, ...] = ()  # veRL overrides beyond the chart's values (measurement only)
    rule_offloads: bool = False  # take the FSDP offloads the rules choose for one H200 and the model (the seed's)
    algorithm: str = "ppo"  # ONE_GPU_PROFILE: the algorithm the generator sizes for (`render --algorithm`)
    lora_rank: int = 0  # ONE_GPU_PROFILE: the actor's LoRA rank the generator sizes for (`render --lora-rank`)
    ignore_plan: bool = False  # ONE_GPU_PROFILE: rendered where the plan says it overflows (`render --ignore-plan`)


# The ladder of sizes (issue 34): what `python -m generator render` writes for one H200 GPU and the run's model,
# from the catalog's H200 node type cut to one GPU (the machine the proof runs on), into the bundle.
ONE_GPU_PROFILE = "one-h200"
CATALOG_SHAPE = "h200-141g-x8"
ONE_GPU_SHAPE = "h200-141g-x1"
# The offload values the rules set, carried onto the seed's parameters at sizes where the seed's would not fit.
OFFLOAD_KEYS = (("actor", "paramOffload"), ("actor", "optimizerOffload"), ("ref", "paramOffload"),
                ("critic", "paramOffload"), ("critic", "optimizerOffload"))


_ONE_GPU_FILES: dict[tuple[str, str, str, int, bool], Path] = {}


def one_gpu_values(chart_root: Path, model: str, bundle: Path, algorithm: str = "ppo", lora_rank: int = 0,
                   ignore_plan: bool = False) -> Path:
    """The generated values for one H200 GPU, `model`, the algorithm and the LoRA rank (rendered once per bundle; the
    file is the one the generator says it wrote, named as it names them); with ignore_plan, even where the plan says a
    phase overflows the GPU."""
    key = (str(bundle), model, algorithm, lora_rank, ignore_plan)
    if key in _ONE_GPU_FILES:
        return _ONE_GPU_FILES[key]
    out = bundle / "values" / model
    catalog = yaml.safe_load((chart_root / "generator/catalog.yaml").read_text())
    eight = next(shape for shape in catalog["shapes"] if shape["name"] == CATALOG_SHAPE)
    per_gpu = {"cpu": str(int(eight["allocatable"]["cpu"]) // eight["gpusPerNode"]),
               "memory": f"{int(eight['allocatable']['memory'].removesuffix('Gi')) // eight['gpusPerNode']}Gi"}
    catalog["shapes"] = [{**eight, "name": ONE_GPU_SHAPE, "gpusPerNode": 1, "allocatable": per_gpu}]
    out.mkdir(parents=True, exist_ok=True)
    (out / "catalog.yaml").write_text(yaml.safe_dump(catalog, sort_keys=False))
    command = [sys.executable, "-m", "generator", "render", ONE_GPU_SHAPE, "--model", model, "--nodes", "1",
               "--algorithm", algorithm, "--lora-rank", str(lora_rank), "--catalog", str(out / "catalog.yaml"),
               "--output", str(out), *(["--ignore-plan"] if ignore_plan else [])]
    wrote = subprocess.run(command, check=True, cwd=chart_root, capture_output=True, text=True).stdout
    paths = [Path(line.split(" ", 1)[1]) for line in wrote.splitlines() if line.startswith(("wrote ", "unchanged "))]
    _ONE_GPU_FILES[key] = next(path for path in paths if path.parent == out)
    return _ONE_GPU_FILES[key]


def rule_offload_settings(chart_root: Path, model: str, bundle: Path) -> tuple[tuple[str, str], ...]:
    job = yaml.safe_load(one_gpu_values(chart_root, model, bundle).read_text())["ppo-job"]
    return tuple((f"ppo-job.{role}.{key}", json.dumps(job[role][key])) for role, key in OFFLOAD_KEYS
                 if key in job.get(role, {}))


# The side-by-side of make gpu-bench VLLM=1 (issue 27): no checkpoint or validation inside the timed steps
# (the chart's values saveFreq/testFreq, and veRL 0.9.1's validation before training), 4 steps so that 2
# and 3 are steady (the first warms up, the last ends the run). The chart renders its replay buffer, polled
# every 50 ms, for veRL 0.9.1 (ppo-job.trainer.rolloutPollSeconds); the submitter ships it with the run.
BENCH_SETTINGS = (("ppo-job.trainer.saveFreq", "-1"), ("ppo-job.trainer.testFreq", "-1"))
BENCH_ARGS = ("trainer.val_before_train=false",)
# veRL's own replay buffer, polled every 2 s: the chart's value that turns its own off.
POLL_2S = (("ppo-job.trainer.rolloutPollSeconds", "null"),)
# vLLM's output after every token, as veRL asks by default: the generated profiles ask for the final output only
# (ppo-job.rollout.finalOutputOnly, measured 2026-12-03e); the async modes and the legacy trainer need this.
EVERY_STEP_OUTPUT = (("ppo-job.rollout.finalOutputOnly", "false"),)
# The rollout on GPUs of its own: the chart's pool with enabled=true alone (one node like the training group's).
SEPARATE_ASYNC = (("ppo-job.trainer.mode", '"separate_async"'), ("global.rolloutPool.enabled", "true"))


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
    "vllm-seed": Run("values/seed-2gpu.yaml", "vllm-seed", "qwen2.5-0.5b", 4, BENCH_SETTINGS, "vllm", BENCH_ARGS),
    "vllm-generated": Run("values/h200-141g-x8.yaml", "vllm-generated", "qwen2.5-0.5b", 4, BENCH_SETTINGS, "vllm",
                          BENCH_ARGS),
    # veRL 0.9.1's trainer settings for the rollout's wait (issue 34): the default trainer polling every 2 s
    # (the two runs above look every 50 ms), and the legacy trainer (use_v1=false), which waits on the rollout.
    "vllm-generated-poll2s": Run("values/h200-141g-x8.yaml", "vllm-generated-poll2s", "qwen2.5-0.5b", 4,
                                 BENCH_SETTINGS + POLL_2S, "vllm", BENCH_ARGS),
    "vllm-generated-v0": Run("values/h200-141g-x8.yaml", "vllm-generated-v0", "qwen2.5-0.5b", 4,
                             BENCH_SETTINGS + POLL_2S + EVERY_STEP_OUTPUT, "vllm",
                             BENCH_ARGS + ("trainer.use_v1=false",)),
    # Rollout overlapped with training, one step off-policy (ppo-job.trainer.mode=colocate_async).
    "vllm-generated-colocate-async": Run("values/h200-141g-x8.yaml", "vllm-generated-colocate-async",
                                         "qwen2.5-0.5b", 4, BENCH_SETTINGS + EVERY_STEP_OUTPUT + (
                                             ("ppo-job.trainer.mode", '"colocate_async"'),), "vllm", BENCH_ARGS),
    # vLLM's output after every token (veRL's default), beside vllm-generated's final output only (issue 34:
    # 11.25 s a step against 9.71 and 9.96 on one H200, 2026-12-03e).
    "vllm-generated-every-step": Run("values/h200-141g-x8.yaml", "vllm-generated-every-step", "qwen2.5-0.5b", 4,
                                     BENCH_SETTINGS + EVERY_STEP_OUTPUT, "vllm", BENCH_ARGS),
    # Issue 34 item 2: veRL's fused kernels (the LM head and log-prob in one pass, torch backend: no logits of the
    # whole vocabulary kept) and Liger's (liger-kernel, lab/gpu/wheels-vllm.txt), each beside vllm-generated; a rule
    # only where it measures faster.
    "vllm-generated-fused": Run("values/h200-141g-x8.yaml", "vllm-generated-fused", "qwen2.5-0.5b", 4, BENCH_SETTINGS,
                                "vllm", BENCH_ARGS + ("actor_rollout_ref.model.use_fused_kernels=true",)),
    "vllm-generated-liger": Run("values/h200-141g-x8.yaml", "vllm-generated-liger", "qwen2.5-0.5b", 4, BENCH_SETTINGS,
                                "vllm", BENCH_ARGS + ("actor_rollout_ref.model.use_liger=true",)),
    "vllm-generated-mem07": Run("values/h200-141g-x8.yaml", "vllm-generated-mem07", "qwen2.5-0.5b", 3, (
        ("ppo-job.rollout.gpuMemoryUtilization", "0.7"),), profile="vllm"),
    # The seed's multi-node shape on one machine (issue 14): rendered for 2 nodes of 1 GPU and for 1 node of 2,
    # compared in one command. HF profile (its wheels fit one command's carry); vLLM the same with veRL 0.9.1.
    "two-node": Run("values/seed-2gpu.yaml", "two-node", "qwen2.5-0.5b", 3),
    "vllm-two-node": Run("values/seed-2gpu.yaml", "vllm-two-node", "qwen2.5-0.5b", 3, profile="vllm"),
    # The same with the rollout on a pool of its own (issue 36): veRL 0.9.1's separate_async, one GPU training and
    # the chart's default pool (one node like the training group's) the other; against vllm-two-node on 1 node of 2.
    "vllm-separate-async": Run("values/seed-2gpu.yaml", "vllm-separate-async", "qwen2.5-0.5b", 3, SEPARATE_ASYNC,
                               profile="vllm"),
    # GRPO as the chart renders it (issue 11): no critic, KL in the loss, 5 responses per prompt. It needs a
    # rollout that samples n: veRL 0.3.0.post1's HF rollout samples one response per prompt (the chart's
    # rulebook refuses n > 1 there), so it runs on the vllm profile (veRL 0.9.1). Mode vllm-grpo.
    "grpo": Run("values/h200-141g-x8.yaml", "grpo", "tiny", 3, (("ppo-job.algorithm.name", '"grpo"'),), profile="vllm"),
    # Issue 27's target: the chart's GRPO render (n=5) of the H200 profile with the 0.5B shape, 3 steps and the
    # checkpoint of the last one within one 10-minute command (validation only skipped).
    "vllm-grpo-0.5b": Run("values/h200-141g-x8.yaml", "grpo-0-5b", "qwen2.5-0.5b", 3, (
        ("ppo-job.algorithm.name", '"grpo"'), ("ppo-job.trainer.testFreq", "-1")), "vllm", BENCH_ARGS),
    # The rollout engine kept awake between steps (no sleep after sampling, no wake before the next): what the
    # engine's sleep and wake cost. Its memory then stays taken while training, so it gets a smaller share.
    "vllm-generated-awake": Run("values/h200-141g-x8.yaml", "vllm-generated-awake", "qwen2.5-0.5b", 4,
                                BENCH_SETTINGS + (("ppo-job.rollout.gpuMemoryUtilization", "0.25"),), "vllm",
                                BENCH_ARGS + ("actor_rollout_ref.rollout.free_cache_engine=false",)),
}
# The ladder (issue 34 item 3): each size with the generator's profile for one H200, and with the seed's
# parameters (the offloads the rules choose where the seed's would not fit), as the 0.5B pair above.
for _size in ("1.5b", "3b"):
    RUNS[f"vllm-{_size}-generated"] = Run(ONE_GPU_PROFILE, f"generated-{_size.replace('.', '-')}",
                                          f"qwen2.5-{_size}", 4, BENCH_SETTINGS, "vllm", BENCH_ARGS)
    RUNS[f"vllm-{_size}-generated-every-step"] = Run(ONE_GPU_PROFILE, f"generated-es-{_size.replace('.', '-')}",
                                                     f"qwen2.5-{_size}", 4, BENCH_SETTINGS + EVERY_STEP_OUTPUT, "vllm",
                                                     BENCH_ARGS)
    RUNS[f"vllm-{_size}-seed"] = Run("values/seed-2gpu.yaml", f"seed-{_size.replace('.', '-')}", f"qwen2.5-{_size}",
                                     4, BENCH_SETTINGS, "vllm", BENCH_ARGS, rule_offloads=True)


# Issue 35: GRPO (n=5) with LoRA rank 32 on Qwen2.5-7B's shape, as the generator sizes it for one H200 (`render
# h200-141g-x1 --model qwen2.5-7b --algorithm grpo --lora-rank 32`), 3 steps and the checkpoint of the last (the
# proof checks the adapter in it: lora_train_meta.json, then veRL's model merger writes the PEFT files as
# docs/algorithms.md says); then the same run without LoRA, as sized for a full fine-tune (offloads), to compare.
# The prompts a step are cut to 32 (160 samples): a run takes about 7.5 minutes (run it detached: docs/sizing.md);
# the plan's memory a phase does not depend on the batch (token budgets bound the micro batches; vLLM takes its
# share whatever the batch).
LORA_7B_SETTINGS = (("ppo-job.trainer.testFreq", "-1"), ("ppo-job.data.trainBatchSize", "32"),
                    ("ppo-job.actor.ppoMiniBatchSize", "32"))
RUNS["vllm-lora-7b"] = Run(ONE_GPU_PROFILE, "lora-7b", "qwen2.5-7b", 3, LORA_7B_SETTINGS, "vllm", BENCH_ARGS,
                           algorithm="grpo", lora_rank=32)
# The full run checks the plan's verdict: `generator plan --shape h200-141g-x1 --model qwen2.5-7b --algorithm grpo`
# says the actor's update overflows (173 of 141 GiB with both offloads), so `render` writes it only with --ignore-plan;
# the run is expected to fail there. No checkpoint: its fp32 weights and Adam moments (about 91 GB) would fill the disk.
RUNS["vllm-7b-grpo-full"] = Run(ONE_GPU_PROFILE, "full-7b", "qwen2.5-7b", 3,
                                LORA_7B_SETTINGS + (("ppo-job.trainer.saveFreq", "-1"),), "vllm", BENCH_ARGS,
                                algorithm="grpo", ignore_plan=True)


def pooled(run: Run) -> bool:
    """Whether the run has the chart's rollout pool (its GPUs beside the training group's)."""
    return ("global.rolloutPool.enabled", "true") in run.settings


def training_layout(run: Run, gpus: int, nodes: int) -> tuple[int, int] | None:
    """The training group's (GPUs per node, nodes) on a machine split into `nodes` Ray nodes of `gpus` GPUs. A run
    with the rollout pool takes one node's GPUs in two halves, training and the chart's default pool (one node like
    the training group's); it has no layout (None) on several nodes or an odd GPU count. The generator's profile for
    one H200 has only the layout it was sized for (the rulebook refuses more GPUs than its node type's)."""
    if run.values_file == ONE_GPU_PROFILE:
        return (1, 1) if (gpus, nodes) == (1, 1) else None
    if not pooled(run):
        return gpus, nodes
    return (gpus // 2, 1) if nodes == 1 and gpus >= 2 and gpus % 2 == 0 else None


# The `ray start` options that give a node Ray resources. KubeRay passes each group's rayStartParams on to its pods'
# `ray start`, and num-gpus, where a group leaves it out, from its Ray container's GPU limit.
RAY_RESOURCE_PARAMS = ("num-cpus", "num-gpus", "resources")


def ray_nodes(objects: list[dict]) -> list[dict]:
    """The Ray nodes of the rendered RayCluster (or RayJob), in KubeRay's order: the head, then each worker group's
    replicas; each with its group, its GPUs and the Ray resources of its rayStartParams (shell words: unquoted).
    The GPU proof starts one raylet for each, so that Ray places veRL's pools there as on the chart's pods."""
    cluster = next(o for o in objects if o.get("kind") in ("RayCluster", "RayJob"))
    spec = cluster["spec"] if cluster["kind"] == "RayCluster" else cluster["spec"]["rayClusterSpec"]
    groups = [("head", 1, spec["headGroupSpec"])]
    groups += [(group["groupName"], group["replicas"], group) for group in spec.get("workerGroupSpecs", [])]
    nodes = []
    for name, replicas, group in groups:
        params = {key: shlex.split(str(value))[0] for key, value in (group.get("rayStartParams") or {}).items()
                  if key in RAY_RESOURCE_PARAMS}
        limits = group["template"]["spec"]["containers"][0].get("resources", {}).get("limits", {})
        gpus = int(params.pop("num-gpus", limits.get("nvidia.com/gpu", 0)))
        nodes += [{"group": name, "gpus": gpus, "params": params} for _ in range(replicas)]
    return nodes


def overrides(entrypoint: str) -> dict[str, str]:
    """A rendered entrypoint's Hydra overrides, key to value (the shell words after the module)."""
    return dict(word.split("=", 1) for word in shlex.split(entrypoint) if "=" in word and not word.startswith("-"))


def model_path(size: str) -> str:
    return f"{MOUNT_PATH}/models/{size}-random"


def run_folder(name: str, gpus: int, nodes: int = 1) -> str:
    """jobs/<run>-<n>gpu for one node of n GPUs, jobs/<run>-<nodes>x<n>gpu for several nodes."""
    return f"{name}-{gpus}gpu" if nodes == 1 else f"{name}-{nodes}x{gpus}gpu"


def helm_command(chart_root: Path, run: Run, gpus: int, nodes: int = 1, bundle: Path | None = None) -> list[str]:
    """gpus, nodes: the training group's GPUs per node and nodes (a head and nodes - 1 worker raylets)."""
    bundle = bundle or ROOT / ".gpu"
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
    values = one_gpu_values(chart_root, run.model, bundle, run.algorithm, run.lora_rank, run.ignore_plan) \
        if run.values_file == ONE_GPU_PROFILE else chart_root / run.values_file
    command = [helm, "template", run.release, str(chart_root / "charts/verl-ppo"), "--namespace", NAMESPACE,
               "-f", str(values)]
    for key, value in settings.items():
        command += ["--set-string" if key == "ppo-job.verlVersion" else "--set", f"{key}={value}"]
    offloads = rule_offload_settings(chart_root, run.model, bundle) if run.rule_offloads else ()
    for key, value in offloads + run.settings:  # JSON: Helm 4's --set reads 0.4 as a string
        command += ["--set-json", f"{key}={value}"]
    extra = [f"trainer.total_training_steps={run.steps}", *LAB_OVERRIDES[run.profile], *run.extra_args]
    if run.algorithm == "ppo" and (not run.settings or ("ppo-job.algorithm.name", '"ppo"') in run.settings or
                                   all(key != "ppo-job.algorithm.name" for key, _ in run.settings)):
        extra += LAB_CRITIC_OVERRIDES[run.profile]  # PPO trains a critic; the others render no critic.* key
    return command + ["--set-json", f"ppo-job.extraArgs={json.dumps(extra)}"]


def submitter_job(objects: list[dict]) -> dict:
    """The Job that submits the run (not the test pod or the uninstall hook)."""
    jobs = [o for o in objects if o.get("kind") == "Job"
            and "helm.sh/hook" not in (o["metadata"].get("annotations") or {})]
    if len(jobs) != 1:
        sys.exit(f"render: expected one submitter Job, found {[j['metadata']['name'] for j in jobs]}")
    return jobs[0]


def mounted_files(objects: list[dict], job: dict) -> dict[str, dict[str, str]]:
    """Every file of every ConfigMap mounted into the submitter's container, by mount path (the pod reads
    them there: the job spec, the submitter and what it runs, such as the preflight program)."""
    pod = job["spec"]["template"]["spec"]
    config_maps = {o["metadata"]["name"]: o.get("data", {}) for o in objects if o.get("kind") == "ConfigMap"}
    volumes = {v["name"]: v["configMap"]["name"] for v in pod.get("volumes", []) if "configMap" in v}
    mounts: dict[str, dict[str, str]] = {}
    for mount in pod["containers"][0].get("volumeMounts", []):
        if mount["name"] in volumes:
            if "subPath" in mount:
                sys.exit(f"render: subPath mount {mount['mountPath']} of the submitter is not carried to the GPU "
                         "machine")
            mounts[mount["mountPath"]] = config_maps[volumes[mount["name"]]]
    names = [name for files in mounts.values() for name in files]
    if len(names) != len(set(names)):
        sys.exit(f"render: two mounted ConfigMaps share a file name ({sorted(names)}): one run folder cannot hold both")
    return mounts


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
    layout = training_layout(run, gpus, nodes)
    if layout is None:
        sys.exit(f"render: {name} has no layout on {nodes} node(s) of {gpus} GPU(s) (training_layout)")
    command = helm_command(chart_root, run, *layout, bundle=out.parents[1])
    rendered = subprocess.run(command, check=True, capture_output=True, text=True).stdout
    objects = [o for o in yaml.safe_load_all(rendered) if o]
    job = submitter_job(objects)
    out.mkdir(parents=True, exist_ok=True)
    mounts = mounted_files(objects, job)
    for files in mounts.values():
        for file_name, text in files.items():
            (out / file_name).write_text(text)
    spec = json.loads((out / "job.json").read_text())
    manifest = {
        # gpus, nodes: the machine's layout (Ray nodes of gpus GPUs each); training: the training group's part of it.
        "run": name, "profile": run.profile, "gpus": gpus, "nodes": nodes, "release": run.release,
        "training": {"gpus_per_node": layout[0], "nodes": layout[1]},
        # The raylets the proof starts: the rendered RayCluster's groups, each with its GPUs and Ray resources.
        "ray_nodes": ray_nodes(objects),
        "values_file": run.values_file, "steps": run.steps,
        "model_size": run.model, "model_path": model_path(run.model), "mount_path": MOUNT_PATH,
        "checkpoint_dir": spec["metadata"]["checkpointDir"], "submitter_job": job["metadata"]["name"],
        "submitter_command": job["spec"]["template"]["spec"]["containers"][0]["command"],
        "env": job_environment(job),
        # Where the pod finds the files written beside run.json: the proof points paths under them there.
        "config_mounts": sorted(mounts),
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
            for name, run in ((name, run) for name, run in RUNS.items() if training_layout(run, gpus // nodes, nodes)):
                render(args.chart_root.resolve(), name, run, gpus // nodes,
                       bundle / "jobs" / run_folder(name, gpus // nodes, nodes), nodes)
    # The preparation program the chart ships, next to the runs it serves.
    shutil.copy(args.chart_root / "charts/verl-ppo/charts/ppo-job/files/prepare.py", bundle / "prepare.py")


if __name__ == "__main__":
    main()
