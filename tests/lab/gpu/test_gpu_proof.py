"""The GPU proof's parts that need no GPU (the GPU runs themselves are docs/gpu-proof.md's, never CI's):
the early exit where no GPU is, the rendering of the runs with the real Helm (one node and two), the
step-line parser, the checksummed parts the vLLM wheels travel in, and the import graph that chose them."""

import dataclasses
import json
import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from support import tools
from support.rayhead import free_port, join_worker, ray_env, ray_head

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT / "lab" / "gpu"))

import import_graph  # noqa: E402
import proof  # noqa: E402
import render_jobs  # noqa: E402

# What the proof may change in the command the chart renders for a cluster (the issue's "paths, model,
# step count", plus the GPUs of one machine and the rollout engine that fits its carry limit). Packed rows
# stay as the chart renders them: the shim serves flash-attn's kernels from PyTorch's (lab/gpu/shim).
ADJUSTED = {"data.train_files", "data.val_files", "actor_rollout_ref.model.path", "critic.model.path",
            "trainer.default_local_dir", "trainer.n_gpus_per_node", "trainer.nnodes",
            "actor_rollout_ref.rollout.name", "trainer.total_training_steps",
            # the rollout servers' metrics: no Prometheus sidecar on the GPU machine
            "actor_rollout_ref.rollout.prometheus.enable", "actor_rollout_ref.rollout.disable_log_stats",
            "actor_rollout_ref.rollout.prometheus.port", "actor_rollout_ref.rollout.prometheus.file"}


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


def test_proof_takes_a_run_name_as_its_mode_and_refuses_anything_else():
    """`detached.sh start vllm-generated` once ended at once on argparse's refusal while the GPU machine's time
    ran; a run's name now runs that run alone (here: it gets past the arguments to the GPU check)."""
    if proof.gpu_count():
        pytest.skip("this machine has a GPU")
    script = str(ROOT / "lab/gpu/proof.py")
    as_run = subprocess.run([sys.executable, script, "vllm-generated"], capture_output=True, text=True, timeout=120)
    assert as_run.returncode == 1 and "no NVIDIA GPU here" in as_run.stderr, as_run.stderr
    unknown = subprocess.run([sys.executable, script, "vllm-nonsense"], capture_output=True, text=True, timeout=120)
    assert unknown.returncode == 2 and "neither a mode" in unknown.stderr and "vllm-kernels" in unknown.stderr


def helm_template(values_file: str, *settings: str) -> list[dict]:
    command = [str(tools.helm_binaries()["helm4"]), "template", "verl-ppo", str(ROOT / "charts/verl-ppo"),
               "-f", str(ROOT / values_file)]
    for setting in settings:
        command += ["--set-string" if setting.startswith("ppo-job.verlVersion=") else "--set", setting]
        if setting.startswith("ppo-job.verlVersion="):  # on an image that runs it (the rulebook refuses another)
            image = tools.image_values(setting.split("=", 1)[1])
            command += ["--set", f"global.image.repository={image['repository']}",
                        "--set", f"global.image.tag={image['tag']}"]
    rendered = subprocess.run(command, check=True, capture_output=True, text=True).stdout
    return [o for o in yaml.safe_load_all(rendered) if o]


def cluster_overrides(objects: list[dict]) -> dict[str, str]:
    config_map = next(o for o in objects if o["kind"] == "ConfigMap" and "job.json" in o["data"])
    return overrides(json.loads(config_map["data"]["job.json"])["entrypoint"])


def rendered(tmp_path, name: str, gpus: int, nodes: int = 1) -> tuple[dict, dict[str, str]]:
    folder = tmp_path / render_jobs.run_folder(name, gpus, nodes)
    render_jobs.render(ROOT, name, render_jobs.RUNS[name], gpus, folder, nodes)
    run = json.loads((folder / "run.json").read_text())
    for program in ("submitter.py", "logtail.py", "preflight.py"):
        assert (folder / program).read_text() == (ROOT / "charts/verl-ppo/charts/ppo-job/files" / program).read_text()
    return run, overrides(json.loads((folder / "job.json").read_text())["entrypoint"])


