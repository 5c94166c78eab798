"""Tier 7: the fault matrix on real pods. One release on the real node runs the checkpointing stand-in
(support/stand_in_ranks.py: like veRL it holds a rank with the GPUs of every Ray node and checkpoints to
trainer.default_local_dir on the shared volume, a step at a time); each test starts a run of its own (an
upgrade to a checkpoint directory of its own: a new submitter Job), strikes it after step FAULT_AT as the cluster
does (a pod deleted or evicted with its grace period, a failed node's pod killed without warning), the run long
enough to outlast the grace period, and measures what the fault matrix of docs/operations.md reports:
- runs at once: the most Ray job attempts of the release running at one moment (their start and end times
  on the head; an attempt lost with its head ends when the head went), never more than one;
- resumed from: the step each attempt started at (its first step in the run's journal, where every
  checkpoint is written once with the pod and pid of its writer: a lost step, one written twice, or two
  writers interleaved show there);
- attempts against ppo-job.submitter.maxAttempts, and the Job's final status and the submitter's verdict.

`helm uninstall` during a run is test_pods.py's (the pre-delete hook stops it: STOPPED). The tests run in file
order on one release."""

from __future__ import annotations

import os
import re
import signal
import time

import pytest
from kubernetes import client

from support.faultrun import FAULT_AT, LONG_STEPS, STAND_IN_VALUES, STEP_SECONDS, STEPS, SUPERSEDED_STEPS, \
    Outcome, Run, assert_succeeded, copy_stand_ins, drain_seconds, fail_node_of, grace_seconds, head_lost, outcome, \
    print_row, run_sets, start_run, steps_outlasting
from support.podrelease import PodRelease, installed
from support.stand_in_steps import read_journal
from lab.localcluster import processes
from lab.localcluster.pods import terminated_exit_code
from lab.localcluster.realnode import NAME as NODE
from lab.localcluster.release import raycluster_ready

RELEASE, NAMESPACE = "faults", "faults"


@pytest.fixture(scope="module")
def release(pod_cluster):
    with installed(pod_cluster, RELEASE, NAMESPACE, STAND_IN_VALUES + run_sets("install", STEPS),
                   before_install=copy_stand_ins) as r:
        yield r


def test_a_run_without_faults(release):
    """The baseline: the install's own run, one attempt from step 1."""
    [job] = release.submitter_jobs()
    run = Run(job.metadata.name, release.volume / "checkpoints" / "install", [], STEPS)
    result = outcome(release, run)
    assert_succeeded(result, run, attempts=1)
    assert result.resumed_from == [1]
    assert "stand-in run: 2 ranks placed" in result.logs
    print_row(result, "none")


def test_the_submitter_pod_deleted_while_the_ray_job_runs(release):
    run = start_run(release, "submitter", LONG_STEPS)
    first = release.job_pods(run.job)[0].metadata.name
    release.core.delete_namespaced_pod(first, NAMESPACE)
    result = outcome(release, run)
    assert_succeeded(result, run, attempts=1)
    assert result.resumed_from == [1]
    # The deleted pod (and its log) is gone; its replacement re-attached to the run, still going or done.
    assert [p.metadata.name for p in result.pods] != [first] and len(result.pods) == 1, result.pods
    assert re.search(rf"re-attaching to {run.job}-a1 \((RUNNING|SUCCEEDED)\)", result.logs), result.logs
    print_row(result, "submitter pod deleted")


def test_the_dashboard_silent_for_a_minute(release):
    """The head's dashboard process stopped for 60 s (SIGSTOP: requests to it hang, and KubeRay's readiness
    probe fails after 50 s), within the submitter's bound (ppo-job.submitter.dashboardTimeoutSeconds, 300 s by
    default): the submitter waits, then follows the same Ray job on; each step's line printed once."""
    run = start_run(release, "dashboard", LONG_STEPS)
    restarts = release.restart_counts()
    dashboard = release.process("head", "dashboard/dashboard.py")
    os.kill(dashboard, signal.SIGSTOP)
    try:
        time.sleep(60)
    finally:
        os.kill(dashboard, signal.SIGCONT)
    result = outcome(release, run)
    assert_succeeded(result, run, attempts=1)
    assert result.resumed_from == [1] and len(result.pods) == 1
    assert "dashboard not answering" in result.logs and "dashboard answers again after" in result.logs, result.logs
    assert "re-attaching" not in result.logs
    for step in range(1, run.steps + 1):
        assert result.logs.count(f"stand-in run: step {step} checkpointed\n") == 1, (step, result.logs)
    assert release.restart_counts() == restarts  # the liveness probe allows 600 s
    print("\n" + next(line for line in result.logs.splitlines() if "dashboard answers again" in line))
    print_row(result, "dashboard silent 60 s (its process stopped)")


