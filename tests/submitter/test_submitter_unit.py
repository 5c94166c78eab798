"""The submitter's decisions (settings, attempts, checkpoints, inputs, retries) on
the answers a Ray head gives, in process and in seconds, in the fast lane. The runs against a real Ray head are tier 4's
(tests/ray/test_submitter_ray.py); these reach the branches those take minutes to reach, and kill a mutant of a
decision first (`make mutate` runs them before the Ray-head tests)."""

from __future__ import annotations

import contextlib
import http.server
import io
import json
import os
import re
import shlex
import signal
import ssl
import sys
import threading
import time
import urllib.error
import zipfile
from dataclasses import dataclass
from email.message import Message
from pathlib import Path
from typing import Any, Iterator

import pytest

from support.rayhead import free_port
from support.submitter_run import SUBMITTER
from lab.localcluster.pki import write_webhook_pki

sys.path.insert(0, str(SUBMITTER.parent))
import submitter  # noqa: E402  (the chart's file, as the Job's python3 runs it: its directory on the path)

FAMILY = "rel.1-ppo-job"
PREFIX = f"{FAMILY}-0af3"


class AnsweredHead(submitter.RayJobsAPI):
    """The submitter's client with the answers a head gave (job records as GET /api/jobs/ returns them,
    GPU counts, errors) in place of the network; records the jobs it was asked to stop."""

    def __init__(self, jobs: list[dict[str, Any]] = (), gpus: list[float | Exception] = (),
                 replies: list[dict[str, Any] | Exception] = ()) -> None:
        super().__init__("http://head.invalid:8265")
        self.jobs, self.gpus, self.replies, self.stopped, self.submitted = list(jobs), list(gpus), list(replies), [], []
        self.specs: dict[str, dict[str, Any]] = {}  # what each submission sent
        self.packages: dict[str, bytes] = {}  # runtime_env packages uploaded

    def list_jobs(self) -> list[dict[str, Any]]:
        if self.jobs and isinstance(self.jobs[0], Exception):
            raise self.jobs.pop(0) if len(self.jobs) > 1 else self.jobs[0]
        return self.jobs

    def stop(self, submission_id: str) -> None:
        self.stopped.append(submission_id)

    def cluster_gpus(self) -> float:
        answer = self.gpus.pop(0) if len(self.gpus) > 1 else self.gpus[0]
        if isinstance(answer, Exception):
            raise answer
        return answer

    alive: list[str] | Exception = []  # node ids alive_nodes answers with
    heads: list[int] = [1]  # alive head nodes, one answer a call (the last one repeats)

    def alive_heads(self) -> int:
        return self.heads.pop(0) if len(self.heads) > 1 else self.heads[0]

    def alive_nodes(self) -> list[dict[str, Any]]:
        self.node_queries = getattr(self, "node_queries", 0) + 1
        if isinstance(self.alive, Exception):
            raise self.alive
        return [{"node_id": node, "state": "ALIVE"} for node in self.alive]

    def job(self, submission_id: str) -> dict[str, Any]:
        answer = self.replies.pop(0) if len(self.replies) > 1 else self.replies[0]
        if isinstance(answer, Exception):
            raise answer
        return answer

    def submit(self, submission_id: str, spec: dict[str, Any]) -> None:
        self.submitted.append(submission_id)
        self.specs[submission_id] = spec

    def ensure_package(self, name: str, content: bytes) -> str:
        self.packages[name] = content
        return f"gcs://{name}"


class ScriptedTail:
    """A log tail that the dashboard closes (complete) after `pumps` calls; records what follow asked of it."""

    def __init__(self, submission_id: str, pumps: int, gone_at: int = 0) -> None:
        self.submission_id, self.pumps, self.gone_at = submission_id, pumps, gone_at
        self.pumped, self.reopened, self.dropped, self.complete = 0, 0, 0, False

    def pump(self, seconds: float) -> None:
        self.pumped += 1
        if self.pumped == self.gone_at:
            raise submitter.TailGone()
        self.complete = self.complete or self.pumped >= self.pumps

    def reopen(self) -> None:
        self.reopened += 1
        self.complete = False

    def drop(self) -> None:
        self.dropped += 1


def settings(**changes: Any) -> submitter.Settings:
    base = dict(dashboard_url="http://head.invalid:8265", job_spec={"entrypoint": "true"}, submission_family=FAMILY,
                submission_prefix=PREFIX, submission_id="", expected_gpus=4.0, wait_timeout_seconds=0.0,
                max_attempts=3, inputs=[], wait_for_inputs=False, inputs_timeout_seconds=0.0, poll_seconds=0.01,
                dashboard_timeout_seconds=0.05)
    return submitter.Settings(**{**base, **changes})


def http_error(code: int, body: str = "") -> urllib.error.HTTPError:
    url = "http://head.invalid:8265/api/jobs/"
    return urllib.error.HTTPError(url, code, "answer", Message(), io.BytesIO(body.encode()))


def record(attempt: int | str, status: str, prefix: str = PREFIX) -> dict[str, Any]:
    return {"submission_id": f"{prefix}-a{attempt}", "status": status, "driver_exit_code": None}


# Settings from the Job's environment.

REQUIRED_ENV = {"RAY_DASHBOARD_URL": "http://head:8265/", "VERL_PPO_SUBMISSION_FAMILY": FAMILY,
                "VERL_PPO_EXPECTED_GPUS": "4"}


def environment(monkeypatch, tmp_path: Path, **extra: str) -> None:
    spec = tmp_path / "job.json"
    spec.write_text('{"entrypoint": "python3 -m verl.trainer.main_ppo"}')
    for name in [n for n in list(os.environ) if n.startswith("VERL_PPO_") or n.startswith("RAY_")]:
        monkeypatch.delenv(name)
    for name, value in {**REQUIRED_ENV, "VERL_PPO_JOB_SPEC": str(spec), **extra}.items():
        monkeypatch.setenv(name, value)


def test_settings_defaults_from_a_minimal_environment(monkeypatch, tmp_path):
    environment(monkeypatch, tmp_path)
    found = submitter.Settings.from_env()
    assert found == submitter.Settings(
        dashboard_url="http://head:8265", job_spec={"entrypoint": "python3 -m verl.trainer.main_ppo"},
        submission_family=FAMILY, submission_prefix="", submission_id="", expected_gpus=4.0,
        wait_timeout_seconds=1800.0, max_attempts=3, inputs=[], wait_for_inputs=False, inputs_timeout_seconds=7200.0,
        resume_check_dir="", poll_seconds=5.0, dashboard_timeout_seconds=300.0, preflight_program="",
        preflight_expected={})


def test_settings_read_every_variable_the_chart_sets(monkeypatch, tmp_path):
    environment(monkeypatch, tmp_path, VERL_PPO_SUBMISSION_PREFIX=PREFIX, RAY_JOB_SUBMISSION_ID="rayjob-x",
                VERL_PPO_WAIT_TIMEOUT_SECONDS="12.5", VERL_PPO_MAX_ATTEMPTS="7", VERL_PPO_INPUTS='["/data/a"]',
                VERL_PPO_WAIT_FOR_INPUTS="true", VERL_PPO_INPUTS_TIMEOUT_SECONDS="9", VERL_PPO_RESUME_CHECK_DIR="/ck",
                VERL_PPO_POLL_SECONDS="0.5", VERL_PPO_DASHBOARD_TIMEOUT_SECONDS="40", VERL_PPO_PREFLIGHT="/p.py",
                VERL_PPO_PREFLIGHT_EXPECTED='{"gpus": 2}')
    found = submitter.Settings.from_env()
    assert (found.submission_prefix, found.submission_id, found.wait_timeout_seconds, found.max_attempts) == (
        PREFIX, "rayjob-x", 12.5, 7)
    assert (found.inputs, found.wait_for_inputs, found.inputs_timeout_seconds, found.resume_check_dir) == (
        ["/data/a"], True, 9.0, "/ck")
    assert (found.poll_seconds, found.dashboard_timeout_seconds, found.preflight_program, found.preflight_expected) == (
        0.5, 40.0, "/p.py", {"gpus": 2})