@pytest.mark.parametrize("name", ["smoke", "vllm-smoke", "vllm-seed", "vllm-generated", "vllm-grpo-0.5b"])
def test_every_file_the_submitters_pod_mounts_is_in_the_bundle(tmp_path, monkeypatch, name):
    """Issue 27: the bundle lacked preflight.py, which the submitter's pod gets from its ConfigMap, and the GPU
    proof never started. Every file of every ConfigMap mounted into the submitter's container, as Helm renders
    the run, is in the run's folder, and every path into such a mount in its environment points there."""
    monkeypatch.setenv("HELM", str(tools.helm_binaries()["helm4"]))
    run = render_jobs.RUNS[name]
    folder = tmp_path / name
    render_jobs.render(ROOT, name, run, 1, folder)
    objects = [o for o in yaml.safe_load_all(subprocess.run(render_jobs.helm_command(ROOT, run, 1), check=True,
                                                            capture_output=True, text=True).stdout) if o]
    job = render_jobs.submitter_job(objects)
    config_maps = {o["metadata"]["name"]: o["data"] for o in objects if o["kind"] == "ConfigMap"}
    pod = job["spec"]["template"]["spec"]
    volumes = {v["name"]: v["configMap"]["name"] for v in pod["volumes"] if "configMap" in v}
    container = pod["containers"][0]
    mounted = {m["mountPath"]: config_maps[volumes[m["name"]]] for m in container["volumeMounts"]
               if m["name"] in volumes}
    assert mounted and "preflight.py" in mounted["/etc/verl-ppo"]  # the file the proof once lacked is mounted
    for files in mounted.values():
        for file_name, text in files.items():
            assert (folder / file_name).read_text() == text, file_name
    env = proof.pod_environment(json.loads((folder / "run.json").read_text()), folder)
    into_mounts = [name for name, value in container_env(container).items()
                   if any(value.startswith(mount + "/") for mount in mounted)]
    assert "VERL_PPO_PREFLIGHT" in into_mounts and "VERL_PPO_JOB_SPEC" in into_mounts
    for variable in into_mounts:
        assert Path(env[variable]).is_file() and Path(env[variable]).parent == folder, (variable, env[variable])


def test_the_proof_reads_the_bundle_where_it_is_rendered(monkeypatch):
    """After the lab moved under lab/, the proof looked for lab/.gpu/ while the runs were rendered into .gpu/."""
    monkeypatch.delenv("GPU_BUNDLE", raising=False)
    import importlib
    assert importlib.reload(proof).BUNDLE == ROOT / ".gpu"
    assert render_jobs.ROOT / ".gpu" == ROOT / ".gpu"


def container_env(container: dict) -> dict[str, str]:
    return {item["name"]: item["value"] for item in container.get("env", []) if "value" in item}


def test_a_bundle_without_a_mounted_file_stops_the_proof_before_the_run(tmp_path, monkeypatch):
    monkeypatch.setenv("HELM", str(tools.helm_binaries()["helm4"]))
    folder = tmp_path / "vllm-smoke"
    render_jobs.render(ROOT, "vllm-smoke", render_jobs.RUNS["vllm-smoke"], 1, folder)
    (folder / "preflight.py").unlink()
    with pytest.raises(SystemExit, match="VERL_PPO_PREFLIGHT=/etc/verl-ppo/preflight.py"):
        proof.pod_environment(json.loads((folder / "run.json").read_text()), folder)


@pytest.mark.parametrize("name, version, adjusted", [
    ("smoke", "0.3.0.post1", ADJUSTED),
    # The vLLM profile keeps the chart's rollout engine: only paths, model, GPUs and steps may differ.
    ("vllm-smoke", "0.9.1", ADJUSTED - {"actor_rollout_ref.rollout.name"}),
])
def test_rendered_runs_change_only_paths_model_gpus_and_steps(tmp_path, monkeypatch, name, version, adjusted):
    monkeypatch.setenv("HELM", str(tools.helm_binaries()["helm4"]))
    run, proofed = rendered(tmp_path, name, 2)
    # veRL 0.3 has no rollout-server metrics nor the chart's agent loop manager: a cluster running it turns them off
    # (the generated values ask for the final output only) as the proof does.
    metrics = ["global.rolloutMetrics.enabled=false", "observability.dashboards.enabled=false",
               "ppo-job.rollout.finalOutputOnly=false"] if version != "0.9.1" else []
    cluster = cluster_overrides(helm_template("values/h200-141g-x8.yaml", f"ppo-job.verlVersion={version}", *metrics))

    changed = {key for key in cluster.keys() | proofed.keys() if cluster.get(key) != proofed.get(key)}
    assert changed <= adjusted
    assert run["profile"] == render_jobs.RUNS[name].profile
    assert proofed["trainer.total_training_steps"] == "3" and proofed["trainer.n_gpus_per_node"] == "2"
    assert proofed["trainer.default_local_dir"] == run["checkpoint_dir"] == \
        f"{render_jobs.MOUNT_PATH}/checkpoints/verl-ppo/gsm8k"
    # The submitter's environment is the chart's, with the downward-API fields resolved.
    assert run["env"]["VERL_PPO_SUBMISSION_PREFIX"] == run["submitter_job"]
    assert run["env"]["VERL_PPO_EXPECTED_GPUS"] == "2"


