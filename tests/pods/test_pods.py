"""Tier 7: the release's containers on the local cluster's real node (kubelet, containerd with runc,
the CNI bridge, kube-proxy, CoreDNS, kube-router's NetworkPolicy firewall) with the image built here:
KubeRay's probes pass, Ray forms one cluster across the pods, the submitter submits through the head
Service and exits with the Ray job's outcome, `helm test`, `helm upgrade` and the pre-delete hook work
for real, Prometheus scrapes the pods with the config prometheus-operator makes of the release's
PodMonitors, and the NetworkPolicy keeps other namespaces out.

The tests share one release and run in file order: a later one starts from what an earlier one left."""

from __future__ import annotations

import json
import uuid

import pytest
import yaml
from kubernetes import client

from support import dashboards
from support.prometheus import prometheus_with_config
from support.podrelease import PodRelease, installed
from support.realnode import GPUS, VALUES, connects, python_in, ray_jobs
from lab.localcluster import processes
from lab.localcluster.monitoring import MONITORING, create_prometheus, delete_prometheus, generated_config, \
    start_prometheus_operator
from lab.localcluster.pods import containers_ready, run_in, terminated_exit_code
from lab.localcluster.realnode import NAME as NODE
from lab.localcluster.release import CHART, ray_pods, raycluster_ready, rayclusters
from lab.localcluster.runtime import IMAGE_BASE_NAMES
from support.tools import ROOT

RELEASE, NAMESPACE, OUTSIDER = "pods", "pods", "outsider"
MOUNT = "/data"  # global.storage.mountPath of the chart's defaults
HEAD_PORTS = [8265, 10001, 6379]  # dashboard, Ray client, GCS


@pytest.fixture(scope="module")
def release(pod_cluster):
    with installed(pod_cluster, RELEASE, NAMESPACE, ["-f", str(VALUES)], also_remove=(OUTSIDER,)) as r:
        yield r


def test_the_values_name_the_image_the_node_imported():
    values = yaml.safe_load(VALUES.read_text())["global"]["image"]
    ray_pin = next(line.split("==")[1].strip() for line in (ROOT / "requirements-test.txt").read_text().splitlines()
                   if line.startswith("ray[default]=="))
    assert f"docker.io/{values['repository']}" == IMAGE_BASE_NAMES["ray"]
    assert values["tag"] == ray_pin


def test_ray_containers_are_ready_through_kuberay_probes(release):
    for node_type in ("head", "worker"):
        pod = release.pod(node_type)
        assert pod.spec.node_name == NODE
        assert containers_ready(pod), pod.status
        ray = next(c for c in pod.spec.containers if c.name.startswith("ray-"))
        # KubeRay's own probes (it injects them): exec commands asking the raylet and, on the head, the GCS.
        for probe in (ray.readiness_probe, ray.liveness_probe):
            assert probe and probe._exec and "healthz" in " ".join(probe._exec.command), probe
        assert all(s.restart_count == 0 for s in pod.status.container_statuses), pod.status.container_statuses


def test_ray_status_shows_both_nodes_with_their_gpus(release):
    status = run_in(release.api, NAMESPACE, release.head, ["ray", "status"])
    assert status.code == 0, status.output
    assert f"0.0/{GPUS:.1f} GPU" in status.output, status.output
    nodes = python_in(release.api, NAMESPACE, release.head, """
        import json, ray
        ray.init(address="auto", logging_level="ERROR")
        print(json.dumps([[n["NodeManagerAddress"], n["Resources"].get("GPU", 0)] for n in ray.nodes() if n["Alive"]]))
    """)
    assert nodes.code == 0, nodes.output
    [alive] = [dict(json.loads(line)) for line in nodes.output.splitlines() if line.startswith("[[")]
    assert alive == {release.pod("head").status.pod_ip: 2.0, release.pod("worker").status.pod_ip: 2.0}
    # The worker found the head through the head Service's DNS name (KubeRay's --address), resolved by CoreDNS.
    worker = next(c for c in release.pod("worker").spec.containers if c.name.startswith("ray-"))
    command = " ".join(worker.command + worker.args)
    assert f"-head-svc.{NAMESPACE}.svc" in command, command