@pytest.mark.parametrize("value", ["false", "True", "1", ""])
def test_waiting_for_inputs_needs_the_exact_word_true(monkeypatch, tmp_path, value):
    environment(monkeypatch, tmp_path, VERL_PPO_WAIT_FOR_INPUTS=value)
    assert submitter.Settings.from_env().wait_for_inputs is False


@pytest.mark.parametrize("submission_id, matches", [
    (f"{FAMILY}-0af3-a1", True), (f"{FAMILY}-9b-a12", True),
    (f"{FAMILY}-0af3-a1-preflight-abc123", False),  # a preflight is no run of the release
    (f"{FAMILY}-0xyz-a1", False), (f"{FAMILY}-0af3-b1", False), (f"{FAMILY}-0af3-a", False),
    (f"other-{FAMILY}-0af3-a1", False), ("rel-1-ppo-job-0af3-a1", False),  # the family's dot is literal
])
def test_family_pattern_matches_only_the_releases_runs(submission_id, matches):
    assert bool(settings().family_pattern().match(submission_id)) is matches


# The cluster's GPUs.

def test_node_records_are_found_at_any_depth_of_the_state_apis_reply():
    nodes = [{"node_id": "h", "state": "ALIVE", "resources_total": {"CPU": 4.0, "GPU": 2.0}},
             {"node_id": "w", "state": "DEAD", "resources_total": {"GPU": 8.0}, "labels": {"resources_total": "x"}}]
    reply = {"result": True, "msg": "", "data": {"result": {"total": 2, "num_after_truncation": 2, "result": nodes}}}
    assert submitter._find_node_records(reply) == nodes
    assert submitter._find_node_records([[reply], {"other": [nodes[0]]}]) == [*nodes, nodes[0]]
    assert submitter._find_node_records("resources_total") == []


def test_cluster_ready_once_the_gpus_reach_the_expected_count(capsys):
    head = AnsweredHead(gpus=[urllib.error.URLError("refused"), 2.0, 4.0])
    submitter.wait_for_cluster(head, settings(wait_timeout_seconds=5))
    assert head.gpus == [4.0]
    assert "cluster ready: 4 GPUs (need 4)" in capsys.readouterr().out


@pytest.mark.parametrize("answer, seen",
                         [(3.0, "saw 3 GPUs"), (ValueError("bad JSON"), "saw dashboard not answering (bad JSON)")])
def test_cluster_wait_times_out_with_what_it_saw(capsys, answer, seen):
    with pytest.raises(SystemExit) as exit_:
        submitter.wait_for_cluster(AnsweredHead(gpus=[answer]), settings(wait_timeout_seconds=0.05))
    assert exit_.value.code == 3
    out = capsys.readouterr().out
    assert f"timed out after 0.05s waiting for the cluster: expected 4 GPUs, {seen}" in out


# Inputs on the shared volume.

def test_inputs_present_are_named_and_missing_ones_listed(tmp_path, capsys):
    (tmp_path / "train.parquet").write_text("x")
    paths = [str(tmp_path / "train.parquet"), str(tmp_path / "test.parquet"), str(tmp_path / "model")]
    assert submitter.missing_inputs(paths) == paths[1:]
    submitter.wait_for_inputs(settings(inputs=paths[:1]))
    assert capsys.readouterr().out == f"[verl-ppo submitter] inputs present: {paths[0]}\n"
    submitter.wait_for_inputs(settings(inputs=[]))
    assert capsys.readouterr().out == ""


def test_missing_inputs_fail_at_once_without_preparation(tmp_path, capsys):
    missing = [str(tmp_path / "a"), str(tmp_path / "b")]
    with pytest.raises(SystemExit) as exit_:
        submitter.wait_for_inputs(settings(inputs=missing, inputs_timeout_seconds=60))
    assert exit_.value.code == 4
    assert f"missing on the shared volume: {missing[0]}, {missing[1]}. Copy them there, or enable ppo-job.prepare" in (
        capsys.readouterr().out)


def test_inputs_written_later_are_waited_for_and_announced_once(tmp_path, capsys):
    late = tmp_path / "late.parquet"
    writer = threading.Timer(0.3, late.write_text, ("x",))
    writer.start()
    submitter.wait_for_inputs(settings(inputs=[str(late)], wait_for_inputs=True, inputs_timeout_seconds=30))
    writer.join()
    out = capsys.readouterr().out
    assert out.count("waiting for the preparation Job to write") == 1 and "inputs present" in out


def test_inputs_that_never_come_time_out(tmp_path, capsys):
    with pytest.raises(SystemExit) as exit_:
        submitter.wait_for_inputs(settings(inputs=[str(tmp_path / "never")], wait_for_inputs=True,
                                           inputs_timeout_seconds=0.05))
    assert exit_.value.code == 4
    assert f"timed out after 0.05s waiting for the preparation Job to write: {tmp_path / 'never'}" in (
        capsys.readouterr().out)


# The checkpoint veRL resumes from.

def checkpoint(root: Path, tracker: str, step: int, shards: list[str]) -> Path:
    actor = root / f"global_step_{step}" / "actor"
    actor.mkdir(parents=True)
    for name in shards:
        (actor / name).write_bytes(b"")
    (root / submitter.CHECKPOINT_TRACKER).write_text(tracker)
    return actor


def test_world_sizes_of_the_tracked_step_only(tmp_path):
    checkpoint(tmp_path, "3", 3, ["model_world_size_8_rank_0.pt"])
    actor = checkpoint(tmp_path, "12\n", 12, ["model_world_size_4_rank_0.pt", "model_world_size_4_rank_3.pt",
                                             "optim_world_size_2_rank_0.pt", "model_world_size_16_rank_0.pt.tmp",
                                             "extra_state_world_size_4_rank_0.pt"])
    assert submitter.checkpoint_world_sizes(str(tmp_path)) == (str(actor), {4})


@pytest.mark.parametrize("tracker", [None, "step 3", "7"])  # no tracker, not a number, a step without its directory
def test_no_usable_checkpoint_means_a_start_from_scratch(tmp_path, tracker):
    if tracker is not None:
        (tmp_path / submitter.CHECKPOINT_TRACKER).write_text(tracker)
    assert submitter.checkpoint_world_sizes(str(tmp_path)) is None
    submitter.check_resumable(settings(resume_check_dir=str(tmp_path)))


def test_resume_check_off_reads_nothing(tmp_path):
    checkpoint(tmp_path, "1", 1, ["model_world_size_2_rank_0.pt"])
    submitter.check_resumable(settings(resume_check_dir=""))  # would fail with the directory set


def test_a_checkpoint_of_this_gpu_count_resumes(tmp_path, capsys):
    actor = checkpoint(tmp_path, "5", 5, [f"model_world_size_4_rank_{rank}.pt" for rank in range(4)])
    submitter.check_resumable(settings(resume_check_dir=str(tmp_path)))
    assert f"resuming from {actor}: written by 4 GPUs, as many as this release has" in capsys.readouterr().out


def test_a_checkpoint_without_shards_is_resumed_unchecked(tmp_path, capsys):
    actor = checkpoint(tmp_path, "5", 5, ["huggingface"])
    submitter.check_resumable(settings(resume_check_dir=str(tmp_path)))
    assert f"resuming from {actor}: no model_world_size_W_rank_R.pt shards there to check" in capsys.readouterr().out