@pytest.mark.parametrize("name, version", [("two-node", "0.3.0.post1"), ("vllm-two-node", "0.9.1")])
def test_two_node_run_is_the_charts_command_for_two_nodes_of_one_gpu(tmp_path, monkeypatch, name, version):
    """Issue 14: the run for a head and a worker raylet of one GPU each on one machine is the command the chart
    renders for global.gpu.nodes=2, perNode=1 (the seed's shape with one GPU a node), and the Ray nodes the proof
    starts are the RayCluster the chart renders for it."""
    monkeypatch.setenv("HELM", str(tools.helm_binaries()["helm4"]))
    run, proofed = rendered(tmp_path, name, 1, nodes=2)
    chart = helm_template("values/seed-2gpu.yaml", "global.gpu.nodes=2", "global.gpu.perNode=1",
                          f"ppo-job.verlVersion={version}")
    cluster = cluster_overrides(chart)
    changed = {key for key in cluster.keys() | proofed.keys() if cluster.get(key) != proofed.get(key)}
    assert changed <= ADJUSTED - {"trainer.nnodes", "trainer.n_gpus_per_node"}
    assert (proofed["trainer.nnodes"], proofed["trainer.n_gpus_per_node"]) == ("2", "1")
    assert (run["nodes"], run["gpus"], run["env"]["VERL_PPO_EXPECTED_GPUS"]) == (2, 1, "2")
    ray_cluster = next(o for o in chart if o["kind"] == "RayCluster")["spec"]
    head_container = ray_cluster["headGroupSpec"]["template"]["spec"]["containers"][0]
    head_gpus = int(head_container["resources"]["limits"]["nvidia.com/gpu"])
    workers = [(w["replicas"], int(w["template"]["spec"]["containers"][0]["resources"]["limits"]["nvidia.com/gpu"]))
               for w in ray_cluster["workerGroupSpecs"]]
    assert head_gpus == run["gpus"] and workers == [(run["nodes"] - 1, run["gpus"])]
    # The proof's raylets are those groups' pods, each seeing its own GPU, as a pod would.
    assert [(node["group"], node["gpus"]) for node in run["ray_nodes"]] == \
        [("head", 1), (ray_cluster["workerGroupSpecs"][0]["groupName"], 1)]
    head = proof.RayHead(run["ray_nodes"])
    assert [head.node_env(node)["CUDA_VISIBLE_DEVICES"] for node in range(2)] == ["0", "1"]


# Ray resources a user may give each group (raycluster.*.rayStartParams), so that the test below sees them travel:
# the chart sets none of its own (docs/operations.md: veRL 0.9.1's placement groups ask only CPU and GPU).
# A start parameter of the user's beside the chart's Ray resource of the pool's side.
GROUP_RESOURCES = (("raycluster.rolloutPool.rayStartParams", {"num-cpus": "3"}),)
# The Ray resource of each side (verl-ppo.poolResources), 1 a node, as ray start takes it.
SIDES = {"training": "verl_ppo_training", "rollout": "verl_ppo_rollout"}


def group_resources(group: dict) -> dict[str, float]:
    """The Ray resources KubeRay's `ray start` gives a group's pods, read from the rendered group: its container's GPU
    limit (or rayStartParams num-gpus), and its rayStartParams num-cpus and resources (shell words)."""
    params = {key: shlex.split(value)[0] for key, value in group["rayStartParams"].items()}
    limits = group["template"]["spec"]["containers"][0]["resources"]["limits"]
    wanted = {"GPU": float(params.get("num-gpus", limits["nvidia.com/gpu"])),
              **{name: float(amount) for name, amount in json.loads(params.get("resources", "{}")).items()}}
    return wanted | ({"CPU": float(params["num-cpus"])} if "num-cpus" in params else {})


