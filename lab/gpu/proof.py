"""The GPU proof, on a machine with NVIDIA GPUs (lab/gpu/run.sh installs the carried wheels first).

smoke: synthetic GSM8K rows and a tiny random Qwen2 go onto a local "shared volume" through the
chart's own prepare.py; a real Ray head starts with the machine's GPUs; the submitter the chart ships
submits the veRL command the chart rendered (lab/gpu/render_jobs.py) through Ray's Jobs API and follows
it; the proof then checks the checkpoint in the directory the chart names.
bench: the same with a model of Qwen2.5-0.5B's shape, once with the generated H200 profile and once
with the seed's parameters: seconds per step, tokens per second and peak GPU memory of each.
vllm-*: the same with veRL 0.9.1 and the chart's vLLM rollout (wheel profile vllm): vllm-smoke,
vllm-bench (seed, generated, and generated at the earlier rule's rollout memory fraction 0.7), vllm-memory
(the last two only). One 0.5B run takes about 6 minutes with veRL 0.9.1 (3 of them start-up), so a
command of at most 10 minutes holds one of them: `--runs NAME`.
two-node, vllm-two-node: one run on two Ray nodes of one GPU each (head and worker raylet), then on one
node of two GPUs (`--nodes 2 1`); vllm-two-node then runs veRL 0.9.1's separate_async on the same two GPUs, one
training (the head) and one the rollout pool's (a worker raylet), against the one-node run.
Each run's raylets are the Ray nodes of the RayCluster the chart rendered for it (render_jobs.ray_nodes): one per
pod, with its group's GPUs and Ray resources.

Figures and checkpoint listings go to OUT/results.json; logs to OUT/<run>.log.

Usage: python3 lab/gpu/proof.py MODE [--runs NAME ...] [--nodes N ...] [--out DIR] [--timeout S] [--drop-checkpoints]
(MODE: one of MODES below, or one run's name, which runs that run alone)
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import re
import shlex
import shutil
import statistics
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path

import render_jobs

HERE = Path(__file__).resolve().parent
BUNDLE = Path(os.environ.get("GPU_BUNDLE", HERE.parents[1] / ".gpu"))  # the checkout's .gpu/, as render_jobs.py writes
WORK = Path(os.environ.get("GPU_WORK", "/tmp/verl-ppo-gpu"))
DASHBOARD_PORT = 8265
HEAD_PORT = 6379  # ray start's default GCS port
# vllm-bench: the seed's parameters, then the generated profile; one 0.5B run of veRL 0.9.1 fills most of a
# 10-minute command, so each command names one with --runs (make gpu-bench VLLM=1 GPU_RUNS=vllm-seed), the
# two alternating, and lab/gpu/report.py puts the commands' results together.
MODES = {"smoke": ["smoke"], "bench": ["bench-generated", "bench-seed"], "sizing": ["bench-micro16"],
         "vllm-smoke": ["vllm-smoke"], "vllm-bench": ["vllm-seed", "vllm-generated"],
         "vllm-memory": ["vllm-generated-mem07", "vllm-generated"], "vllm-grpo": ["vllm-grpo-0.5b"],
         "vllm-grpo-tiny": ["grpo"],
         # veRL 0.9.1's trainer settings for the rollout's wait and overlap, each against vllm-generated.
         "vllm-trainers": ["vllm-generated-poll2s", "vllm-generated-v0", "vllm-generated-colocate-async",
                           "vllm-generated-every-step"],
         "vllm-awake": ["vllm-generated-awake"],
         # Issue 34 item 2: veRL's fused kernels and Liger's, each beside the generated profile.
         "vllm-kernels": ["vllm-generated-fused", "vllm-generated-liger", "vllm-generated"],
         # The ladder of sizes: each model's generated profile for one H200, then the seed's parameters.
         "vllm-ladder": ["vllm-1.5b-generated", "vllm-1.5b-seed", "vllm-3b-generated", "vllm-3b-seed"],
         # Issue 34: the rollout asking vLLM for each sample's final output only (the generated profile), beside the
         # same profile asking for the output after every token (veRL's default).
         "vllm-final-output": ["vllm-generated", "vllm-generated-every-step"],
         # Issue 35: GRPO with LoRA rank 32 at 7B on one H200 (its checkpoint's adapter checked), then without LoRA.
         "vllm-lora-7b": ["vllm-lora-7b"], "vllm-7b-full": ["vllm-7b-grpo-full"]}
MODES["all"] = MODES["smoke"] + MODES["bench"]
MODES["vllm-all"] = MODES["vllm-smoke"] + MODES["vllm-bench"]
# Two Ray nodes (a head and a worker raylet) of one GPU each, then one node of two GPUs, same run (issue 14).
# vllm-two-node adds the rollout pool's run (one machine's GPUs halved: it runs in the one-node layout only).
MODES["two-node"], MODES["vllm-two-node"] = ["two-node"], ["vllm-two-node", "vllm-separate-async"]
MODE_NODES = {"two-node": [2, 1], "vllm-two-node": [2, 1]}
# (baseline, candidate) pairs compared whenever both ran.
COMPARISONS = {
    "generated_vs_seed": ("bench-seed", "bench-generated"),
    "vllm_generated_vs_seed": ("vllm-seed", "vllm-generated"),
    "vllm_rollout_memory_generated_vs_0.7": ("vllm-generated-mem07", "vllm-generated"),
    "vllm_quick_poll_vs_2s": ("vllm-generated-poll2s", "vllm-generated"),
    "vllm_v1_quick_poll_vs_legacy_trainer": ("vllm-generated-v0", "vllm-generated-every-step"),
    "vllm_colocate_async_vs_sync": ("vllm-generated-every-step", "vllm-generated-colocate-async"),
    "vllm_awake_vs_sleeping_rollout": ("vllm-generated", "vllm-generated-awake"),
    "vllm_fused_kernels_vs_none": ("vllm-generated", "vllm-generated-fused"),
    "vllm_liger_vs_none": ("vllm-generated", "vllm-generated-liger"),
    "vllm_final_output_vs_every_step": ("vllm-generated-every-step", "vllm-generated"),
    "vllm_1.5b_final_output_vs_every_step": ("vllm-1.5b-generated-every-step", "vllm-1.5b-generated"),
    "vllm_3b_final_output_vs_every_step": ("vllm-3b-generated-every-step", "vllm-3b-generated"),
    "vllm_1.5b_generated_vs_seed": ("vllm-1.5b-seed", "vllm-1.5b-generated"),
    "vllm_3b_generated_vs_seed": ("vllm-3b-seed", "vllm-3b-generated"),
    "vllm_7b_lora_vs_full": ("vllm-7b-grpo-full", "vllm-lora-7b"),
    # Both on the same two GPUs: sync (both train and generate) against separate_async (one each).
    "vllm_separate_async_vs_sync_2gpu": ("vllm-two-node@1x2", "vllm-separate-async@1x2"),
}
TRAIN_ROWS, TEST_ROWS = 512, 64
STEP_LINE = re.compile(r"step:(\d+) - (.*)")


def say(message: str) -> None:
    print(f"[gpu-proof {time.strftime('%H:%M:%S')}] {message}", flush=True)


def gpu_count() -> int:
    """GPUs nvidia-smi lists; 0 where there is no NVIDIA driver."""
    if not shutil.which("nvidia-smi"):
        return 0
    listing = subprocess.run(["nvidia-smi", "-L"], capture_output=True, text=True)
    return sum(line.startswith("GPU ") for line in listing.stdout.splitlines()) if listing.returncode == 0 else 0


def gpu_memory_used_mib() -> list[int]:
    query = subprocess.run(["nvidia-smi", "--query-gpu=memory.used", "--format=csv,noheader,nounits"],
                           capture_output=True, text=True)
    return [int(value) for value in query.stdout.split()] if query.returncode == 0 else []


class PeakMemory:
    """Samples every GPU's used memory once a second while a run goes on; keeps the maximum of each."""

    def __init__(self) -> None:
        self.peak: list[int] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)

    def _sample(self) -> None:
        while not self._stop.wait(1.0):
            used = gpu_memory_used_mib()
            self.peak = [max(pair) for pair in zip(self.peak, used, strict=True)] if self.peak else used

    def __enter__(self) -> "PeakMemory":
        self._thread.start()
        return self

    def __exit__(self, *_exc) -> None:
        self._stop.set()
        self._thread.join()