@pytest.mark.parametrize("shards, written", [(["model_world_size_2_rank_0.pt"], "2"),
                                             (["model_world_size_8_rank_0.pt", "model_world_size_4_rank_0.pt"], "4/8")])
def test_a_checkpoint_of_another_gpu_count_fails_naming_both_and_the_fixes(tmp_path, capsys, shards, written):
    actor = checkpoint(tmp_path, "5", 5, shards)
    with pytest.raises(SystemExit) as exit_:
        submitter.check_resumable(settings(resume_check_dir=str(tmp_path)))
    assert exit_.value.code == 5
    out = capsys.readouterr().out
    assert f"cannot resume: the newest checkpoint {actor} was written by {written} GPUs, this release has 4 " in out
    assert "--set ppo-job.trainer.experimentName=<new name>" in out
    assert f"go back to {written} GPUs in total (global.gpu.nodes x global.gpu.perNode = {written})" in out


# Which attempt to follow or submit.

def test_a_first_run_submits_attempt_one():
    assert submitter.choose_submission(AnsweredHead([record(1, "RUNNING", f"{FAMILY}-ffff")]), settings()) == (
        submitter.Choice(f"{PREFIX}-a1", 1, True))


@pytest.mark.parametrize("status", ["PENDING", "RUNNING", "SUCCEEDED"])
def test_an_active_or_succeeded_attempt_is_reattached(capsys, status):
    head = AnsweredHead([record(1, "FAILED"), record(2, status)])
    assert submitter.choose_submission(head, settings()) == submitter.Choice(f"{PREFIX}-a2", 2, False, status)
    assert f"re-attaching to {PREFIX}-a2 ({status})" in capsys.readouterr().out


@pytest.mark.parametrize("status", ["FAILED", "STOPPED"])
def test_an_ended_attempt_is_followed_by_the_next(capsys, status):
    head = AnsweredHead([record(1, "FAILED"), record(2, status), record("2-preflight-abc123", "SUCCEEDED")])
    assert submitter.choose_submission(head, settings()) == submitter.Choice(f"{PREFIX}-a3", 3, True)
    assert f"{PREFIX}-a2 ended {status}: starting attempt 3, resuming from the last checkpoint" in \
        capsys.readouterr().out


def test_attempts_are_numbers_not_text():
    head = AnsweredHead([record(9, "FAILED"), record(10, "RUNNING")])
    assert submitter.attempts_of(head, PREFIX) == {9: head.jobs[0], 10: head.jobs[1]}
    assert submitter.choose_submission(head, settings(max_attempts=20)).submission_id == f"{PREFIX}-a10"


def test_the_last_allowed_attempt_is_reported_not_repeated(capsys):
    head = AnsweredHead([record(1, "FAILED"), record(2, "FAILED")])
    assert submitter.choose_submission(head, settings(max_attempts=2)) == submitter.Choice(f"{PREFIX}-a2", 2, False,
                                                                                           "FAILED")
    assert f"{PREFIX}-a2 ended FAILED and all 2 attempts are used" in capsys.readouterr().out


def test_attempts_lost_with_their_head_count_against_the_limit():
    assert submitter.choose_submission(AnsweredHead(), settings(), lost={1}) == \
        submitter.Choice(f"{PREFIX}-a2", 2, True)
    assert submitter.choose_submission(AnsweredHead(), settings(), lost={1, 2, 3}) == submitter.Choice(
        f"{PREFIX}-a3", 3, False, submitter.LOST)
    # A head that still knows a lost attempt tells its real status.
    assert submitter.choose_submission(AnsweredHead([record(2, "RUNNING")]), settings(), lost={2}).status == "RUNNING"


def test_kuberays_id_is_reattached_when_the_head_has_it(capsys):
    head = AnsweredHead([{"submission_id": "rayjob-zzz", "status": "FAILED"},
                         {"submission_id": "rayjob-abc", "status": "RUNNING"}])
    assert submitter.given_submission(head, "rayjob-abc") == ("rayjob-abc", False)
    assert "re-attaching to rayjob-abc (RUNNING)" in capsys.readouterr().out
    assert submitter.given_submission(head, "rayjob-abcd") == ("rayjob-abcd", True)


# Stopping runs.

def test_only_the_releases_active_runs_are_stopped_and_the_kept_run_stays(capsys):
    head = AnsweredHead([record(1, "RUNNING"), record(1, "PENDING", f"{FAMILY}-1234"),
                         record(2, "SUCCEEDED", f"{FAMILY}-1234"),
                         record(1, "RUNNING", "other-ppo-job-0af3"), record(3, "RUNNING", f"{FAMILY}-beef"),
                         {"submission_id": None, "status": "RUNNING"}])
    submitter.stop_active(head, settings().family_pattern(), "superseded", keep_prefix=f"{FAMILY}-beef")
    assert head.stopped == [f"{PREFIX}-a1", f"{FAMILY}-1234-a1"]
    assert f"stopped {PREFIX}-a1 (superseded)" in capsys.readouterr().out
    submitter.stop_active(head, settings().family_pattern(), "helm uninstall")
    assert head.stopped[2:] == [f"{PREFIX}-a1", f"{FAMILY}-1234-a1", f"{FAMILY}-beef-a3"]


@pytest.mark.parametrize("error, seconds", [
    (http_error(500), submitter.BUSY_HEAD_SECONDS), (http_error(503), submitter.BUSY_HEAD_SECONDS),
    (http_error(499), 0), (http_error(404), 0),
    (urllib.error.URLError(TimeoutError("timed out")), submitter.BUSY_HEAD_SECONDS),
    (TimeoutError("timed out"), submitter.BUSY_HEAD_SECONDS),
    (urllib.error.URLError(ConnectionRefusedError(111, "refused")), submitter.UNREACHABLE_HEAD_SECONDS),
    (ConnectionRefusedError(111, "refused"), submitter.UNREACHABLE_HEAD_SECONDS),
    (ValueError("bad JSON"), 0),
])
def test_a_failed_stop_is_tried_again_as_long_as_its_cause_is_worth(error, seconds):
    assert submitter._retry_seconds(error) == seconds
    assert submitter.BUSY_HEAD_SECONDS > submitter.UNREACHABLE_HEAD_SECONDS > 0


@contextlib.contextmanager
def within(seconds: int) -> Iterator[None]:
    """Fails the block (TimeoutError) if it runs past `seconds`: a retry loop that never gives up."""
    def expired(signum: int, frame: Any) -> None:
        raise TimeoutError(f"still running after {seconds}s")

    previous = signal.signal(signal.SIGALRM, expired)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def test_the_uninstall_hook_gives_up_at_once_on_an_answer_not_worth_a_retry(capsys):
    started = time.monotonic()
    with within(10):
        assert submitter.stop_release_jobs(AnsweredHead([http_error(404)]), settings()) == 0
    assert time.monotonic() - started < submitter.STOP_RETRY_SECONDS
    assert "could not stop the release's Ray jobs (HTTP Error 404: answer); the RayCluster's deletion ends them" in (
        capsys.readouterr().out)


def test_the_uninstall_hook_stops_the_releases_runs_and_waits_for_their_end(monkeypatch, capsys):
    """Helm deletes the RayCluster right after the hook: the hook returns once the run has ended."""
    monkeypatch.setattr(submitter, "STOP_RETRY_SECONDS", 0.01)
    head = AnsweredHead([record(1, "RUNNING"), record(1, "RUNNING", "other-ppo-job-0af3")],
                        replies=[{"status": "RUNNING"}, {"status": "RUNNING"}, {"status": "STOPPED"}])
    assert submitter.stop_release_jobs(head, settings()) == 0
    assert head.stopped == [f"{PREFIX}-a1"] and head.replies == [{"status": "STOPPED"}]  # asked until it ended
    assert f"{PREFIX}-a1 ended" in capsys.readouterr().out