def test_the_tracing_hook_loads_on_every_ray_node(release):
    """Ray imports the hook (from the chart's ConfigMap, on PYTHONPATH) in every worker process of every node."""
    result = python_in(release.api, NAMESPACE, release.head, """
        import json, sys, ray
        from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy
        ray.init(address="auto", logging_level="ERROR")

        @ray.remote(num_cpus=0)
        def traced():
            from ray.util.tracing import tracing_helper
            return [ray.util.get_node_ip_address(), "verl_ppo_tracing" in sys.modules,
                    tracing_helper._is_tracing_enabled()]

        nodes = [n["NodeID"] for n in ray.nodes() if n["Alive"]]
        pinned = [traced.options(scheduling_strategy=NodeAffinitySchedulingStrategy(n, soft=False)).remote()
                  for n in nodes]
        print(json.dumps(ray.get(pinned, timeout=90)))
    """, timeout=150)
    assert result.code == 0, result.output
    # Ray may log a warning after the result (a raylet retrying the GCS under load): read the result's line.
    [seen] = [json.loads(line) for line in result.output.splitlines() if line.startswith("[[")]
    assert len(seen) == 2 and all(loaded and enabled for _, loaded, enabled in seen), seen


def test_the_shared_volume_shows_the_same_files_on_both_nodes(release):
    name = f"{MOUNT}/tier7-{uuid.uuid4().hex[:8]}"
    write = run_in(release.api, NAMESPACE, release.head, ["sh", "-c", f"echo from-head > {name}.head"])
    assert write.code == 0, write.output
    write = run_in(release.api, NAMESPACE, release.worker, ["sh", "-c", f"echo from-worker > {name}.worker"])
    assert write.code == 0, write.output
    for pod in (release.head, release.worker):
        read = run_in(release.api, NAMESPACE, pod, ["cat", f"{name}.head", f"{name}.worker"])
        assert read.code == 0 and read.output.split() == ["from-head", "from-worker"], (pod, read.output)


PREFLIGHT = CHART / "charts" / "ppo-job" / "files" / "preflight.py"


def set_worker_shared_volume(release: PodRelease, volume: dict) -> None:
    """Gives the worker group another shared-data volume and replaces the worker pod (KubeRay makes the new one)."""
    custom = client.CustomObjectsApi(release.api)
    cluster = release.pod("head").metadata.labels["ray.io/cluster"]
    body = custom.get_namespaced_custom_object("ray.io", "v1", NAMESPACE, "rayclusters", cluster)
    volumes = body["spec"]["workerGroupSpecs"][0]["template"]["spec"]["volumes"]
    volumes[:] = [v for v in volumes if v["name"] != "shared-data"] + [{"name": "shared-data", **volume}]
    custom.replace_namespaced_custom_object("ray.io", "v1", NAMESPACE, "rayclusters", cluster, body)
    old = release.worker
    release.core.delete_namespaced_pod(old, NAMESPACE, grace_period_seconds=0)
    # Ready means: the old pod gone, and Ray's view of its two nodes (the killed raylet is marked dead only
    # after missed health checks).
    processes.wait_for("the worker replaced and ready", lambda: old not in {p.metadata.name for p in ray_pods(
        release.api, NAMESPACE, RELEASE)} and raycluster_ready(release.api, NAMESPACE)
        and containers_ready(release.pod("worker")) and len(release.alive_ray_nodes()) == 2, 300, interval=2)


def test_the_preflight_names_the_node_whose_volume_differs(release):
    """A worker with a volume of its own (an emptyDir where the claim should be): the preflight fails and names it."""
    release.finished_job(release.submitter_jobs()[0].metadata.name)  # the install's run is not to see the change
    manifest = release.helm.run("get", "manifest", RELEASE, "--namespace", NAMESPACE).stdout
    job = next(d for d in yaml.safe_load_all(manifest) if d and d["kind"] == "Job")
    expected = next(e["value"] for e in job["spec"]["template"]["spec"]["containers"][0]["env"]
                    if e["name"] == "VERL_PPO_PREFLIGHT_EXPECTED")
    shared = next(v for v in release.pod("worker").spec.volumes if v.name == "shared-data")
    claim = shared.persistent_volume_claim.claim_name
    set_worker_shared_volume(release, {"emptyDir": {}})
    try:
        worker_ip = release.pod("worker").status.pod_ip
        result = run_in(release.api, NAMESPACE, release.head, ["python3", "-c", PREFLIGHT.read_text(), expected],
                        timeout=300)
        assert result.code == 1, result.output
        failed = next(line for line in result.output.splitlines() if line.startswith("preflight FAILED on:"))
        assert worker_ip in failed and release.worker in failed, result.output
        assert release.pod("head").status.pod_ip not in failed, result.output
        worker_row = next(line for line in result.output.splitlines() if line.startswith(worker_ip))
        assert "another volume" in worker_row, result.output
    finally:
        set_worker_shared_volume(release, {"persistentVolumeClaim": {"claimName": claim}})
        # The hand edit made this test a field manager of the RayCluster: Helm takes its fields back.
        release.upgrade("--force-conflicts")


