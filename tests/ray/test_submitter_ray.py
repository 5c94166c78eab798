"""Tier 4: the submitter against a real Ray head (CPU, logical GPUs) with a stand-in entrypoint.
The outcome is the Ray job's status; a restarted submitter re-attaches; one submission per attempt;
a changed run supersedes the old one; the run's inputs are checked before anything is submitted.

A run is named as the chart names it: prefix <family>-<hash> (the Job's name), family <release>-ppo-job."""

from __future__ import annotations

import json
import shlex
import signal
import subprocess
import sys
import time
import urllib.parse
import urllib.request
import zipfile

import pytest

from support.late_relay import late_relay
from support.rayhead import free_port, join_worker, module_head, ray_head
from support.submitter_run import (GPUS, PREPARE, SUBMITTER, finish, jobs, start_submitter, stop, submitter_env,
                                   wait_for_status, write_spec)


@pytest.fixture(scope="module")
def dashboard(tmp_path_factory):
    with module_head(tmp_path_factory.mktemp("ray"), gpus=GPUS) as url:
        yield url


def test_success_exits_zero_with_the_logs(dashboard, tmp_path):
    code, output = finish(start_submitter(dashboard, tmp_path, "ok-ppo-job-0001"))
    assert code == 0, output
    assert "stand-in driver: done, exiting 0" in output and "status=SUCCEEDED" in output
    submitted = jobs(dashboard, "ok-ppo-job-0001")
    assert [j["submission_id"] for j in submitted] == ["ok-ppo-job-0001-a1"]
    assert submitted[0]["metadata"] == {"release": "test"}  # the spec's metadata reaches Ray


def test_failure_exits_non_zero_with_the_driver_exit_code(dashboard, tmp_path):
    code, output = finish(start_submitter(dashboard, tmp_path, "fail-ppo-job-0001", code=3, attempts=1))
    assert code != 0, output
    assert "status=FAILED" in output and "driver_exit_code=3" in output


def test_restarted_submitter_reattaches_without_a_second_submission(dashboard, tmp_path):
    prefix = "restart-ppo-job-0001"
    first = start_submitter(dashboard, tmp_path, prefix, seconds=8)
    wait_for_status(dashboard, prefix, "RUNNING")
    first.send_signal(signal.SIGKILL)
    first.wait(timeout=10)
    code, output = finish(start_submitter(dashboard, tmp_path, prefix, seconds=8))
    assert code == 0, output
    assert f"re-attaching to {prefix}-a1" in output
    assert [j["submission_id"] for j in jobs(dashboard, prefix)] == [f"{prefix}-a1"]


def test_sigterm_without_an_api_token_leaves_the_run_to_the_next_pod(dashboard, tmp_path):
    """An evicted pod (no way to learn that its Job was deleted) must not end a GPU run."""
    prefix = "evict-ppo-job-0001"
    first = start_submitter(dashboard, tmp_path, prefix, seconds=6, kube_api="", kube_token_file=str(tmp_path / "none"))
    wait_for_status(dashboard, prefix, "RUNNING")
    first.send_signal(signal.SIGTERM)
    code, output = finish(first)
    assert code == 143 and "keeps running" in output, output
    assert jobs(dashboard, prefix)[0]["status"] == "RUNNING"
    code, output = finish(start_submitter(dashboard, tmp_path, prefix, seconds=6))
    assert code == 0 and f"re-attaching to {prefix}-a1" in output, output


def test_stopped_job_is_a_failure(dashboard, tmp_path):
    prefix = "stop-ppo-job-0001"
    process = start_submitter(dashboard, tmp_path, prefix, seconds=30, attempts=1)
    wait_for_status(dashboard, prefix, "RUNNING")
    request = urllib.request.Request(dashboard + f"/api/jobs/{prefix}-a1/stop", method="POST")
    urllib.request.urlopen(request, timeout=10).read()
    code, output = finish(process)
    assert code != 0 and "status=STOPPED" in output, output