def test_the_uninstall_hook_waits_for_the_end_only_so_long(monkeypatch, capsys):
    monkeypatch.setattr(submitter, "STOP_RETRY_SECONDS", 0.01)
    monkeypatch.setattr(submitter, "HOOK_END_SECONDS", 0.1)
    head = AnsweredHead([record(1, "RUNNING")], replies=[{"status": "RUNNING"}])
    with within(10):
        assert submitter.stop_release_jobs(head, settings()) == 0
    assert f"{PREFIX}-a1 still running 0.1s after the stop; the RayCluster's deletion ends them" in (
        capsys.readouterr().out)


def test_the_uninstall_hook_never_fails_on_a_head_gone_while_it_waits(capsys):
    head = AnsweredHead([record(1, "RUNNING")], replies=[urllib.error.URLError(ConnectionRefusedError(111, "refused"))])
    assert submitter.stop_release_jobs(head, settings()) == 0
    assert "could not see the stopped runs end" in capsys.readouterr().out


def test_the_uninstall_hook_tries_a_busy_head_again_until_its_bound(monkeypatch, capsys):
    monkeypatch.setattr(submitter, "STOP_RETRY_SECONDS", 0.01)
    monkeypatch.setattr(submitter, "BUSY_HEAD_SECONDS", 0.1)
    with within(10):
        assert submitter.stop_release_jobs(AnsweredHead([http_error(503)]), settings()) == 0
    output = capsys.readouterr().out
    assert "dashboard not answering (HTTP Error 503: answer); trying again" in output
    assert "could not stop the release's Ray jobs (HTTP Error 503: answer)" in output


def test_the_uninstall_hook_counts_only_a_404_as_a_run_gone(capsys):
    """Another refusal (here 403) is no verdict on the stopped run: the hook says it could not see the end."""
    head = AnsweredHead([record(1, "RUNNING")], replies=[http_error(403)])
    assert submitter.stop_release_jobs(head, settings()) == 0
    assert "could not see the stopped runs end (HTTP Error 403: answer)" in capsys.readouterr().out


def test_the_hooks_retries_and_its_wait_fit_its_jobs_deadline():
    hook = (SUBMITTER.parents[1] / "templates" / "stop-hook.yaml").read_text()
    deadline = int(re.search(r"activeDeadlineSeconds: (\d+)", hook).group(1))
    assert submitter.BUSY_HEAD_SECONDS + submitter.HOOK_END_SECONDS < deadline


# Following a run's status through a silent or new head.

def test_a_new_head_that_does_not_know_the_run_means_the_head_was_lost():
    with pytest.raises(submitter.HeadLost, match=f"the head does not know {PREFIX}-a1"):
        submitter.job_status(AnsweredHead(replies=[http_error(404)]), f"{PREFIX}-a1", settings(), [])


def test_a_silent_dashboard_is_waited_for_within_its_bound(capsys):
    silent_since: list[float] = []
    head = AnsweredHead(replies=[http_error(502), urllib.error.URLError("refused"), {"status": "RUNNING"}])
    assert submitter.job_status(head, "j", settings(dashboard_timeout_seconds=60), silent_since) is None
    assert len(silent_since) == 1
    assert submitter.job_status(head, "j", settings(dashboard_timeout_seconds=60), silent_since) is None
    assert submitter.job_status(head, "j", settings(dashboard_timeout_seconds=60), silent_since) == \
        {"status": "RUNNING"}
    assert silent_since == []
    out = capsys.readouterr().out
    assert out.count("dashboard not answering") == 1 and "waiting up to 60s for it" in out
    assert "dashboard answers again after 0s: following j" in out


def test_a_dashboard_silent_past_its_bound_means_the_head_was_lost():
    silent_since = [time.monotonic() - 1.0]
    with pytest.raises(submitter.HeadLost, match=r"did not answer for 0.5s \(bad JSON\)"):
        submitter.job_status(AnsweredHead(replies=[ValueError("bad JSON")]), "j",
                             settings(dashboard_timeout_seconds=0.5),
                             silent_since)
    silent_since = [time.monotonic()]
    assert submitter.job_status(AnsweredHead(replies=[ValueError("bad JSON")]), "j",
                                settings(dashboard_timeout_seconds=30), silent_since) is None


# SIGTERM and the pod's Job.

def test_kube_job_url_and_token(monkeypatch, tmp_path):
    monkeypatch.delenv("VERL_PPO_KUBE_API", raising=False)
    monkeypatch.setenv("KUBERNETES_SERVICE_HOST", "10.0.0.1")
    monkeypatch.setenv("KUBERNETES_SERVICE_PORT", "6443")
    monkeypatch.setenv("VERL_PPO_KUBE_TOKEN_FILE", str(tmp_path / "token"))
    kube = submitter.KubeJob("team", "rel-ppo-job-0af3")
    assert kube.url == "https://10.0.0.1:6443/apis/batch/v1/namespaces/team/jobs/rel-ppo-job-0af3"
    assert not kube.usable()
    assert kube.ended_by_user() == (False, "no Kubernetes API token mounted (ppo-job.submitter.stopOnJobDelete is off)")
    (tmp_path / "token").write_text("t")
    assert kube.usable()
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST")
    assert not submitter.KubeJob("team", "j").usable()  # no API server known: the url is not https


def test_sigterm_under_a_rayjob_or_without_a_token_leaves_the_run(monkeypatch, tmp_path, capsys):
    head = AnsweredHead([record(1, "RUNNING")])
    assert submitter.on_terminate(head, None, settings()) == 143
    assert "KubeRay's RayJob owns the run" in capsys.readouterr().out
    monkeypatch.setenv("VERL_PPO_KUBE_TOKEN_FILE", str(tmp_path / "none"))
    assert submitter.on_terminate(head, submitter.KubeJob("team", PREFIX), settings()) == 143
    assert head.stopped == []
    assert "the Ray job keeps running and the Job's next pod re-attaches" in capsys.readouterr().out


def test_a_job_without_a_prefix_or_kuberays_id_is_refused(monkeypatch, tmp_path, capsys):
    environment(monkeypatch, tmp_path)
    assert submitter.main([]) == 2
    assert "VERL_PPO_SUBMISSION_PREFIX is empty" in capsys.readouterr().out


def test_sigterm_when_the_job_was_deleted_stops_this_runs_attempts_only(capsys):
    class DeletedJob(submitter.KubeJob):
        def ended_by_user(self) -> tuple[bool, str]:
            return True, "its Job was deleted"

    head = AnsweredHead([record(1, "FAILED"), record(2, "RUNNING"), record(1, "RUNNING", f"{FAMILY}-beef"),
                         record("2-preflight-abc123", "RUNNING")])
    assert submitter.on_terminate(head, DeletedJob("team", PREFIX), settings()) == 143
    assert head.stopped == [f"{PREFIX}-a2"]
    assert "terminating: its Job was deleted; stopping the Ray job" in capsys.readouterr().out


def test_sigterm_on_a_head_that_times_out_still_exits_143(capsys):
    """A read that times out raises TimeoutError itself (an OSError, not wrapped in URLError)."""
    class DeletedJob(submitter.KubeJob):
        def ended_by_user(self) -> tuple[bool, str]:
            return True, "its Job was deleted"

    head = AnsweredHead([TimeoutError("timed out")])
    assert submitter.on_terminate(head, DeletedJob("team", PREFIX), settings()) == 143
    assert "could not stop the Ray job (timed out)" in capsys.readouterr().out