def test_the_separate_async_runs_raylets_carry_the_charts_groups_resources(tmp_path, monkeypatch):
    """Issue 36 item 4: the raylets the proof starts for vllm-separate-async are the rendered RayCluster's groups, the
    head (training) and the rollout pool, each with its group's GPUs, its own share of the machine's, and its group's
    Ray resources: started here as real Ray nodes, each node's resources as Ray reports them are the group's."""
    monkeypatch.setenv("HELM", str(tools.helm_binaries()["helm4"]))
    run_spec = render_jobs.RUNS["vllm-separate-async"]
    assert render_jobs.training_layout(run_spec, 2, 1) == (1, 1) and render_jobs.training_layout(run_spec, 1, 2) is None
    # make gpu-wheels renders every run for 1 and 2 GPUs: the one-H200 profiles only for the one GPU sized for.
    assert render_jobs.training_layout(render_jobs.RUNS["vllm-lora-7b"], 2, 1) is None
    assert "vllm-separate-async" in proof.MODES["vllm-two-node"]
    assert proof.COMPARISONS["vllm_separate_async_vs_sync_2gpu"] == ("vllm-two-node@1x2", "vllm-separate-async@1x2")
    # Run in a command of its own (`--nodes 1 --runs vllm-separate-async`), it keeps its layout's name: the pair holds.
    assert proof.run_key({"run": "vllm-separate-async", "nodes": 1, "gpus": 2},
                         proof.layout_count("vllm-two-node", [1])) == "vllm-separate-async@1x2"
    plain, _ = rendered(tmp_path / "plain", "vllm-separate-async", 2)
    assert [(node["group"], node["gpus"], node["params"]) for node in plain["ray_nodes"]] == \
        [("head", 1, {"resources": json.dumps({SIDES["training"]: 1}, separators=(",", ":"))}),
         ("rolloutpool", 1, {"resources": json.dumps({SIDES["rollout"]: 1}, separators=(",", ":"))})]
    assert plain["training"] == {"gpus_per_node": 1, "nodes": 1} and plain["env"]["VERL_PPO_EXPECTED_GPUS"] == "2"

    settings = tuple((key, json.dumps(params)) for key, params in GROUP_RESOURCES)
    variant = dataclasses.replace(run_spec, settings=run_spec.settings + settings)
    folder = tmp_path / "jobs" / render_jobs.run_folder("vllm-separate-async", 2)
    render_jobs.render(ROOT, "vllm-separate-async", variant, 2, folder)
    run = json.loads((folder / "run.json").read_text())
    command = render_jobs.helm_command(ROOT, variant, *render_jobs.training_layout(variant, 2, 1), bundle=tmp_path)
    objects = [o for o in yaml.safe_load_all(subprocess.run(command, check=True, capture_output=True,
                                                            text=True).stdout) if o]
    cluster = next(o for o in objects if o["kind"] == "RayCluster")["spec"]
    groups = [cluster["headGroupSpec"]] + [group for group in cluster["workerGroupSpecs"] for _ in
                                           range(group["replicas"])]
    wanted = [group_resources(group) for group in groups]
    assert len(wanted) == 2 and all(resources["GPU"] == 1 for resources in wanted)
    head = proof.RayHead(run["ray_nodes"])
    assert [head.node_env(node)["CUDA_VISIBLE_DEVICES"] for node in range(2)] == ["0", "1"]
    options = [head.resource_options(node) for node in range(2)]
    assert not [option for node in options for option in node if option.startswith(("--dashboard", "--tracing"))]

    gcs_port = free_port()
    with ray_head(tmp_path / "ray", 0, extra_args=options[0], gcs_port=gcs_port):
        join_worker(tmp_path / "ray", gcs_port, 0, extra_args=options[1])
        listed = subprocess.run([sys.executable, "-c", RAY_NODES.format(address=f"127.0.0.1:{gcs_port}")], check=True,
                                capture_output=True, text=True, timeout=120, env=ray_env()).stdout
        # veRL's pools as the chart's plug-ins pin them (a GPU bundle demanding 1e-4 of its side's resource, as
        # RayResourcePool does with an accelerator_type): the training pool lands on the head, the replica on the pool.
        placed = subprocess.run([sys.executable, "-c", RAY_PLACED.format(address=f"127.0.0.1:{gcs_port}",
                                                                         sides=SIDES)],
                                check=True, capture_output=True, text=True, timeout=120, env=ray_env()).stdout
        assert json.loads(placed.splitlines()[-1]) == {"training": "head", "rollout": "pool"}
        # The chart's preflight, as the submitter runs it before the run, finds the GPU nodes it expects: training's
        # and the pool's (here Ray's view of each node's GPUs; the volume and the inputs moved to tmp_path).
        expected = json.loads(run["env"]["VERL_PPO_PREFLIGHT_EXPECTED"])
        assert (expected["gpuNodes"], expected["gpusPerNode"], expected["poolNodes"], expected["poolGpusPerNode"]) == \
            (1, 1, 1, 1)
        (tmp_path / "volume").mkdir()
        expected.update(mountPath=str(tmp_path / "volume"), inputs=[])
        checked = subprocess.run([sys.executable, str(folder / "preflight.py"), json.dumps(expected)], timeout=300,
                                 capture_output=True, text=True, env=ray_env({"RAY_ADDRESS": f"127.0.0.1:{gcs_port}"}))
        assert checked.returncode == 0, checked.stdout + checked.stderr
        assert "preflight passed on 2 nodes" in checked.stdout
    nodes = json.loads(listed.splitlines()[-1])
    # The head's node first (Ray lists the head first), then the pool's; CPU only where the group names it.
    assert [{key: node.get(key) for key in resources} for node, resources in zip(nodes, wanted, strict=True)] == wanted