def load_runs(names: list[str], gpus: int, nodes: int = 1) -> list[dict]:
    """The rendered runs for `nodes` Ray nodes of `gpus` GPUs each."""
    runs = []
    profile = os.environ.get("GPU_PROFILE", "hf")
    for name in names:
        folder = BUNDLE / "jobs" / render_jobs.run_folder(name, gpus, nodes)
        if not (folder / "run.json").exists():
            sys.exit(f"gpu: no rendered run {folder.name} in {BUNDLE}/jobs: render it where Helm is with "
                     f"`python3 lab/gpu/render_jobs.py --gpus {gpus * nodes} --nodes {nodes}` (make gpu-wheels does) "
                     f"and copy .gpu/ here")
        run = {**json.loads((folder / "run.json").read_text()), "folder": str(folder)}
        if "ray_nodes" not in run:
            sys.exit(f"gpu: {folder.name}/run.json names no Ray nodes (rendered before they were): render the runs "
                     f"again (make gpu-wheels)")
        if run["profile"] != profile:
            sys.exit(f"gpu: run {name} needs the {run['profile']} wheels, installed is {profile}: "
                     f"run it with GPU_PROFILE={run['profile']} (make ... VLLM=1 for vllm)")
        runs.append(run)
    return runs


def prepare_inputs(runs: list[dict]) -> dict[str, float]:
    """Data and models onto the volume through the chart's prepare.py (which skips what is there)."""
    timings = {}
    prepare = [sys.executable, str(BUNDLE / "prepare.py"), "--source", "local"]
    mount = runs[0]["mount_path"]
    start = time.time()
    subprocess.run([sys.executable, str(HERE / "synth_gsm8k.py"), str(WORK / "gsm8k"), str(TRAIN_ROWS),
                    str(TEST_ROWS)], check=True)
    subprocess.run(prepare + ["--dataset-local-path", str(WORK / "gsm8k"),
                              "--train-file", f"{mount}/data/gsm8k/train.parquet",
                              "--val-file", f"{mount}/data/gsm8k/test.parquet"], check=True)
    timings["data_s"] = round(time.time() - start, 1)
    for size, target in sorted({(run["model_size"], run["model_path"]) for run in runs}):
        start = time.time()
        built = WORK / "built" / size
        if not (built / "config.json").exists():
            subprocess.run([sys.executable, str(HERE / "build_model.py"), size, str(built)], check=True)
        subprocess.run(prepare + ["--model-local-path", str(built), "--model-path", target], check=True)
        timings[f"model_{size}_s"] = round(time.time() - start, 1)
    return timings