# Following a run to its end.

def test_the_log_is_drained_after_the_job_ended():
    """Ray reports the end before the tail has sent the last lines: follow goes on pumping until the tail closes."""
    tail = ScriptedTail("j", pumps=3)
    head = AnsweredHead(replies=[{"status": "RUNNING"}, {"status": "SUCCEEDED", "driver_exit_code": 0}])
    assert submitter.follow(head, tail, settings(dashboard_timeout_seconds=60))["status"] == "SUCCEEDED"
    assert (tail.pumped, tail.reopened) == (3, 0)


def test_a_tail_that_never_closes_is_given_up_after_the_bound(capsys):
    tail = ScriptedTail("j", pumps=10**9)
    started = time.monotonic()
    assert submitter.follow(AnsweredHead(replies=[{"status": "FAILED"}]), tail, settings())["status"] == "FAILED"
    assert time.monotonic() - started >= 0.05 and tail.pumped >= 1
    assert "j's log tail did not end within 0.05s" in capsys.readouterr().out


def test_a_tail_closed_under_a_running_job_is_reopened_and_a_gone_one_dropped():
    tail = ScriptedTail("j", pumps=1, gone_at=2)
    head = AnsweredHead(replies=[{"status": "RUNNING"}, {"status": "RUNNING"}, {"status": "RUNNING"},
                                 {"status": "STOPPED"}])
    assert submitter.follow(head, tail, settings(dashboard_timeout_seconds=60))["status"] == "STOPPED"
    assert tail.dropped == 1 and tail.reopened >= 1


def test_a_run_whose_head_is_lost_each_time_ends_after_its_attempts(capsys):
    head = AnsweredHead(gpus=[4.0], replies=[http_error(404)])
    assert submitter.run(head, settings()) == 1
    assert head.submitted == [f"{PREFIX}-a1", f"{PREFIX}-a2", f"{PREFIX}-a3"]
    assert capsys.readouterr().out.count("waiting for the cluster to be whole again (4 GPUs") == 3


def test_under_a_rayjob_a_lost_head_is_left_to_kuberay(capsys):
    head = AnsweredHead(gpus=[4.0], replies=[http_error(404)])
    assert submitter.run(head, settings(submission_id="rayjob-abc")) == 1
    assert head.submitted == ["rayjob-abc"]
    assert "KubeRay's RayJob retries the run on a new cluster (backoffLimit)" in capsys.readouterr().out


@pytest.mark.parametrize("status, code", [("SUCCEEDED", 0), ("FAILED", 1), ("STOPPED", 1)])
def test_the_run_exits_with_the_jobs_outcome(capsys, status, code, monkeypatch):
    monkeypatch.setattr(submitter, "LogTail", lambda url, submission_id, out: ScriptedTail(submission_id, pumps=1))
    head = AnsweredHead(gpus=[4.0], replies=[{"status": status, "driver_exit_code": 3, "message": "m"}])
    assert submitter.run(head, settings()) == code
    assert head.submitted == [f"{PREFIX}-a1"]
    assert f"{PREFIX}-a1: status={status} driver_exit_code=3 message='m'" in capsys.readouterr().out


def test_a_cluster_with_two_alive_heads_is_not_ready_yet(capsys):
    """A new head (GCS fault tolerance) lists the old one alive until its health checks fail; Ray may place a
    new job's supervisor there."""
    head = AnsweredHead(gpus=[6.0])
    head.heads = [2, 2, 1]
    submitter.wait_for_cluster(head, settings(wait_timeout_seconds=10))
    assert head.heads == [1]
    out = capsys.readouterr().out
    assert out.startswith("[verl-ppo submitter] cluster ready: 6 GPUs (need 4)") and out.count("cluster ready") == 1
    head.heads = [2]
    with pytest.raises(SystemExit) as exited:
        submitter.wait_for_cluster(head, settings(wait_timeout_seconds=0.05))
    assert exited.value.code == 3
    assert "saw 6 GPUs and 2 head nodes alive (a replaced head not yet marked dead)" in capsys.readouterr().out


def test_a_jobs_api_that_fails_for_a_while_is_tried_again(capsys):
    other = record(1, "SUCCEEDED", "other-ppo-job-0af3")  # what the head lists once it answers
    head = AnsweredHead([http_error(500), urllib.error.URLError(ConnectionResetError(104, "reset")), other],
                        gpus=[4.0], replies=[{"status": "SUCCEEDED", "driver_exit_code": 0}])
    with within(10):
        assert submitter.run(head, settings(dashboard_timeout_seconds=5)) == 0
    assert head.submitted == [f"{PREFIX}-a1"]
    assert capsys.readouterr().out.count("the Jobs API failed") == 2


def test_a_jobs_api_failure_past_its_bound_ends_the_pod():
    head = AnsweredHead([http_error(500)], gpus=[4.0])
    with within(10), pytest.raises(urllib.error.HTTPError):
        submitter.run(head, settings(dashboard_timeout_seconds=0.05))


# What no retry mends ends the pod at once, naming it; what a retry mends is retried.

class CountedHead(AnsweredHead):
    """Counts the job lists asked for: one means the answer was not asked again."""

    lists = 0

    def list_jobs(self) -> list[dict[str, Any]]:
        self.lists += 1
        return super().list_jobs()


@pytest.mark.parametrize("code", [400, 401, 403, 404, 405, 422])
def test_a_request_the_head_refuses_ends_the_pod_at_once_naming_it(code):
    head = CountedHead([http_error(code, "Traceback (most recent call last):\nValueError: bad entrypoint")], gpus=[4.0])
    started = time.monotonic()
    with pytest.raises(submitter.Unmendable) as refused:
        submitter.run(head, settings(dashboard_timeout_seconds=60))
    assert time.monotonic() - started < 5 and head.lists == 1
    assert str(refused.value) == (f"the Jobs API refused http://head.invalid:8265/api/jobs/ with HTTP {code} answer: "
                                  "ValueError: bad entrypoint")


@pytest.mark.parametrize("code", [408, 425, 429])
def test_a_not_now_answer_is_tried_again(capsys, monkeypatch, code):
    monkeypatch.setattr(submitter, "LogTail", lambda url, submission_id, out: ScriptedTail(submission_id, pumps=1))
    other = record(1, "SUCCEEDED", "other-ppo-job-0af3")  # what the head lists once it answers
    head = CountedHead([http_error(code), other], gpus=[4.0], replies=[{"status": "SUCCEEDED"}])
    with within(10):
        assert submitter.run(head, settings(dashboard_timeout_seconds=5)) == 0
    assert head.submitted == [f"{PREFIX}-a1"]
    assert f"the Jobs API failed (HTTP Error {code}: answer); trying again" in capsys.readouterr().out


def test_a_refusal_while_following_ends_the_pod_at_once():
    head = AnsweredHead([], gpus=[4.0], replies=[http_error(403, "forbidden")])
    with within(5), pytest.raises(submitter.Unmendable, match="HTTP 403 answer: forbidden"):
        submitter.run(head, settings(dashboard_timeout_seconds=60))


def test_a_refusal_while_waiting_for_the_cluster_ends_the_pod_at_once():
    head = AnsweredHead(gpus=[http_error(401, "unauthorized")])
    with within(5), pytest.raises(submitter.Unmendable, match="HTTP 401 answer: unauthorized"):
        submitter.wait_for_cluster(head, settings(wait_timeout_seconds=60))


def test_an_error_of_the_pods_own_ends_it_at_once(tmp_path):
    """A local error (here the preflight program is a directory) is no failure of the Jobs API to retry."""
    head = CountedHead([], gpus=[4.0])
    with within(5), pytest.raises(submitter.Unmendable, match="IsADirectoryError in the submitter's pod"):
        submitter.run(head, settings(preflight_program=str(tmp_path), dashboard_timeout_seconds=60))
    assert head.submitted == []