# For each side, the node (head or pool) where a STRICT_PACK placement group of one GPU bundle demanding 1e-4 of that
# side's resource lands, created rollout first (the order that could mix them unpinned), as one JSON line.
RAY_PLACED = ("import json, ray; from ray.util.placement_group import placement_group, placement_group_table; "
              "ray.init(address='{address}', logging_level='ERROR'); sides = {sides}; "
              "head = next(n['NodeID'] for n in ray.nodes() if n['Alive'] and "
              "n['Resources'].get('node:__internal_head__')); found = {{}}\n"
              "for side in ('rollout', 'training'):\n"
              "    pg = placement_group([{{'CPU': 0.1, 'GPU': 1, sides[side]: 1e-4}}], strategy='STRICT_PACK')\n"
              "    ray.get(pg.ready(), timeout=60)\n"
              "    node = placement_group_table(pg)['bundles_to_node_id'][0]\n"
              "    found[side] = 'head' if node == head else 'pool'\n"
              "print(json.dumps(found))")
# Each live Ray node's resources, the head's first, as one JSON line.
RAY_NODES = ("import json, ray; ray.init(address='{address}', logging_level='ERROR'); "
             "nodes = [node for node in ray.nodes() if node['Alive']]; "
             "nodes.sort(key=lambda node: not node.get('Resources', {{}}).get('node:__internal_head__')); "
             "print(json.dumps([node['Resources'] for node in nodes]))")


def test_the_grpo_run_is_the_charts_grpo_command(tmp_path, monkeypatch):
    """Issue 11: GRPO's run is the chart's critic-free command (5 responses per prompt, the KL in the loss) on
    the vllm profile, changed only where the GPU machine differs."""
    monkeypatch.setenv("HELM", str(tools.helm_binaries()["helm4"]))
    run, proofed = rendered(tmp_path, "grpo", 1)
    cluster = cluster_overrides(helm_template("values/h200-141g-x8.yaml", "ppo-job.algorithm.name=grpo",
                                              "ppo-job.verlVersion=0.9.1"))
    changed = {key for key in cluster.keys() | proofed.keys() if cluster.get(key) != proofed.get(key)}
    assert changed <= ADJUSTED
    assert (proofed["algorithm.adv_estimator"], proofed["actor_rollout_ref.rollout.n"]) == ("grpo", "5")
    assert proofed["actor_rollout_ref.actor.use_kl_loss"] == "true"
    assert proofed["actor_rollout_ref.rollout.name"] == "vllm"
    assert not [key for key in proofed if key.startswith("critic.")]
    assert run["checkpoint_dir"] == f"{render_jobs.MOUNT_PATH}/checkpoints/grpo/gsm8k"