def test_the_apiserver_restarted_mid_run(release):
    run = start_run(release, "apiserver")
    pods = release.restart_counts()
    ready_after = release.cluster.restart_apiserver(down_seconds=15)
    print(f"\nkube-apiserver ready {ready_after:.1f}s after its start (15 s down)")
    result = outcome(release, run)
    assert_succeeded(result, run, attempts=1)
    assert result.resumed_from == [1] and len(result.pods) == 1
    # Nothing was replaced or restarted while the API was away.
    assert release.restart_counts() == pods
    print_row(result, "kube-apiserver restarted (15 s down)")


def test_an_upgrade_that_leaves_the_run_alone_during_a_run(release):
    run = start_run(release, "upgrade-same")
    jobs = [j.metadata.name for j in release.submitter_jobs()]
    release.upgrade(*run.sets, "--set", "observability.podMonitor.interval=15s")
    result = outcome(release, run)
    assert [j.metadata.name for j in release.submitter_jobs()] == jobs
    assert_succeeded(result, run, attempts=1)
    assert result.resumed_from == [1] and len(result.pods) == 1
    print_row(result, "`helm upgrade` leaving the run alone")


def test_an_upgrade_that_changes_the_run_during_a_run(release):
    """The changed run supersedes the old one (its Ray job STOPPED, its Job gone) and resumes from its
    last checkpoint: the checkpoint directory is the same."""
    old = start_run(release, "upgrade-changed", SUPERSEDED_STEPS)
    known = {j.metadata.name for j in release.submitter_jobs()}
    release.upgrade(*old.sets, "--set-string", "ppo-job.runtimeEnv.env.STAND_IN_NOTE=changed")
    run = Run(release.new_job_after(known), old.checkpoints, old.sets, old.steps)
    result = outcome(release, run)
    assert_succeeded(result, run, attempts=1, writers=2)
    assert result.resumed_from[1] > FAULT_AT, result.resumed_from
    assert old.job not in {j.metadata.name for j in release.submitter_jobs()}
    assert release.ray_jobs()[f"{old.job}-a1"]["status"] == "STOPPED"
    print_row(result, "`helm upgrade` changing the run")


def test_the_worker_pod_deleted(release):
    """Deleted as `kubectl delete pod` does, with the pod's grace period: Ray drains the worker's node and the run
    goes on through the drain; then its rank is lost, as veRL's would be: attempt 1 fails, and the Job's next pod
    waits for the GPUs (KubeRay's new worker) and resumes from the last checkpoint."""
    grace, drain = grace_seconds(release, "worker"), drain_seconds(release, "worker")
    run = start_run(release, "worker", steps_outlasting(grace))
    deleted = written_steps(run)
    release.core.delete_namespaced_pod(release.worker, NAMESPACE)
    result = outcome(release, run)
    assert_failed_then_resumed(result, run)
    assert_ran_on_through_the_drain(result, deleted, drain)
    print_row(result, f"worker pod deleted (its grace period, {grace} s)")


def written_steps(run: Run) -> int:
    """The run's newest checkpointed step now."""
    return len(read_journal(run.checkpoints))


def assert_ran_on_through_the_drain(result: Outcome, struck_at: int, drain: int) -> None:
    """The run went on while Ray drained the node for `drain` seconds: at least half the drain's steps were
    checkpointed after the fault (half: 2 busy cores)."""
    drained_steps = drain // STEP_SECONDS
    print(f"\nstruck after step {struck_at}; attempt 2 resumed at step {result.resumed_from[1]} "
          f"(the drain: {drain} s, {drained_steps} steps of {STEP_SECONDS} s)")
    assert result.resumed_from[1] - 1 - struck_at >= drained_steps // 2, (struck_at, result.resumed_from)


def test_the_workers_node_failed(release):
    """A node that fails gives no warning: the worker's processes die at once (no SIGTERM, no drain) and the pod is
    deleted with no grace period, as Kubernetes does for the pods of a node out of service. The rank is lost at
    once: attempt 1 fails and attempt 2 resumes from the last checkpoint on KubeRay's new worker."""
    run = start_run(release, "node-failed", LONG_STEPS)
    struck_at = written_steps(run)
    fail_node_of(release, release.worker)
    result = outcome(release, run)
    assert_failed_then_resumed(result, run)
    # Nothing ran on after the fault: at most the step under way when the node failed was written.
    assert result.resumed_from[1] - 1 <= struck_at + 1, (struck_at, result.resumed_from)
    print_row(result, "worker's node failed (its processes killed, the pod force-deleted)")