class RayHead:
    """A real local Ray cluster with the machine's GPUs and the head's dashboard (the Jobs API the submitter
    speaks): one raylet for each Ray node of the run's rendered RayCluster (render_jobs.ray_nodes: the head, then
    worker raylets joining it), each with its group's GPUs, its own share of the machine's (CUDA_VISIBLE_DEVICES),
    and its group's Ray resources, as the chart's head and worker pods would have. Should the dashboard not come
    up, the head is started again without it and runs go straight to it."""

    def __init__(self, nodes: list[dict]) -> None:
        self.nodes = nodes
        self.url = f"http://127.0.0.1:{DASHBOARD_PORT}"
        self.cli = [sys.executable, "-m", "ray.scripts.scripts"]
        self.jobs_api = True

    def node_env(self, node: int) -> dict[str, str]:
        if len(self.nodes) == 1:
            return dict(os.environ)
        first = sum(other["gpus"] for other in self.nodes[:node])
        devices = ",".join(map(str, range(first, first + self.nodes[node]["gpus"])))
        # Again for lab/gpu/shim: a process started without CUDA_VISIBLE_DEVICES sees this node's share, as in a pod.
        return {**os.environ, "CUDA_VISIBLE_DEVICES": devices, "VERL_PPO_LAB_NODE_GPUS": devices}

    def resource_options(self, node: int) -> list[str]:
        """The node's `ray start` resource options: its GPUs and its group's rayStartParams resources."""
        own = self.nodes[node]
        return [f"--num-gpus={own['gpus']}"] + [f"--{key}={value}" for key, value in sorted(own["params"].items())]

    def start(self, dashboard: bool) -> bool:
        head = subprocess.run(self.cli + ["start", "--head", *self.resource_options(0), "--disable-usage-stats",
                                          f"--include-dashboard={str(dashboard).lower()}", "--dashboard-host=127.0.0.1",
                                          f"--dashboard-port={DASHBOARD_PORT}"], env=self.node_env(0)).returncode == 0
        workers = [subprocess.run(self.cli + ["start", f"--address=127.0.0.1:{HEAD_PORT}",
                                              *self.resource_options(node), "--disable-usage-stats"],
                                  env=self.node_env(node)).returncode == 0
                   for node in range(1, len(self.nodes))] if head else []
        return head and all(workers)

    def dashboard_answers(self, seconds: float) -> bool:
        deadline = time.time() + seconds
        while time.time() < deadline:
            try:
                with urllib.request.urlopen(self.url + "/api/version", timeout=5) as answer:
                    say(f"Ray dashboard answers: {json.load(answer)}")
                    return True
            except OSError:
                time.sleep(1)
        return False

    def __enter__(self) -> "RayHead":
        start = time.time()
        if not (self.start(dashboard=True) and self.dashboard_answers(90)):
            say("Ray's dashboard did not come up: runs go to the head without the submitter (see ray-logs)")
            self.__exit__()
            self.jobs_api = False
            if not self.start(dashboard=False):
                raise SystemExit("gpu: the Ray head did not start")
        say(f"Ray head up in {time.time() - start:.0f} s with {self.nodes[0]['gpus']} GPU(s)" + "".join(
            f"; worker raylet of {node['group']}: {' '.join(self.resource_options(index))}"
            for index, node in enumerate(self.nodes) if index))
        return self

    def __exit__(self, *_exc) -> None:
        subprocess.run(self.cli + ["stop", "--force"], capture_output=True)

    def stop_jobs(self) -> None:
        """Stops what a run left active (after a timeout), so the next run gets the GPUs."""
        if not self.jobs_api:
            return
        with urllib.request.urlopen(self.url + "/api/jobs/", timeout=10) as answer:
            for job in json.load(answer):
                if job.get("status") in ("PENDING", "RUNNING"):
                    request = urllib.request.Request(f"{self.url}/api/jobs/{job['submission_id']}/stop", method="POST")
                    urllib.request.urlopen(request, timeout=10).close()