def test_the_submitter_submits_through_the_service_and_exits_with_the_run(release):
    job = release.submitter_jobs()[-1]
    finished = release.finished_job(job.metadata.name)
    assert finished.status.succeeded == 1, finished.status
    [pod] = release.job_pods(job.metadata.name)
    assert terminated_exit_code(pod) == 0
    logs = release.core.read_namespaced_pod_log(pod.metadata.name, NAMESPACE)
    assert "stand-in driver: done, exiting 0" in logs, logs
    run = ray_jobs(release.api, NAMESPACE, release.head)[f"{job.metadata.name}-a1"]
    assert run["status"] == "SUCCEEDED" and run["driver_exit_code"] == 0, run
    dashboard = next(e.value for e in pod.spec.containers[0].env if e.name == "RAY_DASHBOARD_URL")
    assert dashboard.startswith(f"http://{release.pod('head').metadata.labels['ray.io/cluster']}-head-svc"), dashboard


def test_helm_test_passes(release):
    result = release.helm.run("test", RELEASE, "--namespace", NAMESPACE, "--logs", check=False, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr


# The PodMonitors' scrape interval for the test (their default, 30 s, is long to wait for).
SCRAPE_INTERVAL = "2s"
MONITOR_LABELS = {"app.kubernetes.io/instance": RELEASE, "app.kubernetes.io/component": "monitoring"}


def scraped(server) -> dict[tuple[str, str], str]:
    """Each active target's health by (pod, port name), as Prometheus's service discovery found them."""
    return {(t["labels"]["pod"], t["labels"]["endpoint"]): t["health"]
            for t in server.get("/api/v1/targets")["activeTargets"]}


def test_prometheus_scrapes_the_pods_through_the_operators_config_of_the_pod_monitors(release, tmp_path):
    """prometheus-operator (a local process) turns the release's PodMonitors into a Prometheus object's
    scrape config; the pinned Prometheus runs that config here unchanged, its Kubernetes discovery listing
    the pods through the local apiserver: every port the monitors name is up, and the dashboards' Cluster
    variable lists the release."""
    release.upgrade("--set", f"observability.podMonitor.interval={SCRAPE_INTERVAL}")
    start_prometheus_operator(release.cluster)
    create_prometheus(release.cluster, MONITOR_LABELS, [NAMESPACE])
    try:
        custom = client.CustomObjectsApi(release.api)
        monitors = custom.list_namespaced_custom_object(*MONITORING, NAMESPACE, "podmonitors")
        ports = {m["metadata"]["name"]: [e["port"] for e in m["spec"]["podMetricsEndpoints"]]
                 for m in monitors["items"]}
        jobs = {f"podMonitor/{NAMESPACE}/{name}/{index}"
                for name, names in ports.items() for index in range(len(names))}

        def scrape_jobs() -> set[str]:
            return {j["job_name"] for j in generated_config(release.api).get("scrape_configs", [])}

        processes.wait_for("the operator's scrape config for every PodMonitor endpoint", lambda: scrape_jobs() == jobs,
                           120, release.cluster.log("prometheus-operator"))
        config = generated_config(release.api)
        head, worker = release.head, release.worker
        expected = {(head, port): "up" for port in ports[f"{RELEASE}-ray-head"]}
        expected |= {(worker, port): "up" for port in ports[f"{RELEASE}-ray-worker"]}
        variable = next(q for q in dashboards.variable_queries(dashboards.DASHBOARDS / "default.json")
                        if q.where == "variable Cluster")
        with prometheus_with_config(tmp_path / "prometheus", config) as server:
            try:
                processes.wait_for("every monitored port scraped", lambda: scraped(server) == expected, 120, interval=2)
                processes.wait_for("the Cluster variable", lambda: server.label_values("ray_io_cluster", variable.expr),
                                   60, interval=2)
            except TimeoutError as error:
                raise AssertionError(f"{error}; targets {scraped(server)}") from None
            clusters = server.label_values("ray_io_cluster", variable.expr)
        assert clusters == [release.pod("head").metadata.labels["ray.io/cluster"]], clusters
        assert sorted(expected) == sorted({(head, "metrics"), (head, "as-metrics"), (head, "dash-metrics"),
                                           (worker, "metrics")})
    finally:
        delete_prometheus(release.cluster)


def test_the_network_policy_keeps_other_namespaces_out(release):
    core = release.core
    core.create_namespace({"metadata": {"name": OUTSIDER}})
    image = release.pod("head").spec.containers[0].image
    core.create_namespaced_pod(OUTSIDER, {"metadata": {"name": "probe"}, "spec": {
        "containers": [{"name": "probe", "image": image, "imagePullPolicy": "Never", "command": ["sleep", "3600"],
                        "resources": {"requests": {"cpu": "10m", "memory": "32Mi"}}}],
        "terminationGracePeriodSeconds": 0}})
    processes.wait_for("outsider pod running",
                       lambda: containers_ready(core.read_namespaced_pod("probe", OUTSIDER)), 120)
    head_ip = release.pod("head").status.pod_ip

    assert connects(release.api, NAMESPACE, release.worker, head_ip, HEAD_PORTS) == {p: True for p in HEAD_PORTS}
    assert connects(release.api, OUTSIDER, "probe", head_ip, HEAD_PORTS) == {p: False for p in HEAD_PORTS}

    release.upgrade("--set", "raycluster.networkPolicy.enabled=false")
    processes.wait_for("outsider reaches the head without the policy",
                       lambda: all(connects(release.api, OUTSIDER, "probe", head_ip, HEAD_PORTS).values()),
                       60, interval=2)
    release.upgrade()  # the policy back on, for what follows
    processes.wait_for("outsider kept out again",
                       lambda: not any(connects(release.api, OUTSIDER, "probe", head_ip, HEAD_PORTS).values()),
                       60, interval=2)


def test_an_upgrade_that_changes_the_run_supersedes_it_and_a_failed_run_fails_the_job(release):
    known = {j.metadata.name for j in release.submitter_jobs()}
    release.upgrade("--set-string", "ppo-job.runtimeEnv.env.STAND_IN_SECONDS=600")
    long_run = release.new_job_after(known)
    release.wait_ray_job(f"{long_run}-a1", {"RUNNING"})

    known.add(long_run)
    release.upgrade("--set-string", "ppo-job.runtimeEnv.env.STAND_IN_EXIT_CODE=3",
                    "--set", "ppo-job.submitter.maxAttempts=1", "--set", "ppo-job.submitter.backoffLimit=0")
    failing = release.new_job_after(known)
    assert release.wait_ray_job(f"{long_run}-a1", {"STOPPED", "SUCCEEDED", "FAILED"})["status"] == "STOPPED"
    finished = release.finished_job(failing)
    assert finished.status.failed == 1 and not finished.status.succeeded, finished.status
    run = ray_jobs(release.api, NAMESPACE, release.head)[f"{failing}-a1"]
    assert run["status"] == "FAILED" and run["driver_exit_code"] == 3, run
    assert terminated_exit_code(release.job_pod(failing)) == 1  # the submitter's code for a failed run


def test_uninstall_runs_the_pre_delete_hook_and_the_run_ends_stopped(release):
    known = {j.metadata.name for j in release.submitter_jobs()}
    # A run of its own (601 s): the 600 s one of the test before is a Job whose attempt 1 was stopped.
    release.upgrade("--set-string", "ppo-job.runtimeEnv.env.STAND_IN_SECONDS=601")
    running = f"{release.new_job_after(known)}-a1"
    release.wait_ray_job(running, {"RUNNING"})
    cluster = release.pod("head").metadata.labels["ray.io/cluster"]
    uninstall, seen = release.uninstall_watching(running)
    assert uninstall.returncode == 0, uninstall.stderr
    assert seen and seen[0] == "RUNNING" and seen[-1] == "STOPPED", seen
    assert cluster not in {c["metadata"]["name"] for c in rayclusters(release.api, NAMESPACE)}
