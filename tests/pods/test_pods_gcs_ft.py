"""Tier 7: KubeRay's GCS fault tolerance (raycluster.gcsFaultTolerance) with a real Redis (Debian's
redis-server on the real node's bridge address, with a password the head gets from a Secret). The head pod
deleted mid-run: the worker pod stays (same pod, no restart) and the new head has the whole cluster again.
Ray 2.49's job driver runs on the head (the submitter asks for no entrypoint resources), so the run's driver
dies with the head; the Jobs API's record survives in Redis and the new head goes on calling it RUNNING
(measured: still RUNNING 5 min later). The submitter sees that the driver's node is gone once the dashboard
answers again, counts the attempt as lost and, in the same pod, starts attempt 2 from the last checkpoint."""

from __future__ import annotations

import dataclasses
import time

import pytest
from kubernetes import client

from support.faultrun import FAULT_AT, LONG_STEPS, STAND_IN_VALUES, STEPS, assert_succeeded, copy_stand_ins, \
    most_at_once, outcome, print_row, run_sets, start_run
from support.podrelease import installed
from support.redisserver import redis_on_the_node
from lab.localcluster import processes
from lab.localcluster.release import raycluster_ready

RELEASE, NAMESPACE, SECRET = "gcsft", "gcsft", "redis-auth"


@pytest.fixture(scope="module")
def redis(pod_cluster, tmp_path_factory):
    with redis_on_the_node(tmp_path_factory.mktemp("redis")) as server:
        yield server


@pytest.fixture(scope="module")
def release(pod_cluster, redis):
    def before_install(volume):
        copy_stand_ins(volume)
        client.CoreV1Api(pod_cluster.api).create_namespaced_secret(NAMESPACE, {
            "metadata": {"name": SECRET}, "stringData": {"password": redis.password}})

    ft = ["--set", "raycluster.gcsFaultTolerance.enabled=true",
          "--set", f"raycluster.gcsFaultTolerance.redisAddress={redis.address}",
          "--set", f"raycluster.gcsFaultTolerance.passwordSecret.secretName={SECRET}"]
    with installed(pod_cluster, RELEASE, NAMESPACE, STAND_IN_VALUES + ft + run_sets("install", STEPS),
                   before_install=before_install) as r:
        yield r


def test_the_head_keeps_its_state_in_redis(release, redis):
    release.finished_job(release.submitter_jobs()[0].metadata.name, timeout=300)
    assert redis.keys(), "the GCS wrote nothing to Redis"


def test_the_head_pod_deleted_the_worker_stays_and_the_run_resumes(release):
    run = start_run(release, "head-ft", LONG_STEPS)
    head, worker = release.pod("head"), release.pod("worker")
    worker_node = {i for i, ip in release.alive_ray_nodes().items() if ip == worker.status.pod_ip}
    deleted_at = time.time() * 1000
    release.core.delete_namespaced_pod(head.metadata.name, NAMESPACE)
    processes.wait_for("a new head, the cluster ready", lambda: release.head != head.metadata.name
                       and raycluster_ready(release.api, NAMESPACE), 300, interval=2)
    result = outcome(release, run)
    # The worker stayed: the same pod, never restarted, the same Ray node in the new head's cluster.
    still = release.pod("worker")
    assert still.metadata.name == worker.metadata.name
    assert all(s.restart_count == 0 for s in still.status.container_statuses), still.status.container_statuses
    assert worker_node <= set(release.alive_ray_nodes()), "the worker's Ray node did not stay in the cluster"
    # The new head knew attempt 1 (its record in Redis), its driver gone with the old head's node.
    first = result.attempts[1]
    assert first["driver_node_id"] not in release.alive_ray_nodes(), first
    assert f"{run.job}-a1's driver ran on node {first['driver_node_id'][:12]}, which is gone" in result.logs
    assert f"{run.job}-a1 ended LOST: starting attempt 2" in result.logs and len(result.pods) == 1
    # Runs at once: attempt 1's driver ended with its head, whatever its record says.
    ended = {**first, "status": f"LOST (record {first['status']})",
             "end_time": min(first["end_time"] or deleted_at, deleted_at)}
    result = dataclasses.replace(result, attempts={**result.attempts, 1: ended},
                                 at_once=most_at_once([ended, result.attempts[2]]))
    assert_succeeded(result, run, attempts=2)
    assert result.resumed_from[1] > FAULT_AT, result.resumed_from
    print(f"\ngcs fault tolerance: attempt 1's record {first['status']}: {first.get('message')!r}")
    print_row(result, "head pod deleted, GCS fault tolerance (Redis)")