def step_metrics(log_text: str) -> dict[int, dict[str, float]]:
    """veRL's console logger prints one 'step:N - key:value - ...' line per PPO step."""
    steps = {}
    for match in STEP_LINE.finditer(log_text):
        metrics = {}
        for pair in match.group(2).split(" - "):
            key, _, value = pair.rpartition(":")
            try:
                metrics[key.strip()] = float(value)
            except ValueError:
                continue
        steps[int(match.group(1))] = metrics
    return steps


def checkpoint_listing(directory: str) -> list[str]:
    root = Path(directory)
    return sorted(f"{path.relative_to(root)} {path.stat().st_size}" for path in root.rglob("*") if path.is_file())


def lora_rank(entrypoint: str) -> int:
    """The actor's LoRA rank the entrypoint renders; 0 without LoRA."""
    for word in shlex.split(entrypoint):
        if word.startswith("actor_rollout_ref.model.lora_rank="):
            return int(word.split("=", 1)[1])
    return 0


def adapter_check(checkpoint_dir: str, step: str | None, rank: int, timeout: float = 600) -> dict:
    """A LoRA run's checkpoint holds its adapter: the actor's lora_train_meta.json at the rank rendered, then veRL's
    model merger (docs/algorithms.md's command) writes it as PEFT files, adapter_config.json (r: the rank) and
    adapter_model.safetensors, under <step>/merged/lora_adapter."""
    actor = Path(checkpoint_dir) / f"global_step_{step}" / "actor"
    meta_path = actor / "lora_train_meta.json"
    found: dict = {"actor_dir": str(actor), "expected_rank": rank,
                   "meta": json.loads(meta_path.read_text()) if meta_path.exists() else None}
    merged = actor.parent / "merged"
    command = [sys.executable, "-m", "verl.model_merger", "merge", "--backend", "fsdp", "--local_dir", str(actor),
               "--target_dir", str(merged)]
    try:
        merge = subprocess.run(command, capture_output=True, text=True, timeout=timeout)
        found["merge_exit_code"], found["merge_tail"] = merge.returncode, (merge.stdout + merge.stderr)[-2000:]
    except subprocess.TimeoutExpired:
        found["merge_exit_code"] = 124
    adapter = merged / "lora_adapter"
    config = adapter / "adapter_config.json"
    found["peft_files"] = sorted(path.name for path in adapter.glob("*")) if adapter.is_dir() else []
    found["peft_rank"] = json.loads(config.read_text()).get("r") if config.exists() else None
    found["ok"] = bool(found["meta"] and found["meta"].get("r") == rank and found["peft_rank"] == rank
                       and "adapter_model.safetensors" in found["peft_files"])
    shutil.rmtree(merged, ignore_errors=True)  # the base's weights beside it: 15 GB at 7B
    return found


def peak_metric(steps: dict[int, dict[str, float]], suffix: str) -> float | None:
    values = [value for step in steps.values() for key, value in step.items() if key.endswith(suffix)]
    return round(max(values), 3) if values else None


# Model FLOPs of each phase a step (attention's own FLOPs left out: rows are at most 768 tokens): 2N a token for
# a forward pass (generation: prompt and response tokens; log-probs; values), 6N for a forward and backward
# pass (the updates; a recompute under gradient checkpointing is not model work). N counts the matmul weights:
# the layers and, for the actor, the LM head (tied to the embedding, whose lookup is no matmul); the critic has a
# one-output value head instead.
PHASE_PASSES = {"gen": ("actor", 2), "old_log_prob": ("actor", 2), "ref": ("actor", 2), "values": ("critic", 2),
                "update_actor": ("actor", 6), "update_critic": ("critic", 6)}
H200_BF16_DENSE_TFLOPS = 989  # NVIDIA's H200 SXM datasheet


def matmul_params(config: dict) -> dict[str, int]:
    """N of the actor and of the critic from a Qwen2 config.json."""
    hidden, layers = config["hidden_size"], config["num_hidden_layers"]
    kv = hidden // config["num_attention_heads"] * config["num_key_value_heads"]
    per_layer = hidden * (hidden + 2 * kv) + hidden * hidden + 3 * hidden * config["intermediate_size"]
    body = layers * per_layer
    return {"actor": body + hidden * config["vocab_size"], "critic": body + hidden}


