"""Tier 4: the submitter when the Ray head goes. Without GCS fault tolerance a head's Ray jobs end with it:
the submitter notices the run is gone, waits for the cluster to be whole again, counts the attempt and
submits the next, which resumes after the last checkpoint; never two runs at once. A dashboard that does
not answer for a minute (its process stopped) is waited for, within a bound, and the same run followed on.

The stand-in run checkpoints a step at a time (support/stand_in_steps.py); its journal says which process
wrote each step, so a step written twice, a lost step, or two runs at once show there."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

from support.rayhead import dashboard_pid, free_port, join_worker, ray_head, stop_head
from support.stand_in_steps import read_journal as journal, wait_for_step
from support.submitter_run import GPUS, finish, jobs, start_submitter, stop, wait_for_status

STAND_IN_STEPS = Path(__file__).resolve().parents[1] / "support" / "stand_in_steps.py"


def steps_driver(tmp_path: Path, steps: int, pace: float) -> tuple[Path, Path]:
    """(the driver the Ray job runs, its checkpoint directory)."""
    checkpoints = tmp_path / "checkpoints"
    driver = tmp_path / "driver.py"
    driver.write_text(f"import runpy, sys\nsys.argv = ['', {str(checkpoints)!r}, '{steps}', '{pace}']\n"
                      f"runpy.run_path({str(STAND_IN_STEPS)!r}, run_name='__main__')\n")
    return driver, checkpoints


def test_head_lost_mid_run_starts_the_next_attempt_from_the_last_checkpoint(tmp_path, tmp_path_factory):
    prefix, dashboard_port, gcs_port = "headloss-ppo-job-0001", free_port(), free_port()
    driver, checkpoints = steps_driver(tmp_path, steps=8, pace=1.0)
    first, second = tmp_path_factory.mktemp("ray"), tmp_path_factory.mktemp("ray")  # short: Ray's socket paths
    with ray_head(first, gpus=GPUS, dashboard_port=dashboard_port, gcs_port=gcs_port) as url:
        process = start_submitter(url, tmp_path, prefix, driver=driver, attempts=3, timeout=300,
                                  dashboard_timeout_seconds="300")
        try:
            wait_for_status(url, prefix, "RUNNING")
            wait_for_step(checkpoints, 2)
            stop_head(first, gcs_port)  # the head and its Ray job gone, as a deleted head pod without GCS FT
            last_before = journal(checkpoints)[-1][0]
            # A new head, without the GPUs yet: the submitter must wait for them before it submits.
            with ray_head(second, gpus=0, dashboard_port=dashboard_port, gcs_port=gcs_port) as new_url:
                assert new_url == url
                time.sleep(5)
                assert jobs(url, prefix) == [], "submitted before the cluster had its GPUs back"
                join_worker(second, gcs_port, GPUS)
                code, output = finish(process)
                assert code == 0, output
                assert [j["submission_id"] for j in jobs(url, prefix)] == [f"{prefix}-a2"]
        finally:
            stop(process)
    assert f"the head does not know {prefix}-a1" in output, output
    assert f"{prefix}-a1 ended LOST: starting attempt 2, resuming from the last checkpoint" in output
    written = journal(checkpoints)
    assert [step for step, _ in written] == list(range(1, 9)), written  # no step lost, none written twice
    assert f"stand-in run: resuming at step {last_before + 1} of 8" in output
    assert len({pid for step, pid in written if step <= last_before}) == 1  # attempt 1's one driver
    assert {pid for step, pid in written if step > last_before}.isdisjoint(pid for _, pid in written[:last_before])


def test_lost_attempts_count_against_max_attempts(tmp_path, tmp_path_factory):
    prefix, dashboard_port, gcs_port = "lastloss-ppo-job-0001", free_port(), free_port()
    driver, checkpoints = steps_driver(tmp_path, steps=60, pace=1.0)
    first, second = tmp_path_factory.mktemp("ray"), tmp_path_factory.mktemp("ray")
    with ray_head(first, gpus=GPUS, dashboard_port=dashboard_port, gcs_port=gcs_port) as url:
        process = start_submitter(url, tmp_path, prefix, driver=driver, attempts=1, timeout=300)
        try:
            wait_for_step(checkpoints, 1)
            stop_head(first, gcs_port)
            with ray_head(second, gpus=GPUS, dashboard_port=dashboard_port, gcs_port=gcs_port):
                code, output = finish(process)
                assert jobs(url, prefix) == []
        finally:
            stop(process)
    assert code == 1 and f"{prefix}-a1 ended LOST and all 1 attempts are used" in output, output


def run_with_silent_dashboard(tmp_path, tmp_path_factory, prefix: str, steps: int, silent: float,
                              bound: str) -> str:
    """A run of `steps` checkpoints whose dashboard process is stopped (SIGSTOP: requests hang) for `silent`
    seconds after step 2. Asserts one submission only, one exit 0, each step written and printed once;
    returns the submitter's output."""
    driver, checkpoints = steps_driver(tmp_path, steps=steps, pace=1.0)
    temp_dir = tmp_path_factory.mktemp("ray")
    with ray_head(temp_dir, gpus=GPUS) as url:
        process = start_submitter(url, tmp_path, prefix, driver=driver, attempts=3, dashboard_timeout_seconds=bound)
        try:
            wait_for_step(checkpoints, 2)
            dashboard = dashboard_pid(temp_dir)
            os.kill(dashboard, signal.SIGSTOP)
            try:
                time.sleep(silent)
            finally:
                os.kill(dashboard, signal.SIGCONT)
            code, output = finish(process)
        finally:
            stop(process)
        assert code == 0, output
        assert [j["submission_id"] for j in jobs(url, prefix)] == [f"{prefix}-a1"]
    for step in range(1, steps + 1):
        assert output.count(f"stand-in run: step {step} checkpointed\n") == 1, step
    assert [step for step, _ in journal(checkpoints)] == list(range(1, steps + 1))
    return output


def test_a_dashboard_silent_for_a_minute_is_waited_for_and_the_run_followed_on(tmp_path, tmp_path_factory):
    """Stopped for 60 s, within the bound (120 s here): the submitter waits, then follows the same Ray job."""
    prefix = "silent-ppo-job-0001"
    output = run_with_silent_dashboard(tmp_path, tmp_path_factory, prefix, steps=75, silent=60, bound="120")
    assert "dashboard not answering" in output and "waiting up to 120s" in output, output
    assert f"following {prefix}-a1" in output and "re-attaching" not in output


def test_a_dashboard_silent_past_its_bound_is_reattached_when_the_head_kept_the_run(tmp_path, tmp_path_factory):
    """Past the bound the head counts as lost, but the run is submitted again only if the answering head
    does not have it: this head still runs attempt 1, so the submitter re-attaches to it. Silent for 70 s: a
    request waits 30 s before it fails, so the second failure (past the 5 s bound) comes at about 60 s."""
    prefix = "bound-ppo-job-0001"
    output = run_with_silent_dashboard(tmp_path, tmp_path_factory, prefix, steps=100, silent=70, bound="5")
    assert "the dashboard did not answer for 5s" in output and f"re-attaching to {prefix}-a1 (RUNNING)" in output
