"""The checkpointing stand-in run on the real node (tier 7: the fault matrix, GCS fault tolerance) and what
the tests measure of a run: its Ray job attempts, how many ran at once, the step each attempt resumed from
(the run's journal), the submitter Job's pods, logs and final status.

A release gets the stand-in (support/stand_in_ranks.py) through STAND_IN_VALUES and copy_stand_ins; each run
is an upgrade to a checkpoint directory of its own (run_sets): a new submitter Job."""

from __future__ import annotations

import math
import os
import re
import signal
import time
from dataclasses import dataclass, field
from pathlib import Path

from kubernetes import client

from support.podrelease import PodRelease
from support.realnode import VALUES
from support.stand_in_steps import read_journal, wait_for_step
from lab.localcluster import processes
from lab.localcluster.pods import terminated_exit_code
from lab.localcluster.realnode import pod_pids

MOUNT = "/data"  # global.storage.mountPath of the chart's defaults
# Steps of a run, and of a run that must outlast a new submitter pod (its start and preflight: half a minute
# and more on 2 busy cores) after the fault.
STEPS, LONG_STEPS, STEP_SECONDS, FAULT_AT = 12, 30, 3, 3
# The pace of an attempt that resumes after a fault: the tests measure where it resumed and that it wrote every
# step after once, in order, which its pace does not change; at STEP_SECONDS its rest took a minute and more a test.
RESUMED_STEP_SECONDS = 0.5
# Steps of a run that an upgrade supersedes: it must outlast the new Job's pod until that pod stops it (the
# upgrade, the pod's start, its wait for the cluster: the old run reached step 27 of 30 once, all 30 the next).
SUPERSEDED_STEPS = 50
MAX_ATTEMPTS = 3
STAND_INS = [Path(__file__).resolve().parent / name for name in ("stand_in_ranks.py", "stand_in_steps.py")]
STAND_IN_VALUES = ["-f", str(VALUES),
               # The stand-in lies on the shared volume, on every Ray node's PYTHONPATH (the image has only stand_in).
               "--set", f"raycluster.pythonPath={MOUNT}/standin", "--set", "ppo-job.entrypointModule=stand_in_ranks",
               "--set-string", f"ppo-job.runtimeEnv.env.STAND_IN_STEP_SECONDS={STEP_SECONDS}",
               "--set-string", f"ppo-job.runtimeEnv.env.STAND_IN_RESUMED_STEP_SECONDS={RESUMED_STEP_SECONDS}",
               "--set", f"ppo-job.submitter.maxAttempts={MAX_ATTEMPTS}"]
RUN_TIMEOUT = 600  # a head replaced and its worker rejoined on 2 busy cores takes minutes
# After a pod's grace period, what the run still needs to show its loss: a rank's answer awaited (the stand-in's
# RANK_TIMEOUT) and the step under way.
LOSS_SHOWN_SECONDS = 60 + STEP_SECONDS


@dataclass
class Run:
    job: str  # the submitter Job (its name is the prefix of the run's Ray submission ids)
    checkpoints: Path  # the run's checkpoint directory, on this machine
    sets: list[str]  # the upgrade's arguments that made it
    steps: int
    lost: dict[str, dict] = field(default_factory=dict)  # Ray jobs a replaced head took with it


@dataclass(frozen=True)
class Outcome:
    attempts: dict[int, dict]  # the run's Ray jobs by attempt number
    resumed_from: list[int]  # the first step of each attempt that wrote a checkpoint
    at_once: int
    job: client.V1Job
    pods: list[client.V1Pod]  # the submitter's pods, oldest first
    logs: str  # theirs, in that order

    def row(self, fault: str) -> str:
        """The fault matrix's row (docs/operations.md), from what was measured."""
        attempts = ", ".join(f"a{n} {a['status']}" for n, a in sorted(self.attempts.items()))
        status = "Complete" if self.job.status.succeeded else "Failed"
        pods = f"{len(self.pods)} pod{'s' if len(self.pods) > 1 else ''}, {self.job.status.failed or 0} failed"
        return (f"| {fault} | {attempts} | {', '.join(map(str, self.resumed_from))} | {self.at_once} | "
                f"{len(self.attempts)} of {MAX_ATTEMPTS} | {status} ({pods}) |")


def copy_stand_ins(volume: Path) -> None:
    (volume / "standin").mkdir()
    for stand_in in STAND_INS:
        (volume / "standin" / stand_in.name).write_bytes(stand_in.read_bytes())


def run_sets(row: str, steps: int) -> list[str]:
    return ["--set", f"ppo-job.trainer.checkpointDir={MOUNT}/checkpoints/{row}",
            "--set-string", f"ppo-job.runtimeEnv.env.STAND_IN_STEPS={steps}"]


def start_run(release: PodRelease, row: str, steps: int = STEPS) -> Run:
    """A run of its own for the row, past step FAULT_AT."""
    known = {j.metadata.name for j in release.submitter_jobs()}
    run = Run("", release.volume / "checkpoints" / row, run_sets(row, steps), steps)
    release.upgrade(*run.sets)
    run.job = release.new_job_after(known)
    wait_for_step(run.checkpoints, FAULT_AT, timeout=300)
    return run


def steps_outlasting(grace_seconds: int) -> int:
    """Steps of a run struck at FAULT_AT that is still going when a pod stopped with this grace period is gone: Ray
    drains a node on SIGTERM and the run goes on for most of the grace period, so a shorter run would end
    SUCCEEDED inside it and show nothing of the fault."""
    return FAULT_AT + math.ceil((grace_seconds + LOSS_SHOWN_SECONDS) / STEP_SECONDS)