@pytest.mark.parametrize("mode", ["RayCluster", "RayJob"])
@pytest.mark.parametrize("code", [400, 500])  # Ray refuses the id itself with 400; through its job agent with 500
def test_an_id_submitted_by_another_pod_at_the_same_moment_is_reattached(capsys, monkeypatch, mode, code):
    """Two pods of one Job (or a retried submitter) look, find nothing, and submit the same id: the one the head
    refuses follows the other's run, and exits with its outcome."""
    monkeypatch.setattr(submitter, "LogTail", lambda url, submission_id, out: ScriptedTail(submission_id, pumps=1))
    given = f"{FAMILY}-rayjob-x7k2p" if mode == "RayJob" else ""
    expected = given or f"{PREFIX}-a1"

    class RacedHead(AnsweredHead):
        def submit(self, submission_id: str, spec: dict[str, Any]) -> None:
            super().submit(submission_id, spec)
            raise http_error(code, f"ValueError: Job with submission_id {submission_id} already exists. "
                                   "Please use a different submission_id.")

    head = RacedHead([], gpus=[4.0],
                     replies=[{"submission_id": expected, "status": "SUCCEEDED", "driver_exit_code": 0}])
    with within(10):
        assert submitter.run(head, settings(submission_id=given, dashboard_timeout_seconds=60)) == 0
    assert head.submitted == [expected]
    out = capsys.readouterr().out
    assert f"{expected} already exists (submitted by another pod at the same moment): re-attaching" in out
    assert f"{expected}: status=SUCCEEDED" in out


def test_another_refused_submission_is_no_reattachment():
    class RefusingHead(AnsweredHead):
        def submit(self, submission_id: str, spec: dict[str, Any]) -> None:
            raise http_error(400, "ValueError: runtime_env is invalid")

    with within(5), pytest.raises(submitter.Unmendable, match="runtime_env is invalid"):
        submitter.run(RefusingHead([], gpus=[4.0]), settings(dashboard_timeout_seconds=60))


@pytest.mark.parametrize("spec, why", [
    (None, "cannot be read ([Errno 2] No such file or directory"),
    ("{not json", "cannot be read (Expecting property name"),
    ('["python3 -m verl.trainer.main_ppo"]', "is no JSON object with an entrypoint command"),
    ('{"runtime_env": {}}', "is no JSON object with an entrypoint command"),
    ('{"entrypoint": "  "}', "is no JSON object with an entrypoint command"),
    ('{"entrypoint": "true", "runtime_env": "env"}', "runtime_env is no JSON object"),
])
def test_a_malformed_job_spec_fails_at_once_naming_it(monkeypatch, tmp_path, capsys, spec, why):
    environment(monkeypatch, tmp_path)
    path = tmp_path / "job.json"
    path.unlink()
    if spec is not None:
        path.write_text(spec)
    monkeypatch.setattr(submitter, "RayJobsAPI", lambda *args, **kwargs: pytest.fail("no head is asked"))
    assert submitter.main([]) == 2
    out = capsys.readouterr().out
    assert f"the job spec {path} (VERL_PPO_JOB_SPEC)" in out and why in out, out
    assert "not tried again: no retry can mend it" in out
    assert submitter.main(["--stop"]) == 0  # the uninstall hook never fails the uninstall


@pytest.mark.parametrize("name, value, why", [
    ("VERL_PPO_EXPECTED_GPUS", "four", "VERL_PPO_EXPECTED_GPUS='four' is not a float"),
    ("VERL_PPO_MAX_ATTEMPTS", "2.5", "VERL_PPO_MAX_ATTEMPTS='2.5' is not a int"),
    ("VERL_PPO_INPUTS", "[/data/x", "VERL_PPO_INPUTS='[/data/x' is not a JSON value"),
])
def test_a_malformed_setting_fails_at_once_naming_it(monkeypatch, tmp_path, capsys, name, value, why):
    environment(monkeypatch, tmp_path, **{name: value})
    assert submitter.main([]) == 2
    assert why in capsys.readouterr().out


def test_a_missing_setting_fails_at_once_naming_it(monkeypatch, tmp_path, capsys):
    environment(monkeypatch, tmp_path)
    monkeypatch.delenv("VERL_PPO_SUBMISSION_FAMILY")
    assert submitter.main([]) == 2
    assert "VERL_PPO_SUBMISSION_FAMILY is not set" in capsys.readouterr().out


@pytest.mark.parametrize("program", [None, "print('no constants here')", "NODES_LEFT = (", ""])
def test_a_missing_or_broken_preflight_program_fails_at_once_naming_it(monkeypatch, tmp_path, capsys, program):
    """Issue 28: a missing preflight program was reported as "the Jobs API failed; trying again" for minutes."""
    path = tmp_path / "preflight.py"
    if program is not None:
        path.write_text(program)
    environment(monkeypatch, tmp_path, VERL_PPO_SUBMISSION_PREFIX=PREFIX, VERL_PPO_PREFLIGHT=str(path),
                VERL_PPO_DASHBOARD_TIMEOUT_SECONDS="60", VERL_PPO_POLL_SECONDS="0.01")
    heads: list[CountedHead] = []
    monkeypatch.setattr(submitter, "RayJobsAPI", lambda url, timeout=30.0: heads.append(CountedHead([], gpus=[4.0]))
                        or heads[-1])
    with within(5):
        assert submitter.main([]) == 2
    out = capsys.readouterr().out
    assert f"the preflight program {path} (VERL_PPO_PREFLIGHT) cannot be used (" in out, out
    assert "trying again" not in out and heads[0].lists == 0 and heads[0].submitted == []


# A new head that kept the run's record (GCS fault tolerance) while its driver went with the old head.

def running_on(node: str) -> dict[str, Any]:
    return {**record(1, "RUNNING"), "driver_node_id": node}


@pytest.mark.parametrize("job, alive, gone", [
    (running_on("aa11"), ["bb22"], True),
    (running_on("aa11"), ["aa11", "bb22"], False),
    ({**running_on("aa11"), "status": "SUCCEEDED"}, [], False),  # an ended run: nothing to check
    ({**record(1, "PENDING"), "driver_node_id": None}, [], False),  # no driver yet
])
def test_a_run_whose_driver_node_is_gone_is_lost(job, alive, gone):
    head = AnsweredHead()
    head.alive = alive
    if gone:
        with pytest.raises(submitter.DriverGone, match=f"{PREFIX}-a1's driver ran on node aa11, which is gone"):
            submitter.check_driver(head, job)
    else:
        submitter.check_driver(head, job)


def test_a_failed_node_query_is_no_verdict():
    head = AnsweredHead()
    head.alive = urllib.error.URLError(ConnectionRefusedError(111, "refused"))
    submitter.check_driver(head, running_on("aa11"))


def test_the_driver_is_checked_only_after_the_dashboard_was_silent(monkeypatch):
    tail = ScriptedTail(f"{PREFIX}-a1", pumps=3)
    quiet = AnsweredHead(replies=[running_on("aa11"), running_on("aa11"), {"status": "SUCCEEDED"}])
    assert submitter.follow(quiet, tail, settings(dashboard_timeout_seconds=60))["status"] == "SUCCEEDED"
    assert getattr(quiet, "node_queries", 0) == 0  # a head that never went silent: one request a poll
    silent = AnsweredHead(replies=[http_error(503), running_on("aa11")])
    silent.alive = ["bb22"]
    with pytest.raises(submitter.DriverGone):
        submitter.follow(silent, ScriptedTail(f"{PREFIX}-a1", pumps=10), settings(dashboard_timeout_seconds=60))