def phase_mfu(timing_s: dict, tokens_per_step: float | None, params: dict[str, int], peak_tflops: float) -> dict:
    """Each timed phase's model TFLOP/s and its share of the peak, over one step's tokens."""
    figures = {}
    for phase, (model, passes) in PHASE_PASSES.items():
        if timing_s.get(phase) and tokens_per_step:
            tflops = passes * params[model] * tokens_per_step / timing_s[phase] / 1e12
            figures[phase] = {"tflops": round(tflops, 1), "mfu": round(tflops / peak_tflops, 4)}
    return figures


def mfu_figures(config: dict, timing_s: dict, tokens_per_step: float | None, measured_tflops: float | None) -> dict:
    """A run's matmul parameters (from its model's config.json), the peaks its MFU is taken against, and each phase's
    MFU against the datasheet's."""
    params = matmul_params(config)
    return {"matmul_params": params,
            "mfu_peak_tflops": {"datasheet": H200_BF16_DENSE_TFLOPS, "measured_matmul": measured_tflops},
            "phase_mfu": phase_mfu(timing_s, tokens_per_step, params, H200_BF16_DENSE_TFLOPS)}


def step_spread(steps: dict[int, dict[str, float]], steady: list[int]) -> list[float]:
    return [steps[n]["perf/time_per_step"] for n in steady if "perf/time_per_step" in steps.get(n, {})]


def summarize(run: dict, steps: dict[int, dict[str, float]], peak: list[int]) -> dict:
    """Means over the steady steps: not the first (warm-up) nor the last (validation and checkpoint).
    veRL 0.9.1 logs the validation before training as step 0, with no step timings: not a training step.
    A run stopped early (timeout) falls back to the training steps it logged (steady_steps says so)."""
    training = {n: step for n, step in steps.items() if "perf/time_per_step" in step}
    steady = [training[n] for n in sorted(training) if 1 < n < run["steps"]] or list(training.values())

    def mean(key: str) -> float | None:
        values = [step[key] for step in steady if key in step]
        return round(statistics.mean(values), 3) if values and len(values) == len(steady) else None

    seconds = mean("perf/time_per_step")
    tokens = mean("perf/total_num_tokens")
    # Every phase veRL timed (the names differ between versions: 0.9.1 adds update_weights and others).
    phases = sorted({key.removeprefix("timing_s/") for step in steady for key in step if key.startswith("timing_s/")})
    return {
        "steps_logged": sorted(steps), "training_steps": sorted(training),
        "steady_steps": [n for n in sorted(training) if 1 < n < run["steps"]] or sorted(training),
        "seconds_per_step": seconds,
        "tokens_per_step": tokens,
        "tokens_per_second": round(tokens / seconds, 1) if seconds and tokens else None,
        "tokens_per_second_per_gpu": mean("perf/throughput"),
        "timing_s": {name: mean(f"timing_s/{name}") for name in phases},
        # veRL 0.3 logs perf/max_memory_*; 0.9.1 logs one per worker role (actor/perf/..., critic/perf/...).
        "torch_max_allocated_gib": peak_metric(steps, "perf/max_memory_allocated_gb"),
        "torch_max_reserved_gib": peak_metric(steps, "perf/max_memory_reserved_gb"),
        "nvidia_smi_peak_mib": peak,
        "response_length_mean": mean("response_length/mean"),
    }


def rollout_figures(entrypoint: str, summary: dict, floor: dict | None) -> dict:
    """Generated tokens per second of the rollout phase (the batch's responses over its time), and the rollout's
    time over vLLM's own for the same batch (lab/gpu/generation_floor.py), where it was measured. The rollout's
    time: the chart's replay buffer's wait for the whole batch (timing_s/rollout_wait, to within its 50-ms poll)
    where it ran, else veRL's timing_s/gen (which also puts the engine to sleep, and polls every 2 s)."""
    settings = render_jobs.overrides(entrypoint)
    rows = int(settings["data.train_batch_size"]) * int(settings.get("actor_rollout_ref.rollout.n", 1))
    gen = summary["timing_s"].get("rollout_wait") or summary["timing_s"].get("gen")
    length = summary.get("response_length_mean")
    same_batch = floor and floor["prompts"] * floor["samples_per_prompt"] == rows
    return {"rollout_rows": rows, "rollout_timer": "rollout_wait" if summary["timing_s"].get("rollout_wait") else "gen",
            "rollout_tokens_per_second": round(rows * length / gen, 1) if gen and length else None,
            "rollout_over_floor": round(gen / floor["floor_s"], 2) if gen and same_batch else None}