def test_step_lines_give_steady_state_figures():
    log = "\n".join(
        # veRL 0.9.1 logs the validation before training as step 0, without step timings.
        ["(TaskRunnerV1 pid=7) step:0 - val-core/openai/gsm8k/acc/mean@1:np.float64(0.0)"] + [
            f"(TaskRunner pid=7) step:{n} - timing_s/gen:{gen:.3f} - perf/time_per_step:{seconds:.3f} - "
            f"perf/total_num_tokens:76000.000 - perf/throughput:1.000 - actor/perf/max_memory_allocated_gb:{n:.3f} - "
            f"critic/perf/max_memory_allocated_gb:{n / 2:.3f} - response_length/mean:200.0"
            for n, gen, seconds in ((1, 25.0, 40.0), (2, 9.0, 20.0), (3, 11.0, 22.0), (4, 30.0, 50.0))])
    steps = proof.step_metrics(log)
    assert sorted(steps) == [0, 1, 2, 3, 4]
    summary = proof.summarize({"steps": 4}, steps, [30000, 31000])
    # Steps 2 and 3 only: the first warms up, the last validates and writes the checkpoint.
    assert summary["training_steps"] == [1, 2, 3, 4] and summary["steady_steps"] == [2, 3]
    assert summary["seconds_per_step"] == 21.0 and summary["timing_s"] == {"gen": 10.0}
    assert summary["tokens_per_second"] == round(76000 / 21.0, 1)
    assert summary["torch_max_allocated_gib"] == 4.0
    entrypoint = "python3 -m verl.trainer.main_ppo 'data.train_batch_size=256' 'trainer.nnodes=1'"
    assert proof.rollout_figures(entrypoint, summary, None) == {
        "rollout_rows": 256, "rollout_timer": "gen", "rollout_tokens_per_second": round(256 * 200 / 10.0, 1),
        "rollout_over_floor": None}
    # Against vLLM's own time for the same batch (lab/gpu/generation_floor.py); another batch is no floor.
    floor = {"prompts": 256, "samples_per_prompt": 1, "floor_s": 4.0}
    assert proof.rollout_figures(entrypoint, summary, floor)["rollout_over_floor"] == 2.5
    assert proof.rollout_figures(entrypoint, summary, {**floor, "samples_per_prompt": 5})["rollout_over_floor"] is None
    # The chart's replay buffer's wait for the batch, where it ran, is the rollout's time (not gen's 2-s polls).
    waited = {**summary, "timing_s": {"gen": 10.0, "rollout_wait": 5.0}}
    assert proof.rollout_figures(entrypoint, waited, floor) == {
        "rollout_rows": 256, "rollout_timer": "rollout_wait", "rollout_tokens_per_second": round(256 * 200 / 5.0, 1),
        "rollout_over_floor": 1.25}
    # A run stopped after its first step keeps that step's figures, marked as the only one.
    early = proof.summarize({"steps": 4}, {n: steps[n] for n in (0, 1)}, [])
    assert early["steady_steps"] == [1] and early["seconds_per_step"] == 40.0
    slower = {**summary, "seconds_per_step": 42.0, "tokens_per_second": summary["tokens_per_second"] / 2}
    comparison = proof.compare(slower, summary)
    assert comparison["speedup_seconds_per_step"] == 2.0 and comparison["tokens_per_second_ratio"] == 2.0
    both = proof.comparisons({"bench-generated": summary, "bench-seed": slower,
                              "two-node@2x1": slower, "two-node@1x2": summary})
    assert both["generated_vs_seed"] == comparison
    assert both["two-node@2x1_vs_two-node@1x2"]["speedup_seconds_per_step"] == 0.5


