"""A release of the chart on the real node's cluster (tier 7): installed into a namespace of its own,
asked for its pods, Jobs and Ray jobs, and removed with everything it left (namespaces, volumes)."""

from __future__ import annotations

import json
import shutil
import subprocess
import threading
import time
import urllib.request
from contextlib import contextmanager
from pathlib import Path
from typing import Callable, Iterator

import yaml
from kubernetes import client

from support.realnode import PodCluster, python_in, ray_jobs
from lab.localcluster import processes
from lab.localcluster.realnode import pod_pids
from lab.localcluster.release import CHART, claim_volume_path, plant_inputs, prepare, ray_pods, raycluster_ready


class PodRelease:
    def __init__(self, pod_cluster: PodCluster, name: str, namespace: str, values_args: list[str]) -> None:
        self.cluster, self.api, self.helm = pod_cluster.cluster, pod_cluster.api, pod_cluster.helm()
        self.name, self.namespace, self.values_args = name, namespace, values_args
        self.core, self.batch = client.CoreV1Api(self.api), client.BatchV1Api(self.api)
        self.volume = Path()  # the directory behind the release's claim on this machine, once installed

    def upgrade(self, *sets: str) -> None:
        self.helm.run("upgrade", self.name, str(CHART), "--namespace", self.namespace, *self.values_args, *sets)

    def pod(self, node_type: str) -> client.V1Pod:
        pods = [p for p in ray_pods(self.api, self.namespace, self.name)
                if p.metadata.labels["ray.io/node-type"] == node_type and not p.metadata.deletion_timestamp]
        assert len(pods) == 1, [p.metadata.name for p in pods]
        return pods[0]

    @property
    def head(self) -> str:
        return self.pod("head").metadata.name

    @property
    def worker(self) -> str:
        return self.pod("worker").metadata.name

    def restart_counts(self) -> dict[str, int]:
        """The Ray pods' container restarts, by pod name."""
        pods = map(self.pod, ("head", "worker"))
        return {p.metadata.name: p.status.container_statuses[0].restart_count for p in pods}

    def process(self, node_type: str, part: str) -> int:
        """The pid, on this machine, of the one process of the node type's pod whose command line holds `part`."""
        found = [pid for pid in pod_pids(self.pod(node_type).metadata.uid) if part in processes.command_line(pid)]
        assert len(found) == 1, (part, found)
        return found[0]

    def submitter_jobs(self) -> list[client.V1Job]:
        selector = "app.kubernetes.io/component=ppo-job"
        jobs = self.batch.list_namespaced_job(self.namespace, label_selector=selector).items
        return sorted(jobs, key=lambda job: job.metadata.creation_timestamp)

    def finished_job(self, name: str, timeout: float = 240) -> client.V1Job:
        """The Job once it is Complete or Failed (a failed pod alone is not the end: the Job may retry it)."""
        def done() -> bool:
            conditions = self.batch.read_namespaced_job(name, self.namespace).status.conditions or []
            return any(c.type in ("Complete", "Failed") and c.status == "True" for c in conditions)
        processes.wait_for(f"Job {name} finished", done, timeout)
        return self.batch.read_namespaced_job(name, self.namespace)

    def job_pods(self, name: str) -> list[client.V1Pod]:
        """The Job's pods, oldest first."""
        selector = f"batch.kubernetes.io/job-name={name}"
        pods = self.core.list_namespaced_pod(self.namespace, label_selector=selector).items
        return sorted(pods, key=lambda pod: pod.metadata.creation_timestamp)

    def job_pod(self, name: str) -> client.V1Pod:
        return self.job_pods(name)[0]

    def ray_jobs(self) -> dict[str, dict]:
        return ray_jobs(self.api, self.namespace, self.head)

    def ray_jobs_of(self, head: str, patience: float = 120) -> dict[str, dict]:
        """The Ray jobs as this head pod reports them (one that is going, too)."""
        return ray_jobs(self.api, self.namespace, head, patience)

    def alive_ray_nodes(self) -> dict[str, str]:
        """Ray's alive nodes as the head sees them, by node id: their addresses."""
        result = python_in(self.api, self.namespace, self.head, """
            import json, ray
            ray.init(address="auto", logging_level="ERROR")
            print(json.dumps({n["NodeID"]: n["NodeManagerAddress"] for n in ray.nodes() if n["Alive"]}))
        """)
        assert result.code == 0, result.output
        # Ray 2.60 may log a line after the result (as ray_jobs' callers see too): read the result's line.
        return json.loads([line for line in result.output.splitlines() if line.startswith("{")][-1])

    def wait_ray_job(self, submission_id: str, statuses: set[str], timeout: float = 120) -> dict:
        processes.wait_for(f"Ray job {submission_id} {statuses}",
                           lambda: self.ray_jobs().get(submission_id, {}).get("status") in statuses,
                           timeout, interval=1)
        return self.ray_jobs()[submission_id]

    def new_job_after(self, known: set[str]) -> str:
        processes.wait_for("a new submitter Job", lambda: {j.metadata.name for j in self.submitter_jobs()} - known, 60)
        return next(j.metadata.name for j in self.submitter_jobs() if j.metadata.name not in known)

    def uninstall_watching(self, submission_id: str, headers: dict[str, str] | None = None,
                           ) -> tuple[subprocess.CompletedProcess, list[str]]:
        """`helm uninstall --wait` while the head's dashboard is asked for the Ray job's status every 0.3 s: the
        head goes with the release, so the last status it gave is the run's verdict. Returns helm's result and
        the statuses seen, in order."""
        request = urllib.request.Request(f"http://{self.pod('head').status.pod_ip}:8265/api/jobs/{submission_id}",
                                         headers=headers or {})
        seen: list[str] = []
        stop = threading.Event()

        def watch() -> None:
            while not stop.is_set():
                try:
                    with urllib.request.urlopen(request, timeout=2) as response:
                        seen.append(yaml.safe_load(response.read())["status"])
                except (OSError, ValueError):
                    pass
                time.sleep(0.3)

        watcher = threading.Thread(target=watch, daemon=True)
        watcher.start()
        try:
            uninstall = self.helm.run("uninstall", self.name, "--namespace", self.namespace, "--wait", check=False,
                                      timeout=300)
        finally:
            stop.set()
            watcher.join()
        return uninstall, seen