def generation_floor(run: dict, out: Path, engine: str = "offline") -> dict | None:
    """vLLM's own time for the run's rollout batch, in a process of its own before Ray takes the GPU; engine
    async: through vLLM's asynchronous engine as veRL's rollout server runs it (lab/gpu/generation_floor.py)."""
    path = out / f"generation-floor-{'async-' if engine == 'async' else ''}{run['model_size']}.json"
    say(f"generation floor ({engine}): vLLM alone on {run['run']}'s batch")
    try:
        done = subprocess.run([sys.executable, str(HERE / "generation_floor.py"), run["folder"], str(path),
                               "--engine", engine], timeout=150 if engine == "offline" else 300).returncode == 0
    except subprocess.TimeoutExpired:
        done = False
    return json.loads(path.read_text()) if done and path.exists() else None


def pod_environment(run: dict, folder: Path) -> dict[str, str]:
    """The submitter's environment with every path into a mounted ConfigMap pointed at the run's folder, where
    render_jobs.py wrote each mounted file; a path to a file that is not there stops the proof before the run."""
    env = dict(run["env"])
    for name, value in env.items():
        for mount in run.get("config_mounts", []):
            if value.startswith(mount.rstrip("/") + "/"):
                env[name] = str(folder / value[len(mount.rstrip("/")) + 1:])
                if not Path(env[name]).is_file():
                    sys.exit(f"gpu: {name}={value}: the pod reads it from a ConfigMap, but {env[name]} is not in the "
                             f"bundle: render the runs again (make gpu-wheels)")
    return env


def run_job(run: dict, head: RayHead, out: Path, timeout: float, keep_checkpoint: bool = True,
            floor: dict | None = None) -> dict:
    """Runs the chart's submitter with the chart's Job environment, pointed at the local head."""
    folder = Path(run["folder"])
    spec = json.loads((folder / "job.json").read_text())
    if head.jobs_api:
        env = {**os.environ, **pod_environment(run, folder), "RAY_DASHBOARD_URL": head.url}
        command = [sys.executable, str(folder / "submitter.py")] + run["submitter_command"][2:]
    else:  # the same entrypoint as the driver of a local Ray job
        env = {**os.environ, **spec["runtime_env"].get("env_vars", {}), "RAY_ADDRESS": "auto"}
        command = ["bash", "-c", spec["entrypoint"]]
    log_path = out / f"{run['run']}.log"
    say(f"{run['run']}: {run['release']} on {run['gpus']} GPU(s), {run['steps']} steps, model {run['model_size']}")
    start = time.time()
    with open(log_path, "w") as log, PeakMemory() as memory:
        try:
            code = subprocess.run(command, env=env, stdout=log, stderr=subprocess.STDOUT, timeout=timeout).returncode
        except subprocess.TimeoutExpired:
            code = 124
            head.stop_jobs()
    wall = round(time.time() - start, 1)
    text = log_path.read_text(errors="replace")
    steps = step_metrics(text)
    for line in text.splitlines():
        if "[verl-ppo submitter]" in line or "Traceback" in line or "Error" in line[:200]:
            print("   ", line[:300])
    listing = checkpoint_listing(run["checkpoint_dir"]) if Path(run["checkpoint_dir"]).is_dir() else []
    latest = Path(run["checkpoint_dir"]) / "latest_checkpointed_iteration.txt"
    result = {
        "run": run["run"], "release": run["release"], "values_file": run["values_file"], "gpus": run["gpus"],
        "route": "submitter -> Ray Jobs API" if head.jobs_api else "driver on the Ray head (no dashboard)",
        "exit_code": code, "wall_s": wall, "entrypoint": spec["entrypoint"],
        "helm_command": run["helm_command"], "checkpoint_dir": run["checkpoint_dir"],
        "checkpoint_step": latest.read_text().strip() if latest.exists() else None,
        "checkpoint_files": listing, **summarize(run, steps, memory.peak),
    }
    result["steady_seconds"] = step_spread(steps, result["steady_steps"])
    rank = lora_rank(spec["entrypoint"])
    if rank:
        result["adapter"] = adapter_check(run["checkpoint_dir"], result["checkpoint_step"], rank)
        say(f"{run['run']}: adapter {'ok' if result['adapter']['ok'] else 'MISSING OR WRONG'} "
            f"({result['adapter']['peft_files']}, rank {result['adapter']['peft_rank']})")
    built = WORK / "built" / run["model_size"] / "config.json"
    if built.exists():
        machine = WORK / "machine.json"  # lab/gpu/machine_check.py's
        measured = json.loads(machine.read_text())["matmul_bf16_tflops"] if machine.exists() else None
        result.update(mfu_figures(json.loads(built.read_text()), result["timing_s"], result["tokens_per_step"],
                                  measured))
    result.update(rollout_figures(spec["entrypoint"], result, floor))
    # The chart's replay buffer's wait for a step's batch (the rollout's wait; separate_async's is what the pool
    # leaves the training GPUs waiting).
    result["rollout_wait_s"] = result["timing_s"].get("rollout_wait")
    if not keep_checkpoint and Path(run["checkpoint_dir"]).is_dir():
        # A 0.5B checkpoint is about 12 GB; the GPU machine's disk holds a few. Listed above, then dropped.
        shutil.rmtree(run["checkpoint_dir"])
    say(f"{run['run']}: exit {code} in {wall} s; steps {result['steps_logged']}; "
        f"{result['seconds_per_step']} s/step, {result['tokens_per_second']} tokens/s; "
        f"checkpoint step {result['checkpoint_step']} ({len(listing)} files in {run['checkpoint_dir']})")
    return result