def test_parts_travel_checked_and_reassemble(tmp_path):
    """lab/gpu/parts.sh: packed where PyPI is, kept one command at a time on the GPU machine, reassembled there."""
    bundle, work, carried = tmp_path / "bundle", tmp_path / "work", tmp_path / "carried"
    (bundle / "wheels-vllm").mkdir(parents=True)
    for name, size in (("a-1.0-py3-none-any.whl", 700_000), ("b-2.0-py3-none-any.whl", 1_900_000)):
        (bundle / "wheels-vllm" / name).write_bytes(os.urandom(size))
    env = {**os.environ, "GPU_PROFILE": "vllm", "GPU_WORK": str(work), "GPU_PART_MIB": "1"}

    def parts(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run(["bash", str(ROOT / "lab/gpu/parts.sh"), *args], env=env, capture_output=True, text=True)

    assert parts("pack", str(bundle), "vllm").returncode == 0
    made = sorted((bundle / "parts-vllm").glob("*.part-*"))
    assert len(made) == 3 and all(part.stat().st_size <= 2**20 for part in made)
    for index, part in enumerate(made):  # one command per part: only that part and the sums travel
        shutil.rmtree(carried, ignore_errors=True)
        carried.mkdir()
        shutil.copy(bundle / "parts-vllm" / "SHA256SUMS", carried)
        shutil.copy(part, carried)
        if index == 1:  # a part damaged on the way is refused and stays missing
            (carried / part.name).write_bytes(b"x" + part.read_bytes()[1:])
            refused = parts("keep", str(carried))
            assert refused.returncode != 0 and "does not match" in refused.stderr
            assert "carry the rest" in parts("assemble", str(tmp_path / "there")).stderr
            shutil.copy(part, carried)
        kept = parts("keep", str(carried))
        assert kept.returncode == 0 and f"{index + 1} of 3 parts" in kept.stdout
    assert "missing" not in kept.stdout
    assert parts("assemble", str(tmp_path / "there")).returncode == 0
    for wheel in (bundle / "wheels-vllm").iterdir():
        assert (tmp_path / "there" / "wheels-vllm" / wheel.name).read_bytes() == wheel.read_bytes()


def test_import_graph_reports_what_a_site_imports(tmp_path):
    """lab/gpu/import_graph.py over a made-up site: every kind of import, and LazyLoader's string imports."""
    site = tmp_path / "site"
    (site / "pkg").mkdir(parents=True)
    (site / "pkg" / "__init__.py").write_text(
        "from typing import TYPE_CHECKING\nimport json\nimport needed_a\nfrom . import sub\n"
        "if TYPE_CHECKING:\n    import only_typing\nelse:\n    lazy = LazyLoader('lazy', globals(), 'needed_lazy')\n"
        "if FLAG:\n    import maybe_b\n"
        "try:\n    import optional_c\n    from pkg import extra\nexcept ImportError:\n    pass\n"
        "def later():\n    import in_function_d\n")
    (site / "pkg" / "sub.py").write_text("import needed_e.part\n")
    (site / "pkg" / "extra.py").write_text("import needed_only_by_extra\n")
    graph = import_graph.ImportGraph(site, follow_lazy=False)
    graph.walk("pkg")
    found = {kind: set(names) - set(sys.stdlib_module_names) for kind, names in graph.found.items()}
    assert found["required"] == {"needed_a", "needed_e", "needed_lazy"}
    assert found["conditional"] == {"maybe_b"}
    # A local module reached only in a try block passes that on to what it imports.
    assert found["guarded"] == {"optional_c", "needed_only_by_extra"}
    assert "only_typing" not in set().union(*found.values()) and "in_function_d" not in set().union(*found.values())
    assert graph.seen["pkg.sub"] == "required" and graph.seen["pkg.extra"] == "guarded"
    lazy = import_graph.ImportGraph(site, follow_lazy=True)
    lazy.walk("pkg")
    assert "in_function_d" in lazy.found["required"]
    # On the GPU machine: each module imported on its own, every missing name listed at once.
    assert import_graph.import_each(["json", "no_such_module_here", "also.not_here"]) == {
        "no_such_module_here": ["no_such_module_here"], "also": ["also.not_here"]}


def test_the_trainer_runs_turn_the_charts_poll_and_mode_through_its_values(tmp_path, monkeypatch):
    """Issue 34: the chart renders its 50-ms replay buffer for veRL 0.9.1; the 2-s run turns it off through
    ppo-job.trainer.rolloutPollSeconds=null, the every-step run asks vLLM for every token's output (the generated
    values ask for the final output only), the colocate_async run sets ppo-job.trainer.mode beside the every-step
    output its mode needs: each differs from the generated run in those keys only (and its checkpoint directory)."""
    monkeypatch.setenv("HELM", str(tools.helm_binaries()["helm4"]))
    sampler = {"trainer.v1.sampler.custom_sampler.path", "trainer.v1.sampler.custom_sampler.name",
               "+trainer.v1.sampler.sampler_kwargs.poll_interval_s"}
    generated = rendered(tmp_path, "vllm-generated", 1)[1]
    assert generated["trainer.v1.sampler.custom_sampler.path"] == "pkg://verl_ppo_plugins"
    assert generated["trainer.v1.trainer_mode"] == "sync"
    manager = "+actor_rollout_ref.rollout.agent.agent_loop_manager_class"
    assert generated[manager] == "verl_ppo_plugins.FinalOutputAgentLoopManager"
    for name, differing in [("vllm-generated-poll2s", sampler), ("vllm-generated-every-step", {manager}),
                            ("vllm-generated-colocate-async", {"trainer.v1.trainer_mode", manager})]:
        other = rendered(tmp_path, name, 1)[1]
        changed = {key for key in generated.keys() | other.keys() if generated.get(key) != other.get(key)}
        assert changed == differing | {"trainer.default_local_dir"}, (name, changed)
    assert rendered(tmp_path, "vllm-generated-colocate-async", 1)[1]["trainer.v1.trainer_mode"] == "colocate_async"


def test_ladder_runs_are_the_generators_one_gpu_profile_and_the_seeds(tmp_path, monkeypatch):
    """Issue 34 item 3: the generated run of a ladder size is the generator's own values for one H200 GPU and the
    model, and the seed's run keeps the seed's batches with the FSDP offloads the rules choose there."""
    monkeypatch.setenv("HELM", str(tools.helm_binaries()["helm4"]))
    generated = render_jobs.RUNS["vllm-3b-generated"]
    values = yaml.safe_load(render_jobs.one_gpu_values(ROOT, generated.model, tmp_path).read_text())
    assert values["global"]["gpu"] == {"perNode": 1, "nodes": 1}
    assert values["raycluster"]["gpuShape"]["name"] == render_jobs.ONE_GPU_SHAPE
    _, generated_args = rendered(tmp_path / "jobs", "vllm-3b-generated", 1)
    _, seed_args = rendered(tmp_path / "jobs", "vllm-3b-seed", 1)
    job = values["ppo-job"]
    for args in (generated_args, seed_args):  # the chart renders an offload only where it is on
        assert args.get("actor_rollout_ref.actor.fsdp_config.optimizer_offload", "false") == \
            str(job["actor"]["optimizerOffload"]).lower()
        assert args.get("critic.model.fsdp_config.param_offload", "false") == str(job["critic"]["paramOffload"]).lower()
        assert args["actor_rollout_ref.model.path"] == render_jobs.model_path("qwen2.5-3b")
    assert seed_args["actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu"] == "4"
    assert generated_args["actor_rollout_ref.actor.use_dynamic_bsz"] == "true"


def test_the_lora_7b_run_is_the_generators_lora_sizing_for_one_h200(tmp_path, monkeypatch):
    """Issue 35 item 3, left ready for the GPU: vllm-lora-7b is the generator's GRPO values for one H200 at 7B with LoRA
    rank 32 (the chart's LoRA keys and the rollout's safetensors loading), its full fine-tune twin differs only by
    LoRA and what the sizing chose for it, and the proof names both and checks the LoRA run's adapter."""
    monkeypatch.setenv("HELM", str(tools.helm_binaries()["helm4"]))
    lora = render_jobs.RUNS["vllm-lora-7b"]
    values = yaml.safe_load(render_jobs.one_gpu_values(ROOT, lora.model, tmp_path, lora.algorithm,
                                                       lora.lora_rank).read_text())
    assert values["ppo-job"]["model"]["lora"]["rank"] == 32 and values["ppo-job"]["algorithm"]["name"] == "grpo"
    run, args = rendered(tmp_path / "jobs", "vllm-lora-7b", 1)
    assert (args["actor_rollout_ref.model.lora_rank"], args["actor_rollout_ref.rollout.load_format"]) == \
        ("32", "safetensors")
    assert args["actor_rollout_ref.rollout.n"] == "5" and args["trainer.total_training_steps"] == "3"
    assert args["actor_rollout_ref.model.path"] == render_jobs.model_path("qwen2.5-7b")
    assert args["actor_rollout_ref.rollout.gpu_memory_utilization"] == \
        str(values["ppo-job"]["rollout"]["gpuMemoryUtilization"])
    _, full = rendered(tmp_path / "jobs", "vllm-7b-grpo-full", 1)
    assert not [key for key in full if "lora" in key]
    assert proof.MODES["vllm-lora-7b"] == ["vllm-lora-7b"] and proof.MODES["vllm-7b-full"] == ["vllm-7b-grpo-full"]
    spec = json.loads((tmp_path / "jobs" / render_jobs.run_folder("vllm-lora-7b", 1) / "job.json").read_text())
    assert proof.lora_rank(spec["entrypoint"]) == 32 and run["steps"] == 3


def test_a_lora_checkpoint_without_its_adapter_fails_the_check(tmp_path):
    """The proof's adapter check on a checkpoint the run did not write: no lora_train_meta.json, no PEFT files."""
    (tmp_path / "global_step_3" / "actor").mkdir(parents=True)
    found = proof.adapter_check(str(tmp_path), "3", 32, timeout=120)
    assert not found["ok"] and found["meta"] is None and found["peft_files"] == []
    assert not (tmp_path / "global_step_3" / "merged").exists()


def test_each_raylets_processes_count_its_own_gpus_as_the_preflight_counts_them(monkeypatch):
    """The chart's preflight counts a node's GPUs with torch in a process it starts without CUDA_VISIBLE_DEVICES (past
    Ray's narrowing per task): in a pod, the pod's GPUs. The proof's raylets share one machine, so without lab/gpu/shim
    each would count the machine's 2 and the preflight would refuse every run on two raylets (two-node@2x1, the rollout
    pool's). torch counts the devices CUDA_VISIBLE_DEVICES names, all where it names none: a stand-in counts so here."""
    sys.path.insert(0, str(ROOT / "charts/verl-ppo/charts/ppo-job/files"))
    import preflight

    monkeypatch.setattr(preflight, "TORCH_COUNT",
                        "import os; print(len(os.environ.get('CUDA_VISIBLE_DEVICES', '0,1').split(',')))")
    head = proof.RayHead([{"group": group, "gpus": 1, "params": {}} for group in ("head", "rolloutpool")])
    for node in range(2):
        for name, value in head.node_env(node).items():
            monkeypatch.setenv(name, value)
        monkeypatch.setenv("PYTHONPATH", str(ROOT / "lab/gpu/shim"))
        assert preflight._physical_gpus() == (1, "torch")
        monkeypatch.delenv("PYTHONPATH")  # without the shim: the whole machine
        assert preflight._physical_gpus() == (2, "torch")