def test_an_orphaned_attempt_counts_as_lost_and_the_next_one_starts(monkeypatch, capsys):
    def follow(api, tail, s):
        if tail.submission_id.endswith("-a1"):
            raise submitter.DriverGone("a1's driver ran on node aa11, which is gone")
        return {"status": "SUCCEEDED", "driver_exit_code": 0}

    monkeypatch.setattr(submitter, "follow", follow)
    head = AnsweredHead([running_on("aa11")], gpus=[4.0])  # the new head still lists a1 RUNNING
    assert submitter.run(head, settings()) == 0
    assert head.submitted == [f"{PREFIX}-a2"] and head.stopped == [f"{PREFIX}-a1"]
    assert f"{PREFIX}-a1 ended LOST: starting attempt 2" in capsys.readouterr().out
    assert submitter.choose_submission(head, settings(), orphaned={1}).submission_id == f"{PREFIX}-a2"
    assert submitter.choose_submission(head, settings(), lost={1}).submission_id == f"{PREFIX}-a1"  # re-attaches


# The preflight, as Ray reports its end (its runs on a real head: tests/ray/test_submitter_ray.py).

PREFLIGHT = SUBMITTER.parent / "preflight.py"


def preflight_run(monkeypatch, endings: list[dict[str, Any]]) -> AnsweredHead:
    """The preflights end as `endings` say (in order), the run itself SUCCEEDED."""
    ends = iter(endings)
    monkeypatch.setattr(submitter, "follow", lambda api, tail, s: next(ends) if "-preflight-" in tail.submission_id
                        else {"status": "SUCCEEDED", "driver_exit_code": 0})
    return AnsweredHead(gpus=[4.0])


def test_a_node_left_during_the_preflight_it_runs_again_then_the_run(monkeypatch, capsys):
    head = preflight_run(monkeypatch, [{"status": "FAILED", "driver_exit_code": 75}, {"status": "SUCCEEDED"}])
    assert submitter.run(head, settings(preflight_program=str(PREFLIGHT), preflight_expected={})) == 0
    assert [s.split("-preflight-")[0] for s in head.submitted] == [f"{PREFIX}-a1"] * 3  # two preflights, one run
    assert head.submitted[-1] == f"{PREFIX}-a1"
    assert "a Ray node left while it ran; waiting for the cluster to be whole again" in capsys.readouterr().out


def test_a_cluster_that_never_holds_still_submits_nothing(monkeypatch, capsys):
    runs = 3  # docs/operations.md's "up to 3 times in one pod"
    head = preflight_run(monkeypatch, [{"status": "FAILED", "driver_exit_code": 75}] * (runs + 1))
    assert submitter.run(head, settings(preflight_program=str(PREFLIGHT), preflight_expected={})) == 5
    assert len(head.submitted) == runs and all("-preflight-" in s for s in head.submitted)
    assert f"{runs} times: the cluster does not hold still" in capsys.readouterr().out


def test_a_preflight_ray_could_not_start_runs_again(monkeypatch, capsys):
    never_ran = {"status": "FAILED", "driver_exit_code": None, "message": "Job supervisor actor could not be scheduled"}
    head = preflight_run(monkeypatch, [never_ran, {"status": "SUCCEEDED"}])
    assert submitter.run(head, settings(preflight_program=str(PREFLIGHT), preflight_expected={})) == 0
    assert head.submitted[-1] == f"{PREFIX}-a1" and len(head.submitted) == 3
    assert "did not start (Job supervisor actor could not be scheduled)" in capsys.readouterr().out


@pytest.mark.parametrize("ending", [{"status": "FAILED", "driver_exit_code": 1}, {"status": "STOPPED",
                                                                                  "driver_exit_code": 75}])
def test_a_preflight_that_failed_otherwise_is_not_run_again(monkeypatch, ending):
    head = preflight_run(monkeypatch, [ending])
    with pytest.raises(SystemExit) as exited:
        submitter.run(head, settings(preflight_program=str(PREFLIGHT), preflight_expected={}))
    assert exited.value.code == 5 and len(head.submitted) == 1


def test_the_preflight_runs_as_a_module_of_its_package_in_the_runs_environment(monkeypatch):
    """Issue 33: the preflight's source on the command line filled Ray's "Running entrypoint" line of the log with
    120 lines; it now travels as a py_modules package and its entrypoint is one short line."""
    head = preflight_run(monkeypatch, [{"status": "SUCCEEDED"}])
    spec = {"entrypoint": "python3 -m verl.trainer.main_ppo",
            "runtime_env": {"env_vars": {"NCCL_DEBUG": "WARN"}, "working_dir": "file:///shared/code.zip"}}
    expected = {"mountPath": "/shared", "inputs": ["/shared/it's.parquet"], "gpusPerNode": 2}
    checked_run = settings(job_spec=spec, preflight_program=str(PREFLIGHT), preflight_expected=expected)
    assert submitter.run(head, checked_run) == 0
    [(_, checked), (_, run)] = head.specs.items()
    name, content = submitter.preflight_package(PREFLIGHT.read_text())
    assert head.packages == {name: content}
    assert checked["entrypoint"] == "python3 -m verl_ppo_preflight " + shlex.quote(json.dumps(expected))
    assert checked["runtime_env"] == {**spec["runtime_env"], "py_modules": [f"gcs://{name}"]}
    assert run == spec  # the run itself gets nothing of the preflight's


def test_the_preflight_package_holds_the_program_under_its_module_name():
    source = PREFLIGHT.read_text()
    name, content = submitter.preflight_package(source)
    assert submitter.preflight_package(source) == (name, content)  # one program, one package: uploaded once a head
    assert submitter.preflight_package(source + "\n")[0] != name
    assert re.fullmatch(r"_ray_pkg_[0-9a-f]{40}\.zip", name), name  # the name Ray gives its own packages
    with zipfile.ZipFile(io.BytesIO(content)) as archive:
        assert archive.namelist() == ["verl_ppo_preflight.py"]
        assert archive.read("verl_ppo_preflight.py").decode() == source


def test_a_package_is_uploaded_only_where_the_head_lacks_it():
    name, content = submitter.preflight_package("print('checked')\n")
    path = f"/api/packages/gcs/{name}"
    with answering({("GET", path): (404, None), ("PUT", path): (200, None)}) as (url, received):
        assert submitter.RayJobsAPI(url).ensure_package(name, content) == f"gcs://{name}"
    assert [(r.method, r.path) for r in received] == [("GET", path), ("PUT", path)] and received[1].body == content
    with answering({("GET", path): (200, None)}) as (url, received):
        assert submitter.RayJobsAPI(url).ensure_package(name, content) == f"gcs://{name}"
    assert [r.method for r in received] == ["GET"]
    with answering({("GET", path): (503, None)}) as (url, received), pytest.raises(urllib.error.HTTPError):
        submitter.RayJobsAPI(url).ensure_package(name, content)  # the run's retry decides, as for a submission


def test_the_code_of_a_node_that_left_is_the_preflights_own():
    assert submitter.preflight_constant(PREFLIGHT.read_text(), "NODES_LEFT") == 75
    with pytest.raises(ValueError, match="defines no NOT_THERE"):
        submitter.preflight_constant(PREFLIGHT.read_text(), "NOT_THERE")


# The pod's Job as the Kubernetes API answers (its real answers: tests/cluster/test_cluster_submitter.py, tier 6).

@dataclass
class Request:
    method: str
    path: str
    authorization: str | None
    body: Any  # the JSON sent (other content as bytes), None without a body