def test_too_few_gpus_times_out_with_what_it_saw(dashboard, tmp_path):
    started = time.monotonic()
    code, output = finish(start_submitter(dashboard, tmp_path, "short-ppo-job-0001", expected_gpus=8, timeout=3))
    assert code == 3, output
    assert f"expected 8 GPUs, saw {GPUS} GPUs" in output
    assert time.monotonic() - started < 30
    assert jobs(dashboard, "short-ppo-job-0001") == []


def test_retry_after_failure_starts_a_new_attempt(dashboard, tmp_path):
    prefix = "retry-ppo-job-0001"
    code, _ = finish(start_submitter(dashboard, tmp_path, prefix, code=1, attempts=2))
    assert code != 0
    code, output = finish(start_submitter(dashboard, tmp_path, prefix, code=0, attempts=2))
    assert code == 0, output
    assert "starting attempt 2" in output
    assert sorted(j["submission_id"] for j in jobs(dashboard, prefix)) == [f"{prefix}-a1", f"{prefix}-a2"]
    code, output = finish(start_submitter(dashboard, tmp_path, prefix, code=0, attempts=2))
    assert code == 0 and f"re-attaching to {prefix}-a2 (SUCCEEDED)" in output


def test_a_changed_run_supersedes_the_old_one(dashboard, tmp_path):
    """helm upgrade with a new spec: the new Job's submitter stops the release's old run, then submits."""
    old = start_submitter(dashboard, tmp_path, "up-ppo-job-aaaa", seconds=60, attempts=1)
    wait_for_status(dashboard, "up-ppo-job-aaaa", "RUNNING")
    code, output = finish(start_submitter(dashboard, tmp_path, "up-ppo-job-bbbb", seconds=1))
    assert code == 0, output
    assert "stopped up-ppo-job-aaaa-a1 (superseded by up-ppo-job-bbbb)" in output
    assert finish(old)[0] != 0
    [stopped], [new] = jobs(dashboard, "up-ppo-job-aaaa"), jobs(dashboard, "up-ppo-job-bbbb")
    assert stopped["status"] == "STOPPED"
    # The old run had ended, not only been asked to stop, when the new one was submitted.
    assert stopped["end_time"] <= new["start_time"], (stopped, new)


def test_missing_inputs_fail_before_anything_is_submitted(dashboard, tmp_path):
    missing = tmp_path / "data" / "gsm8k" / "train.parquet"
    code, output = finish(start_submitter(dashboard, tmp_path, "noinput-ppo-job-0001",
                                          inputs=json.dumps([str(missing)]), wait_for_inputs="false"))
    assert code == 4 and str(missing) in output and "ppo-job.prepare" in output, output
    assert jobs(dashboard, "noinput-ppo-job-0001") == []


def test_the_run_waits_for_the_preparation_jobs_output(dashboard, tmp_path):
    """The preparation program writes the data while the submitter waits; then the run is submitted."""
    prefix = "prep-ppo-job-0001"
    offline = tmp_path / "offline"
    offline.mkdir()
    (offline / "train.jsonl").write_text(json.dumps({"question": "1+1?", "answer": "2\n#### 2"}) + "\n")
    (offline / "test.jsonl").write_text(json.dumps({"question": "2+2?", "answer": "4\n#### 4"}) + "\n")
    train, val = tmp_path / "data" / "train.parquet", tmp_path / "data" / "test.parquet"
    process = start_submitter(dashboard, tmp_path, prefix, inputs=json.dumps([str(train), str(val)]),
                              wait_for_inputs="true", inputs_timeout_seconds="60")
    time.sleep(2)
    assert process.poll() is None and jobs(dashboard, prefix) == []
    prepared = subprocess.run([sys.executable, str(PREPARE), "--source", "local", "--dataset-local-path", str(offline),
                               "--train-file", str(train), "--val-file", str(val)], capture_output=True, text=True)
    assert prepared.returncode == 0, prepared.stderr
    code, output = finish(process)
    assert code == 0, output
    assert output.index("waiting for the preparation Job") < output.index("inputs present") < output.index("submitted")