def compare(baseline: dict | None, candidate: dict | None) -> dict | None:
    """Candidate over baseline (ratios above 1: the candidate is faster or takes more memory)."""
    if not baseline or not candidate or not baseline["seconds_per_step"] or not candidate["seconds_per_step"]:
        return None

    def ratio(key: str) -> float | None:
        return round(candidate[key] / baseline[key], 3) if candidate.get(key) and baseline.get(key) else None

    base, cand = baseline.get("steady_seconds") or [], candidate.get("steady_seconds") or []
    return {
        "speedup_seconds_per_step": round(baseline["seconds_per_step"] / candidate["seconds_per_step"], 3),
        # Slowest candidate step against the baseline's fastest, and the other way round.
        "speedup_range": [round(min(base) / max(cand), 3), round(max(base) / min(cand), 3)] if base and cand else None,
        "tokens_per_second_ratio": ratio("tokens_per_second"),
        "rollout_tokens_per_second_ratio": ratio("rollout_tokens_per_second"),
        "torch_max_allocated_ratio": ratio("torch_max_allocated_gib"),
        "rollout_wait_s": [baseline.get("rollout_wait_s"), candidate.get("rollout_wait_s")],
        "nvidia_smi_peak_ratio": round(max(candidate["nvidia_smi_peak_mib"]) / max(baseline["nvidia_smi_peak_mib"]), 3)
        if candidate["nvidia_smi_peak_mib"] and baseline["nvidia_smi_peak_mib"] else None,
    }


def layout_count(mode: str, layouts: list[int]) -> int:
    """The layouts a run's result belongs among: the command's, or its mode's where it has more (a mode's layouts run
    in commands of their own, `--nodes 2` then `--nodes 1`, add up in one results.json)."""
    return max(len(layouts), len(MODE_NODES.get(mode, [1])))


def run_key(run: dict, layouts: int) -> str:
    """A run's name in results.json; among several layouts, with its own: NAME@NODESxGPUS."""
    return run["run"] if layouts == 1 else f"{run['run']}@{run['nodes']}x{run['gpus']}"