def assert_failed_then_resumed(result: Outcome, run: Run) -> None:
    assert_succeeded(result, run, attempts=2)
    assert result.attempts[1]["status"] == "FAILED" and result.attempts[1]["driver_exit_code"] == 1, result.attempts[1]
    assert result.resumed_from[1] > FAULT_AT, result.resumed_from
    assert f"stand-in run: resuming at step {result.resumed_from[1]} of {run.steps}" in result.logs
    assert f"{run.job}-a1 ended FAILED: starting attempt 2, resuming from the last checkpoint" in result.logs
    assert terminated_exit_code(result.pods[0]) == 1 and len(result.pods) == 2, result.logs[-4000:]


def set_unschedulable(release: PodRelease, cordoned: bool) -> None:
    release.core.patch_node(NODE, {"spec": {"unschedulable": cordoned}})


def test_the_workers_node_drained(release):
    """`kubectl drain` with one real node: cordon it and evict the worker pod (the one pod a GPU node of a real
    cluster holds) through the Eviction API with the pod's own grace period, as kubectl drain does by default. Ray
    drains the node and the run goes on through it; then attempt 1 fails. The new worker and the submitter's next
    pod stay Pending while the node is cordoned, and nothing is submitted; uncordoned, the cluster is whole again
    and attempt 2 resumes from the last checkpoint: one run, each attempt submitted once."""
    grace, drain = grace_seconds(release, "worker"), drain_seconds(release, "worker")
    run = start_run(release, "drain", steps_outlasting(grace))
    set_unschedulable(release, True)
    try:
        worker = release.worker
        struck_at = written_steps(run)
        release.core.create_namespaced_pod_eviction(worker, NAMESPACE, client.V1Eviction(
            metadata=client.V1ObjectMeta(name=worker, namespace=NAMESPACE)))
        release.wait_ray_job(f"{run.job}-a1", {"FAILED"}, timeout=grace + 180)
        processes.wait_for("the new worker Pending on the cordoned node",
                           lambda: release.pod("worker").status.phase == "Pending"
                           and release.pod("worker").metadata.name != worker, 120)
        time.sleep(30)
        assert f"{run.job}-a2" not in release.ray_jobs(), "submitted while the cluster lacked its worker"
        assert release.pod("worker").status.phase == "Pending"
    finally:
        set_unschedulable(release, False)
    result = outcome(release, run)
    assert_failed_then_resumed(result, run)
    assert_ran_on_through_the_drain(result, struck_at, drain)
    # One run: the head's job list holds this run's two attempts once each (and its preflights), nothing else.
    ours = sorted(i for i in release.ray_jobs() if i.startswith(run.job) and "-preflight-" not in i)
    assert ours == [f"{run.job}-a1", f"{run.job}-a2"], ours
    print_row(result, f"worker's node drained (cordon, evict the worker with its {grace}-s grace period; "
                      "uncordon after 30 s)")


def test_the_head_pod_deleted_mid_run(release):
    """Deleted with the pod's grace period: the head drains and the run goes on until its processes stop; without
    GCS fault tolerance the Ray job goes with the head: the submitter notices the new head does not know it,
    waits for the cluster to be whole again and starts attempt 2 from the last checkpoint."""
    grace, drain = grace_seconds(release, "head"), drain_seconds(release, "head")
    run = start_run(release, "head", steps_outlasting(grace))
    head = release.head
    struck_at = written_steps(run)
    release.core.delete_namespaced_pod(head, NAMESPACE)
    run.lost = head_lost(release, head, timeout=grace + 60)
    result = outcome(release, run)
    assert result.attempts[1]["status"] == "LOST"  # known only from before: the new head never had it
    assert_succeeded(result, run, attempts=2)
    assert release.head != head and raycluster_ready(release.api, NAMESPACE)
    assert result.resumed_from[1] > FAULT_AT, result.resumed_from
    assert f"the head does not know {run.job}-a1" in result.logs, result.logs
    assert f"{run.job}-a1 ended LOST: starting attempt 2, resuming from the last checkpoint" in result.logs
    assert len(result.pods) == 1  # the same submitter pod waited and submitted again
    assert_ran_on_through_the_drain(result, struck_at, drain)
    print_row(result, f"head pod deleted (its grace period, {grace} s; no GCS fault tolerance)")