def test_inputs_that_never_come_time_out_naming_them(dashboard, tmp_path):
    missing = tmp_path / "model" / "config.json"
    code, output = finish(start_submitter(dashboard, tmp_path, "late-ppo-job-0001", inputs=json.dumps([str(missing)]),
                                          wait_for_inputs="true", inputs_timeout_seconds="2"))
    assert code == 4 and f"to write: {missing}" in output, output


def test_working_dir_package_on_the_shared_volume_reaches_the_driver(dashboard, tmp_path):
    """runtimeEnv.workingDir as file://<zip on the shared volume>: every node fetches it, no upload."""
    package = tmp_path / "code.zip"
    with zipfile.ZipFile(package, "w") as archive:
        archive.writestr("user_code.py", "MESSAGE = 'from the working_dir package'\n")
    driver = tmp_path / "driver.py"
    driver.write_text("import os, user_code\nprint(user_code.MESSAGE, os.environ['TORCH_NCCL_AVOID_RECORD_STREAMS'])\n")
    runtime_env = {"working_dir": f"file://{package}", "env_vars": {"TORCH_NCCL_AVOID_RECORD_STREAMS": "1"}}
    code, output = finish(start_submitter(dashboard, tmp_path, "wd-ppo-job-0001", runtime_env=runtime_env,
                                          driver=driver))
    assert code == 0, output
    assert "from the working_dir package 1" in output


def test_check_mode_waits_for_gpus_that_come_later_and_submits_nothing(tmp_path, tmp_path_factory):
    """The chart's helm test pod runs the submitter with --check: on a head without GPUs it waits, and
    returns once a GPU worker has joined."""
    temp_dir, gcs_port = tmp_path_factory.mktemp("ray-check"), free_port()
    with ray_head(temp_dir, gpus=0, gcs_port=gcs_port) as head:
        spec = write_spec(tmp_path, "check")
        env = submitter_env(head, spec, "check-ppo-job-0001", wait_timeout_seconds="120")
        del env["VERL_PPO_SUBMISSION_PREFIX"]  # the test pod is no Job's pod
        check = subprocess.Popen([sys.executable, str(SUBMITTER), "--check"], env=env, stdout=subprocess.PIPE,
                                 stderr=subprocess.STDOUT, text=True)
        try:
            time.sleep(3)
            assert check.poll() is None, "--check returned before the cluster had its GPUs"
            join_worker(temp_dir, gcs_port, GPUS)
            code, output = finish(check)
        finally:
            stop(check)
        assert code == 0, output
        assert f"cluster ready: {GPUS} GPUs" in output
        assert jobs(head, "check-ppo-job-0001") == []


def test_stop_mode_stops_every_active_job_of_the_release(dashboard, tmp_path):
    """The chart's pre-delete hook: every run of this release, no other release's jobs."""
    running = start_submitter(dashboard, tmp_path, "gone-ppo-job-0001", seconds=60, attempts=1)
    # Another release's run, long enough to be still running when the hook is done with this release.
    other = start_submitter(dashboard, tmp_path, "gone2-ppo-job-0001", seconds=120, attempts=1)
    try:
        wait_for_status(dashboard, "gone-ppo-job-0001", "RUNNING")
        wait_for_status(dashboard, "gone2-ppo-job-0001", "RUNNING")
        env = submitter_env(dashboard, write_spec(tmp_path, "stop"), "gone-ppo-job-ffff")
        del env["VERL_PPO_SUBMISSION_PREFIX"]
        result = subprocess.run([sys.executable, str(SUBMITTER), "--stop"], env=env, capture_output=True, text=True,
                                timeout=60)
        assert result.returncode == 0 and "stopped gone-ppo-job-0001-a1" in result.stdout, result.stdout + result.stderr
        assert "gone2" not in result.stdout
        code, output = finish(running)
        assert code != 0 and "status=STOPPED" in output
        # By now a stop request for it would have ended it too.
        assert [j["status"] for j in jobs(dashboard, "gone2-ppo-job-0001")] == ["RUNNING"], result.stdout
    finally:
        urllib.request.urlopen(urllib.request.Request(dashboard + "/api/jobs/gone2-ppo-job-0001-a1/stop",
                                                      method="POST"), timeout=10).read()
        stop(other)
        stop(running)