@contextlib.contextmanager
def answering(answers: dict[tuple[str, str], tuple[int, Any]], tls_dir: Path | None = None
              ) -> Iterator[tuple[str, list[Request]]]:
    """An HTTP (or, with tls_dir, HTTPS: its CA in tls_dir/ca.crt) endpoint giving each (method, path) its
    (status, JSON) answer; yields its URL and the requests it received."""
    received: list[Request] = []

    class Handler(http.server.BaseHTTPRequestHandler):
        def answer(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            sent = self.rfile.read(length) if length else b""
            as_json = self.headers.get("Content-Type") == "application/json"
            received.append(Request(self.command, self.path, self.headers.get("Authorization"),
                                    (json.loads(sent) if as_json else sent) if sent else None))
            status, reply = answers[(self.command, self.path)]
            body = b"" if reply is None else json.dumps(reply).encode()
            self.send_response(status)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        do_GET = do_POST = do_PUT = answer  # noqa: N815 (the names http.server calls)

        def log_message(self, *args: Any) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    if tls_dir:
        (tls_dir / "ca.crt").write_bytes(write_webhook_pki(tls_dir, "127.0.0.1"))
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(tls_dir / "tls.crt", tls_dir / "tls.key")
        server.socket = context.wrap_socket(server.socket, server_side=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"{'https' if tls_dir else 'http'}://127.0.0.1:{server.server_address[1]}", received
    finally:
        server.shutdown()
        server.server_close()


def test_the_jobs_api_client_sends_what_ray_reads():
    nodes = {"data": {"result": {"result": [{"state": "ALIVE", "resources_total": {"GPU": 2.0}},
                                            {"resources_total": {"GPU": 1.0, "CPU": 8.0}},
                                            {"state": "DEAD", "resources_total": {"GPU": 8.0}},
                                            {"state": "ALIVE", "resources_total": {"CPU": 4.0}}]}}}
    answers = {("POST", "/api/jobs/"): (200, {"submission_id": "j-a1"}), ("GET", "/api/jobs/"): (200, None),
               ("POST", "/api/jobs/j-a1/stop"): (200, {"stopped": True}),
               ("GET", "/api/jobs/j-a1"): (200, {"status": "RUNNING"}),
               ("GET", "/api/v0/nodes?limit=10000&detail=true"): (200, nodes)}
    with answering(answers) as (url, received):
        api = submitter.RayJobsAPI(url)
        api.submit("j-a1", {"entrypoint": "python3 -m verl.trainer.main_ppo", "runtime_env": {"env_vars": {"A": "1"}},
                            "metadata": {"release": "r", "attempt": 3}})
        assert api.list_jobs() == []
        assert api.job("j-a1") == {"status": "RUNNING"}
        api.stop("j-a1")
        assert api.cluster_gpus() == 3.0
        api.submit("j-a1", {"entrypoint": "true"})
    assert [(r.method, r.path) for r in received] == [
        ("POST", "/api/jobs/"), ("GET", "/api/jobs/"), ("GET", "/api/jobs/j-a1"), ("POST", "/api/jobs/j-a1/stop"),
        ("GET", "/api/v0/nodes?limit=10000&detail=true"), ("POST", "/api/jobs/")]
    assert received[0].body == {"entrypoint": "python3 -m verl.trainer.main_ppo", "submission_id": "j-a1",
                                "runtime_env": {"env_vars": {"A": "1"}}, "metadata": {"release": "r", "attempt": "3"}}
    assert received[-1].body == {"entrypoint": "true", "submission_id": "j-a1", "runtime_env": {}, "metadata": {}}
    assert [r.body for r in received[1:5]] == [None] * 4


@pytest.mark.parametrize("status, job, verdict", [
    (404, {"kind": "Status", "code": 404}, (True, "its Job was deleted")),
    (200, {"metadata": {"deletionTimestamp": "2026-12-01T10:00:00Z"}}, (True, "its Job is being deleted")),
    (200, {"metadata": {}, "spec": {"suspend": True}}, (True, "its Job was suspended")),
    (200, {"metadata": {}, "spec": {"suspend": False}}, (False, "its Job remains (eviction or node drain)")),
    (403, {"kind": "Status", "code": 403}, (False, "the Kubernetes API answered 403")),
])
def test_the_jobs_state_decides_whether_sigterm_stops_the_run(monkeypatch, tmp_path, status, job, verdict):
    (tmp_path / "token").write_text("secret-token\n")
    path = f"/apis/batch/v1/namespaces/team/jobs/{PREFIX}"
    with answering({("GET", path): (status, job)}, tls_dir=tmp_path) as (url, received):
        monkeypatch.setenv("VERL_PPO_KUBE_API", url)
        monkeypatch.setenv("VERL_PPO_KUBE_TOKEN_FILE", str(tmp_path / "token"))
        monkeypatch.setenv("VERL_PPO_KUBE_CA_FILE", str(tmp_path / "ca.crt"))
        assert submitter.KubeJob("team", PREFIX).ended_by_user() == verdict
    assert received == [Request("GET", path, "Bearer secret-token", None)]


def test_a_silent_kubernetes_api_never_stops_the_run(monkeypatch, tmp_path):
    (tmp_path / "token").write_text("t")
    monkeypatch.setenv("VERL_PPO_KUBE_API", f"https://127.0.0.1:{free_port()}")
    monkeypatch.setenv("VERL_PPO_KUBE_TOKEN_FILE", str(tmp_path / "token"))
    ended, why = submitter.KubeJob("team", PREFIX).ended_by_user()
    assert not ended and why.startswith("the Kubernetes API did not answer (")


def test_check_mode_waits_for_the_gpus_and_submits_nothing(monkeypatch, tmp_path, capsys):
    environment(monkeypatch, tmp_path, VERL_PPO_POLL_SECONDS="0.01")
    heads: list[AnsweredHead] = []
    monkeypatch.setattr(submitter, "RayJobsAPI", lambda url, timeout=30.0: heads.append(AnsweredHead(gpus=[2.0, 4.0]))
                        or heads[-1])
    assert submitter.main(["--check"]) == 0
    assert heads[0].gpus == [4.0] and heads[0].submitted == []
    assert "cluster ready: 4 GPUs (need 4)" in capsys.readouterr().out


def test_stop_mode_stops_the_releases_runs_and_never_fails(monkeypatch, tmp_path):
    environment(monkeypatch, tmp_path)
    heads: list[AnsweredHead] = []
    monkeypatch.setattr(submitter, "RayJobsAPI", lambda url, timeout=30.0: heads.append(
        AnsweredHead([record(1, "RUNNING"), record(1, "RUNNING", "other-ppo-job-0af3")],
                     replies=[{"status": "STOPPED"}])) or heads[-1])
    assert submitter.main(["--stop"]) == 0
    assert heads[0].stopped == [f"{PREFIX}-a1"]


def test_under_a_rayjob_kuberays_address_of_its_clusters_head_is_used(monkeypatch, tmp_path):
    """The Service KubeRay names after the RayJob selects nothing of the chart's pods (KubeRay v1.6.0 gives it its
    own default app.kubernetes.io/name); the address KubeRay hands its submitter is its cluster's head Service."""
    environment(monkeypatch, tmp_path, RAY_DASHBOARD_ADDRESS="rj-x7k2p-head-svc.team.svc.cluster.local:8265")
    assert submitter.Settings.from_env().dashboard_url == "http://head:8265"  # not a RayJob's submitter: ignored
    monkeypatch.setenv("RAY_JOB_SUBMISSION_ID", "rj-abcde")
    assert submitter.Settings.from_env().dashboard_url == "http://rj-x7k2p-head-svc.team.svc.cluster.local:8265"
    monkeypatch.delenv("RAY_DASHBOARD_ADDRESS")
    assert submitter.Settings.from_env().dashboard_url == "http://head:8265"