def comparisons(results: dict[str, dict]) -> dict[str, dict]:
    """The fixed pairs, and each run on several Ray nodes against the same run on one node (NAME@1xG)."""
    pairs = dict(COMPARISONS)
    for key in results:
        name, _, layout = key.partition("@")
        nodes, _, per_node = layout.partition("x")
        if layout and nodes != "1":
            one_node = f"{name}@1x{int(nodes) * int(per_node)}"
            pairs[f"{key}_vs_{one_node}"] = (one_node, key)
    return {name: figures for name, (baseline, candidate) in pairs.items()
            if (figures := compare(results.get(baseline), results.get(candidate)))}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("mode", help=f"one of {', '.join(sorted(MODES))}, or a run's name (that run alone)")
    parser.add_argument("--runs", nargs="+", help="run names instead of the mode's (e.g. bench-seed)")
    parser.add_argument("--out", type=Path, default=Path(os.environ.get("OUT") or WORK / "out"))
    parser.add_argument("--timeout", type=float, default=480, help="seconds one run may take")
    parser.add_argument("--drop-checkpoints", action="store_true",
                        help="list, then delete each run's checkpoint (the disk holds only a few 0.5B ones)")
    parser.add_argument("--floor", action="store_true", help="first measure vLLM's own time for the first run's "
                        "rollout batch (lab/gpu/generation_floor.py): the generation floor")
    parser.add_argument("--async-floor", action="store_true", help="also the first run's batch through vLLM's "
                        "asynchronous engine as veRL's rollout server runs it, by output kind")
    parser.add_argument("--nodes", type=int, nargs="+", help="Ray nodes to split the machine's GPUs over, one "
                        "cluster after the other (the mode's layouts by default; two-node: 2 then 1)")
    args = parser.parse_args()
    if args.mode not in MODES:
        # A run's name as the mode: that run alone, so that `detached.sh start vllm-generated` runs it rather than
        # ending at once on the argument, with the machine's time running.
        if args.mode not in render_jobs.RUNS:
            parser.error(f"{args.mode!r} is neither a mode ({', '.join(sorted(MODES))}) nor a run's name")
        args.runs = args.runs or [args.mode]
    gpus = gpu_count()
    if gpus == 0:
        sys.exit("gpu: no NVIDIA GPU here (nvidia-smi lists none); the GPU proof runs only on a GPU machine")
    layouts = args.nodes or MODE_NODES.get(args.mode, [1])
    if any(gpus % nodes for nodes in layouts):
        sys.exit(f"gpu: --nodes {layouts}: {gpus} GPUs here do not split evenly over that many Ray nodes")
    args.out.mkdir(parents=True, exist_ok=True)
    names = args.runs or MODES[args.mode]
    several = layout_count(args.mode, layouts)
    # Each layout's runs that have one there (a run with the rollout pool: one node of an even GPU count).
    plan = [(nodes, load_runs([name for name in names if name not in render_jobs.RUNS or
                               render_jobs.training_layout(render_jobs.RUNS[name], gpus // nodes, nodes)],
                              gpus // nodes, nodes)) for nodes in layouts]
    plan = [(nodes, runs) for nodes, runs in plan if runs]
    if not plan:
        sys.exit(f"gpu: {names} have no layout on {gpus} GPU(s) over {layouts} Ray node(s) (the rollout pool's run "
                 f"needs one node of 2 GPUs or more)")
    wanted = max(sum(node["gpus"] for node in run["ray_nodes"]) for _, runs in plan for run in runs)
    if wanted > gpus:
        sys.exit(f"gpu: the rendered Ray nodes ask {wanted} GPUs, {gpus} here: render the runs for this machine")
    results_path = args.out / "results.json"
    report = json.loads(results_path.read_text()) if results_path.exists() else {"runs": {}}
    report.update(date_utc=time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), gpus=gpus, gpu=subprocess.run(
        ["nvidia-smi", "--query-gpu=name,memory.total,driver_version", "--format=csv,noheader"],
        capture_output=True, text=True).stdout.strip().splitlines())
    report["prepare"] = prepare_inputs(plan[0][1])
    say(f"inputs ready: {report['prepare']}")
    if args.floor:  # one for each model of the runs, each for the first run of that model's batch
        firsts: dict[str, dict] = {}
        for run in plan[0][1]:
            firsts.setdefault(run["model_size"], run)
        report["generation_floors"] = {size: generation_floor(run, args.out) for size, run in firsts.items()}
    if args.async_floor:
        report["generation_floor_async"] = generation_floor(plan[0][1][0], args.out, "async")
    floors = {floor["model_path"]: floor for floor in (report.get("generation_floors") or {}).values() if floor}
    failed = False
    for _, layout_runs in plan:
        # Runs one after another with the same rendered Ray nodes share a Ray cluster; the next nodes, a new one.
        clusters = [list(runs) for _, runs in itertools.groupby(layout_runs, key=lambda run: run["ray_nodes"])]
        for runs in clusters:
            with RayHead(runs[0]["ray_nodes"]) as head:
                for run in runs:
                    # Layouts share release names and so checkpoint directories: resume_mode=auto would resume one
                    # layout's run from another's checkpoint (in this command or a later one), so where the mode or
                    # the command has several layouts each is listed, then dropped.
                    keep = not args.drop_checkpoints and several == 1
                    result = run_job(run, head, args.out, args.timeout, keep_checkpoint=keep,
                                     floor=floors.get(run["model_path"]))
                    report["runs"][run_key(run, several)] = result
                    report["comparison"] = comparisons(report["runs"])
                    results_path.write_text(json.dumps(report, indent=2) + "\n")
                    # The bench's runs save no checkpoint (trainer.save_freq=-1): none is owed.
                    saves = render_jobs.overrides(result["entrypoint"]).get("trainer.save_freq") != "-1"
                    failed |= result["exit_code"] != 0 or (saves and result["checkpoint_step"] != str(run["steps"]))
                    # A LoRA run's checkpoint without its adapter.
                    failed |= not result.get("adapter", {"ok": True})["ok"]
    print(json.dumps({name: {k: r.get(k) for k in ("exit_code", "wall_s", "seconds_per_step", "tokens_per_second",
                                                   "rollout_tokens_per_second", "rollout_over_floor", "rollout_wait_s",
                                                   "timing_s",
                                                   "phase_mfu", "torch_max_allocated_gib",
                                                   "nvidia_smi_peak_mib", "checkpoint_step")}
                      for name, r in report["runs"].items()}
                     | {key: report.get(key) for key in ("generation_floors", "generation_floor_async", "comparison")},
                     indent=1))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