def test_stop_mode_keeps_trying_a_head_that_refuses_its_first_connections(dashboard, tmp_path):
    """The hook's pod is new: a NetworkPolicy enforcer refuses its connections until it admits the pod's
    address (kube-router: about 2 s). The hook tries again and stops the run once it is let in."""
    running = start_submitter(dashboard, tmp_path, "late-ppo-job-0001", seconds=60, attempts=1)
    try:
        wait_for_status(dashboard, "late-ppo-job-0001", "RUNNING")
        port = free_port()
        env = submitter_env(f"http://127.0.0.1:{port}", write_spec(tmp_path, "stop"), "late-ppo-job-ffff")
        with late_relay(port, ("127.0.0.1", urllib.parse.urlsplit(dashboard).port), delay=3):
            result = subprocess.run([sys.executable, str(SUBMITTER), "--stop"], env=env, capture_output=True,
                                    text=True, timeout=60)
        assert result.returncode == 0 and "Connection refused" in result.stdout, result.stdout + result.stderr
        assert "stopped late-ppo-job-0001-a1" in result.stdout, result.stdout + result.stderr
        code, output = finish(running)
        assert code != 0 and "status=STOPPED" in output
    finally:
        stop(running)


def test_stop_mode_never_blocks_uninstall_when_the_head_is_gone(tmp_path):
    from support.rayhead import free_port

    env = submitter_env(f"http://127.0.0.1:{free_port()}", write_spec(tmp_path, "stop"), "gone-ppo-job-ffff")
    result = subprocess.run([sys.executable, str(SUBMITTER), "--stop"], env=env, capture_output=True, text=True,
                            timeout=60)
    assert result.returncode == 0 and "could not stop" in result.stdout


def write_checkpoint(root, step: int, world_size: int, newest: bool = True) -> None:
    """veRL's checkpoint layout: global_step_N/actor/model_world_size_W_rank_R.pt (+ optimizer and extra
    state per rank), data.pt, and the tracker file naming the newest step."""
    actor = root / f"global_step_{step}" / "actor"
    actor.mkdir(parents=True)
    for rank in range(world_size):
        for kind in ("model", "optim", "extra_state"):
            (actor / f"{kind}_world_size_{world_size}_rank_{rank}.pt").write_bytes(b"\0")
    (actor / "huggingface").mkdir()
    (root / f"global_step_{step}" / "data.pt").write_bytes(b"\0")
    if newest:
        (root / "latest_checkpointed_iteration.txt").write_text(str(step))


def test_a_checkpoint_of_another_gpu_count_fails_before_submitting(dashboard, tmp_path):
    """helm upgrade changed the GPUs (4 now), the newest checkpoint was written by 2: veRL would fail
    loading its shards after the cluster came up. The submitter says so first and submits nothing."""
    checkpoints = tmp_path / "checkpoints" / "verl-ppo" / "gsm8k"
    write_checkpoint(checkpoints, 10, world_size=4, newest=False)  # an older step of another layout: not loaded
    write_checkpoint(checkpoints, 20, world_size=2)
    prefix = "resize-ppo-job-0001"
    code, output = finish(start_submitter(dashboard, tmp_path, prefix, resume_check_dir=str(checkpoints)))
    assert code == 5, output
    assert f"{checkpoints}/global_step_20/actor was written by 2 GPUs, this release has {GPUS}" in output
    assert "ppo-job.trainer.experimentName=<new name>" in output and "go back to 2 GPUs" in output
    assert jobs(dashboard, prefix) == []


def test_a_checkpoint_of_the_same_gpu_count_resumes(dashboard, tmp_path):
    checkpoints = tmp_path / "checkpoints"
    write_checkpoint(checkpoints, 5, world_size=GPUS)
    prefix = "resume-ppo-job-0001"
    code, output = finish(start_submitter(dashboard, tmp_path, prefix, resume_check_dir=str(checkpoints)))
    assert code == 0, output
    assert f"written by {GPUS} GPUs, as many as this release has" in output
    assert [j["submission_id"] for j in jobs(dashboard, prefix)] == [f"{prefix}-a1"]