@contextmanager
def installed(pod_cluster: PodCluster, name: str, namespace: str, values_args: list[str],
              also_remove: tuple[str, ...] = (),
              before_install: Callable[[Path], None] = lambda volume: None) -> Iterator[PodRelease]:
    """The release installed (before_install given the directory behind its claim first) and its RayCluster
    ready; afterwards uninstalled (no hooks) and its namespace, those in also_remove, its volume and that
    directory gone."""
    release = PodRelease(pod_cluster, name, namespace, values_args)
    prepare(release.api, release.helm, name, namespace, values_args)
    try:
        # The directory outlives the machine's clusters: a run interrupted before its teardown (a killed
        # session, a timed-out wait) leaves stand-ins and checkpoints there, which the next run would resume.
        shutil.rmtree(claim_volume_path(namespace, release.helm.claim(name, namespace, *values_args)[0]),
                      ignore_errors=True)
        volume = release.volume = plant_inputs(release.helm, name, namespace, values_args)
        before_install(volume)
        started = time.monotonic()
        release.helm.run("install", name, str(CHART), "--namespace", namespace, *values_args)
        processes.wait_for("RayCluster ready with real pods", lambda: raycluster_ready(release.api, namespace), 600,
                           interval=2)
        print(f"\ntier 7: RayCluster of {name} ready {time.monotonic() - started:.0f}s after helm install")
        yield release
    finally:
        remove(release, (namespace, *also_remove))


def remove(release: PodRelease, namespaces: tuple[str, ...]) -> None:
    release.helm.run("uninstall", release.name, "--namespace", release.namespace, "--no-hooks", check=False)
    for namespace in namespaces:
        try:
            release.core.delete_namespace(namespace)
        except client.ApiException:
            pass
    # The pods go at once, each deleted with no grace period (the namespace's deletion would give every Ray pod its
    # grace period, half a minute and more of Ray's drain a release: not what a teardown tests), their processes
    # killed, before the next release starts on the node.
    uids: set[str] = set()

    def gone() -> bool:
        left = [p for n in namespaces for p in release.core.list_namespaced_pod(n).items]
        for pod in left:
            uids.add(pod.metadata.uid)
            if pod.metadata.deletion_grace_period_seconds != 0:
                release.core.delete_namespaced_pod(pod.metadata.name, pod.metadata.namespace, grace_period_seconds=0)
        if left:
            return False
        running = [pid for uid in uids for pid in pod_pids(uid)]
        for pid in running:  # the kubelet may give a pod deleted at once a grace period still: ended here
            processes.kill(pid)
        return not running

    try:
        processes.wait_for("pods deleted", gone, 180, interval=1)
    finally:
        for pv in release.core.list_persistent_volume().items:
            if pv.spec.claim_ref and pv.spec.claim_ref.namespace == release.namespace:
                release.core.delete_persistent_volume(pv.metadata.name)
        if release.volume != Path():
            shutil.rmtree(release.volume, ignore_errors=True)