def grace_seconds(release: PodRelease, node_type: str) -> int:
    """The grace period of the release's Ray pod of this type (the chart's raycluster.terminationGracePeriodSeconds)."""
    return release.pod(node_type).spec.termination_grace_period_seconds


def drain_seconds(release: PodRelease, node_type: str) -> int:
    """How long Ray drains the node of the release's Ray pod of this type on SIGTERM (the chart's
    RAY_GRACEFUL_SHUTDOWN_DRAIN_TIMEOUT_S: the grace period less the teardown's share)."""
    [value] = [e.value for e in release.pod(node_type).spec.containers[0].env
               if e.name == "RAY_GRACEFUL_SHUTDOWN_DRAIN_TIMEOUT_S"]
    return int(value)


def fail_node_of(release: PodRelease, pod: str, down_seconds: float = 5) -> None:
    """What a failed node does to its pods, the pod standing for its node (the one real node holds the head too):
    the kubelet stops (SIGSTOP: nothing restarts, stops or reports the pod), every process of the pod dies at once
    (SIGKILL, no SIGTERM: no drain, no grace period), and the pod is deleted with no grace period, as the pod
    garbage collector does for the pods of a node marked out of service (or an operator's `kubectl delete --force`)
    once the node is NotReady. The kubelet comes back after down_seconds (a node replaced, in a real cluster) and
    clears what is left of the pod."""
    uid = release.core.read_namespaced_pod(pod, release.namespace).metadata.uid
    kubelet = processes.pids(release.cluster.state)["kubelet"]
    os.kill(kubelet, signal.SIGSTOP)
    try:
        for pid in pod_pids(uid):
            processes.kill(pid)
        release.core.delete_namespaced_pod(pod, release.namespace, grace_period_seconds=0)
        time.sleep(down_seconds)
    finally:
        os.kill(kubelet, signal.SIGCONT)


def most_at_once(jobs: list[dict]) -> int:
    """The most of these Ray jobs running at one moment, by their start and end times (ms; running: no end)."""
    edges = sorted([(j["start_time"], 1) for j in jobs] + [(j["end_time"] or float("inf"), -1) for j in jobs],
                   key=lambda edge: (edge[0], edge[1]))  # an end before a start at the same moment
    running = most = 0
    for _, change in edges:
        running += change
        most = max(most, running)
    return most


def head_lost(release: PodRelease, head: str, timeout: float) -> dict[str, dict]:
    """The head's Ray jobs as the head goes (without GCS fault tolerance they go with it): read while its pod
    stops (Ray's drain keeps it answering for most of the grace period), a running one ending when the pod is gone."""
    jobs = release.ray_jobs_of(head)

    def gone() -> bool:
        nonlocal jobs
        try:
            release.core.read_namespaced_pod(head, release.namespace)
        except client.ApiException as error:
            if error.status == 404:
                return True
            raise
        try:
            jobs = release.ray_jobs_of(head, patience=0)
        except Exception:  # noqa: BLE001 - its dashboard stopped or its container refuses the exec: it is going
            pass
        return False

    processes.wait_for(f"head {head} gone", gone, timeout, interval=2)
    now = time.time() * 1000
    return {i: {**j, "status": "LOST", "end_time": j["end_time"] or now} for i, j in jobs.items()}


def outcome(release: PodRelease, run: Run) -> Outcome:
    job = release.finished_job(run.job, timeout=RUN_TIMEOUT)
    jobs = {**run.lost, **release.ray_jobs()}
    attempt = re.compile(re.escape(run.job) + r"-a(\d+)$")
    attempts = {int(m.group(1)): j for i, j in jobs.items() if (m := attempt.match(i))}
    # Every attempt of every run of the release: a superseded run's too.
    runs = [j for i, j in jobs.items() if re.search(r"-a\d+$", i)]
    pods = release.job_pods(run.job)
    logs = "".join(release.core.read_namespaced_pod_log(p.metadata.name, release.namespace) for p in pods)
    return Outcome(attempts, resumed_from(run.checkpoints, run.steps), most_at_once(runs), job, pods, logs)


def resumed_from(checkpoints: Path, steps: int) -> list[int]:
    """Asserts the journal holds each step once, in order, each writer's steps together and every step's
    checkpoint there; returns the step each writer started at."""
    written = read_journal(checkpoints)
    assert [step for step, _ in written] == list(range(1, steps + 1)), written
    assert all((checkpoints / f"global_step_{step}").is_dir() for step in range(1, steps + 1))
    starts = [(step, writer) for index, (step, writer) in enumerate(written)
              if index == 0 or written[index - 1][1] != writer]
    writers = [writer for _, writer in starts]
    assert len(set(writers)) == len(writers), written  # a writer that comes back: two drivers interleaved
    return [step for step, _ in starts]


def assert_succeeded(result: Outcome, run: Run, attempts: int, writers: int | None = None) -> None:
    """The run's Job Complete after `attempts` attempts, one at a time; its journal written by `writers` drivers
    one after another (by default one per attempt; a superseded run's driver adds one)."""
    assert sorted(result.attempts) == list(range(1, attempts + 1)), result.attempts
    assert attempts <= MAX_ATTEMPTS
    assert len(result.resumed_from) == (writers or attempts), result.resumed_from
    assert result.at_once == 1, result.attempts
    last = f"{run.job}-a{attempts}"
    assert result.attempts[attempts]["status"] == "SUCCEEDED", result.attempts
    assert result.job.status.succeeded == 1, result.job.status
    assert any(c.type == "Complete" and c.status == "True" for c in result.job.status.conditions), result.job.status
    assert f"{last}: status=SUCCEEDED driver_exit_code=0" in result.logs, result.logs
    assert terminated_exit_code(result.pods[-1]) == 0


def print_row(result: Outcome, fault: str) -> None:
    print(f"\nfault matrix: {result.row(fault)}")