def test_no_checkpoint_yet_starts_from_scratch(dashboard, tmp_path):
    prefix = "fresh-ppo-job-0001"
    code, output = finish(start_submitter(dashboard, tmp_path, prefix, resume_check_dir=str(tmp_path / "none")))
    assert code == 0 and "submitted" in output and "resuming" not in output, output


PREFLIGHT = SUBMITTER.with_name("preflight.py")


def preflight_settings(mount, inputs: list[str], **nodes) -> dict[str, str]:
    """The preflight as the chart renders it, for this one-node head with all GPUS on it (or the `nodes` given)."""
    expected = {"mountPath": str(mount), "inputs": inputs, "gpusPerNode": GPUS, "gpuNodes": 1, "ncclEnv": {}, **nodes}
    return {"preflight": str(PREFLIGHT), "preflight_expected": json.dumps(expected)}


def test_a_passing_preflight_prints_its_table_and_the_run_follows(dashboard, tmp_path):
    data = tmp_path / "train.parquet"
    data.write_text("rows")
    prefix = "checked-ppo-job-0001"
    code, output = finish(start_submitter(dashboard, tmp_path, prefix, **preflight_settings(tmp_path, [str(data)])))
    assert code == 0, output
    assert "preflight, one row per Ray node:" in output and "preflight passed on 1 nodes" in output, output
    assert "stand-in driver: done, exiting 0" in output
    # Issue 33: Ray's log of the preflight shows its entrypoint on one line (the program travels as a py_modules
    # package), then its table; not the program's 140 lines of source.
    lines = output.splitlines()
    shown = next(i for i, line in enumerate(lines) if line.startswith("Running entrypoint") and "-preflight-" in line)
    expected = preflight_settings(tmp_path, [str(data)])["preflight_expected"]
    assert lines[shown].endswith("python3 -m verl_ppo_preflight " + shlex.quote(expected)), lines[shown]
    assert lines[shown + 1] == "preflight, one row per Ray node:", output
    assert "import ray" not in output, output
    runs = [j["submission_id"] for j in jobs(dashboard, prefix) if "-preflight-" not in j["submission_id"]]
    assert runs == [f"{prefix}-a1"]


@pytest.mark.parametrize("pool_gpus, passes", [(GPUS, True), (GPUS + 2, False)], ids=["its-gpus", "other-gpus"])
def test_the_preflight_counts_a_rollout_pools_node_by_its_own_gpus(dashboard, tmp_path, pool_gpus, passes):
    """Issue 36: this head as the release's one rollout pool node, beside training nodes of another GPU count (none
    here): the preflight takes it for the pool's when its GPUs are the pool's, and names both counts when not."""
    prefix = f"pool-ppo-job-{pool_gpus}"
    settings = preflight_settings(tmp_path, [], gpusPerNode=GPUS + 4, gpuNodes=0, poolNodes=1,
                                  poolGpusPerNode=pool_gpus)
    code, output = finish(start_submitter(dashboard, tmp_path, prefix, **settings))
    if passes:
        assert code == 0 and "preflight passed on 1 nodes" in output, output
    else:
        assert code == 5 and f"expected {GPUS + 4} (training) or {GPUS + 2} (rollout pool)" in output, output


def test_a_failing_preflight_names_the_node_and_submits_nothing(dashboard, tmp_path):
    prefix = "checked-bad-ppo-job-0001"
    missing = str(tmp_path / "absent.parquet")
    code, output = finish(start_submitter(dashboard, tmp_path, prefix, **preflight_settings(tmp_path, [missing])))
    assert code == 5, output
    assert f"missing {missing}" in output and "preflight FAILED on:" in output, output
    assert [j for j in jobs(dashboard, prefix) if "-preflight-" not in j["submission_id"]] == []
