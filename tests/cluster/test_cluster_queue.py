"""Tier 6: the real Kueue controller (KUEUE_VERSION, built from its module) on the local cluster, with a
ResourceFlavor, a ClusterQueue whose GPU quota is 6 and a LocalQueue per namespace. Releases of the
a10-24g-x4 shape (4 GPUs each, 2 such nodes): the first runs, the second waits suspended with no pods
until the first is uninstalled (RayCluster mode) or finishes (RayJob mode); one without the queue label
runs at once, as without Kueue; one larger than the whole quota is refused by `helm install`, and its
objects applied by hand are never admitted."""

from __future__ import annotations

import time

import pytest
import yaml
from kubernetes import client

from support.cluster import wait_ready
from support.tools import helm_binaries
from lab.localcluster import processes
from lab.localcluster.kueue import KUEUE, condition, create_queue, start_kueue, stop_kueue, workloads
from lab.localcluster.release import CHART, RAY, ray_pods, rayclusters, rayjob

from generator import paths

SHAPE_VALUES = paths.VALUES_DIR / "a10-24g-x4.yaml"
QUOTA = 6
GPU = "nvidia.com/gpu"
RELEASE = "verl-ppo"


@pytest.fixture(scope="module")
def kueue(local_cluster):
    start_kueue(local_cluster.cluster)
    yield local_cluster
    stop_kueue(local_cluster.cluster)


@pytest.fixture
def helm(kueue):
    return kueue.helm(helm_binaries()["helm4"])


@pytest.fixture
def helm3(kueue):
    """Helm 3 for the upgrade rules' cases (they read the live object; the apply method is
    test_an_admitted_release_upgrades_under_helm_3_and_helm_4's)."""
    return kueue.helm(helm_binaries()["helm3"])


def queued(queue: str, *extra: str) -> list[str]:
    return ["-f", str(SHAPE_VALUES), "--set", f"raycluster.queue.kueue={queue}", *extra]


def reserved(api, namespace: str) -> dict:
    """The namespace's one Workload's QuotaReserved condition ({} until Kueue made the Workload)."""
    found = workloads(api, namespace)
    return condition(found[0], "QuotaReserved") if len(found) == 1 else {}


def wait_held_back(api, namespace: str) -> str:
    """Waits until Kueue decided the namespace's Workload must wait; returns why (its message)."""
    processes.wait_for(f"Kueue holds {namespace} back", lambda: reserved(api, namespace).get("status") == "False", 90)
    return reserved(api, namespace)["message"]


def delete_cluster_queue(api, name: str) -> None:
    client.CustomObjectsApi(api).delete_cluster_custom_object(*KUEUE, "clusterqueues", name)


def test_second_release_waits_until_the_first_is_uninstalled(kueue, helm):
    api = kueue.api
    with kueue.release_namespace(helm, RELEASE, "queue-a", queued("gpus")) as first, \
            kueue.release_namespace(helm, RELEASE, "queue-b", queued("gpus")) as second, \
            kueue.release_namespace(helm, RELEASE, "queue-free", ["-f", str(SHAPE_VALUES)]) as unqueued:
        create_queue(api, "gpus", [first, second], QUOTA, GPU)
        try:
            helm.run("install", RELEASE, str(CHART), "-n", first, *queued("gpus"))
            wait_ready(kueue, first)
            assert condition(workloads(api, first)[0], "Admitted")["status"] == "True"

            helm.run("install", RELEASE, str(CHART), "-n", second, *queued("gpus"))
            why = wait_held_back(api, second)
            assert GPU in why, why
            time.sleep(5)  # Kueue has decided; nothing may start meanwhile
            assert rayclusters(api, second)[0]["spec"]["suspend"] is True
            assert ray_pods(api, second, RELEASE) == []

            # Without the queue label Kueue leaves a release alone: it runs although the quota is spent.
            helm.run("install", RELEASE, str(CHART), "-n", unqueued, "-f", str(SHAPE_VALUES))
            wait_ready(kueue, unqueued)
            assert workloads(api, unqueued) == [] and "suspend" not in rayclusters(api, unqueued)[0]["spec"]

            helm.run("uninstall", RELEASE, "-n", first)
            wait_ready(kueue, second)
            assert len(ray_pods(api, second, RELEASE)) == 1
        finally:
            delete_cluster_queue(api, "gpus")


def test_release_larger_than_the_whole_quota_is_refused_and_never_admitted(kueue, helm):
    api = kueue.api
    big = queued("small", "--set", "global.gpu.nodes=2")  # 8 GPUs, the quota is 6
    with kueue.release_namespace(helm, RELEASE, "queue-big", big) as namespace:
        create_queue(api, "small", [namespace], QUOTA, GPU)
        try:
            refused = helm.run("install", RELEASE, str(CHART), "-n", namespace, *big, check=False)
            assert refused.returncode != 0
            assert "raycluster.queue.kueue=small" in refused.stderr, refused.stderr
            assert f"whole quota is {QUOTA} {GPU}: this release needs 8" in refused.stderr, refused.stderr

            # The same objects applied past the chart's check: Kueue never admits them.
            assert_never_admitted(helm, api, namespace, big)
        finally:
            delete_cluster_queue(api, "small")


def assert_never_admitted(helm, api, namespace: str, args: list[str]) -> None:
    """The release's RayCluster applied past the chart's quota check: Kueue holds it back for its GPUs and it stays
    suspended, with no Ray pod."""
    rendered = helm.run("template", RELEASE, str(CHART), "-n", namespace, *args).stdout
    cluster = next(d for d in yaml.safe_load_all(rendered) if d and d["kind"] == "RayCluster")
    client.CustomObjectsApi(api).create_namespaced_custom_object(*RAY[:2], namespace, RAY[2], cluster)
    why = wait_held_back(api, namespace)
    assert GPU in why, why
    time.sleep(5)
    assert rayclusters(api, namespace)[0]["spec"]["suspend"] is True
    assert ray_pods(api, namespace, RELEASE) == []


def with_pool(nodes: int) -> list[str]:
    """A rollout pool (issue 36) of `nodes` 2-GPU nodes of the seed's node type beside the a10 release's 4 GPUs."""
    return ["--set", "ppo-job.trainer.mode=separate_async", "--set", "ppo-job.rollout.finalOutputOnly=false",
            "--set", "global.rolloutPool.enabled=true",
            "--set", f"global.rolloutPool.nodes={nodes}", "--set", "global.rolloutPool.perNode=2",
            "--set", "raycluster.rolloutPool.nodeSelector.node\\.kubernetes\\.io/instance-type=seed-2gpu",
            "--set", "raycluster.rolloutPool.resources.cpu=30",
            "--set", "raycluster.rolloutPool.resources.memory=100Gi"]


def test_the_rollout_pool_is_admitted_with_training_as_one_unit(kueue, helm):
    """Kueue counts the pool's pods: 4 training GPUs and a pool of 2 fill the quota of 6 and start together; a pool
    of 4 more is refused by the chart and, applied past it, never admitted (without the pool's 4 it would be)."""
    api = kueue.api
    fits, too_big = queued("pool", *with_pool(1)), queued("pool-small", *with_pool(2))
    with kueue.release_namespace(helm, RELEASE, "queue-pool", fits) as namespace, \
            kueue.release_namespace(helm, RELEASE, "queue-pool-big", too_big) as big:
        create_queue(api, "pool", [namespace], QUOTA, GPU)
        create_queue(api, "pool-small", [big], QUOTA, GPU)
        try:
            helm.run("install", RELEASE, str(CHART), "-n", namespace, *fits)
            wait_ready(kueue, namespace)
            [workload] = workloads(api, namespace)
            assert condition(workload, "Admitted")["status"] == "True"
            counts = {podset["name"]: podset["count"] for podset in workload["spec"]["podSets"]}
            assert counts == {"head": 1, "workergroup": 0, "rolloutpool": 1} or \
                counts == {"head": 1, "rolloutpool": 1}, counts
            groups = sorted(pod.metadata.labels.get("ray.io/group") for pod in ray_pods(api, namespace, RELEASE))
            assert groups == ["headgroup", "rolloutpool"], groups

            refused = helm.run("install", RELEASE, str(CHART), "-n", big, *too_big, check=False)
            assert f"whole quota is {QUOTA} {GPU}: this release needs 8" in refused.stderr, refused.stderr
            assert_never_admitted(helm, api, big, too_big)
        finally:
            delete_cluster_queue(api, "pool")
            delete_cluster_queue(api, "pool-small")


def test_queued_rayjob_runs_when_the_first_finishes(kueue, helm):
    """Under kwok the submitter pod "exits 0" at once and no Ray job exists: KubeRay marks the RayJob
    Failed 30 s later and deletes its cluster, which frees the quota for the waiting one."""
    api = kueue.api
    args = queued("jobs", "--set", "global.mode=RayJob", "--set", "ppo-job.submitter.maxAttempts=1")
    with kueue.release_namespace(helm, RELEASE, "rayjob-a", args) as first, \
            kueue.release_namespace(helm, RELEASE, "rayjob-b", args) as second:
        create_queue(api, "jobs", [first, second], QUOTA, GPU)
        try:
            helm.run("install", RELEASE, str(CHART), "-n", first, *args)
            wait_ready(kueue, first)
            helm.run("install", RELEASE, str(CHART), "-n", second, *args)
            assert GPU in wait_held_back(api, second)
            assert rayjob(api, second, RELEASE)["spec"]["suspend"] is True and rayclusters(api, second) == []

            processes.wait_for("the first RayJob finished and its cluster deleted",
                               lambda: (rayjob(api, first, RELEASE).get("status", {}).get("jobDeploymentStatus")
                                        == "Failed" and not rayclusters(api, first)), 180)
            wait_ready(kueue, second)
            assert not rayjob(api, second, RELEASE)["spec"].get("suspend")
        finally:
            delete_cluster_queue(api, "jobs")


def test_an_upgrade_that_would_move_a_running_release_off_its_queue_is_refused(kueue, helm3):
    """Kueue (since 0.18) refuses to change or remove the queue label of a workload that runs; the chart's rule
    reads the live RayCluster (lookup) and refuses the upgrade first, naming the queue to keep, before Helm
    changes anything. An upgrade that keeps the queue goes through."""
    api = kueue.api
    with kueue.release_namespace(helm3, RELEASE, "queue-keep", queued("keep")) as namespace:
        create_queue(api, "keep", [namespace], QUOTA, GPU)
        try:
            helm3.run("install", RELEASE, str(CHART), "-n", namespace, *queued("keep"))
            wait_ready(kueue, namespace)
            for moved in ("", "other"):
                refused = helm3.run("upgrade", RELEASE, str(CHART), "-n", namespace, *queued(moved), check=False)
                assert refused.returncode != 0
                assert "LocalQueue keep: Kueue refuses to change or remove the queue label" in refused.stderr, \
                    refused.stderr
                assert "keep --set raycluster.queue.kueue=keep for this run" in refused.stderr, refused.stderr
            assert rayclusters(api, namespace)[0]["metadata"]["labels"]["kueue.x-k8s.io/queue-name"] == "keep"
            # What the rule anticipates: Kueue's own webhook refuses the label's removal from the running cluster.
            name = rayclusters(api, namespace)[0]["metadata"]["name"]
            with pytest.raises(client.ApiException) as kueue_refusal:
                client.CustomObjectsApi(api).patch_namespaced_custom_object(
                    *RAY[:2], namespace, RAY[2], name, {"metadata": {"labels": {"kueue.x-k8s.io/queue-name": None}}})
            assert "queue-name" in str(kueue_refusal.value.body), kueue_refusal.value.body
            helm3.run("upgrade", RELEASE, str(CHART), "-n", namespace, *queued("keep"),
                      "--set", "ppo-job.trainer.totalEpochs=2")
        finally:
            delete_cluster_queue(api, "keep")


def test_an_elastic_autoscaling_cluster_is_admitted_and_upgraded(kueue, helm3):
    """Kueue's elastic admission (raycluster.queue.elastic): Kueue admits the autoscaling RayCluster and its pods
    run; an upgrade keeps the scheduling gate that Kueue's validation requires; switching elastic admission off on
    the live cluster is refused by the chart's rule, as Kueue would refuse it."""
    api = kueue.api
    elastic = queued("elastic", "--set", "raycluster.queue.elastic=true",
                     "--set", "raycluster.worker.autoscaling.enabled=true",
                     "--set", "raycluster.worker.autoscaling.minReplicas=0",
                     "--set", "raycluster.worker.autoscaling.maxReplicas=1")
    with kueue.release_namespace(helm3, RELEASE, "queue-elastic", elastic) as namespace:
        create_queue(api, "elastic", [namespace], QUOTA, GPU)
        try:
            helm3.run("install", RELEASE, str(CHART), "-n", namespace, *elastic)
            wait_ready(kueue, namespace)
            assert condition(workloads(api, namespace)[0], "Admitted")["status"] == "True"
            helm3.run("upgrade", RELEASE, str(CHART), "-n", namespace, *elastic,
                      "--set", "ppo-job.trainer.totalEpochs=2")
            cluster = rayclusters(api, namespace)[0]
            assert cluster["spec"]["headGroupSpec"]["template"]["spec"]["schedulingGates"] == [
                {"name": "kueue.x-k8s.io/elastic-job"}]
            refused = helm3.run("upgrade", RELEASE, str(CHART), "-n", namespace, *elastic,
                               "--set", "raycluster.queue.elastic=false",
                               "--set", "raycluster.worker.autoscaling.enabled=false",
                               check=False)
            assert refused.returncode != 0 and "raycluster.queue.elastic" in refused.stderr, refused.stderr
        finally:
            delete_cluster_queue(api, "elastic")


def test_an_elastic_autoscaling_rayjob_is_admitted(kueue, helm3):
    """Kueue's elastic admission of a RayJob (issue 37: refused by the chart before): its RayJob webhook admits an
    autoscaling RayJob that carries kueue.x-k8s.io/elastic-job (and refuses one without, as the chart's rule does).
    Kueue admits the RayJob, gates the pods of the cluster KubeRay makes for it itself (the RayJob's spec carries
    no gate), and its pods run."""
    api = kueue.api
    args = queued("elastic-job", "--set", "global.mode=RayJob", "--set", "ppo-job.submitter.maxAttempts=1",
                  "--set", "raycluster.queue.elastic=true", "--set", "raycluster.worker.autoscaling.enabled=true",
                  "--set", "raycluster.worker.autoscaling.minReplicas=0",
                  "--set", "raycluster.worker.autoscaling.maxReplicas=1")
    with kueue.release_namespace(helm3, RELEASE, "rayjob-elastic", args) as namespace:
        create_queue(api, "elastic-job", [namespace], QUOTA, GPU)
        try:
            helm3.run("install", RELEASE, str(CHART), "-n", namespace, *args)
            wait_ready(kueue, namespace)
            job = rayjob(api, namespace, RELEASE)
            assert job["metadata"]["annotations"]["kueue.x-k8s.io/elastic-job"] == "true"
            assert condition(workloads(api, namespace)[0], "Admitted")["status"] == "True"
            assert "schedulingGates" not in job["spec"]["rayClusterSpec"]["headGroupSpec"]["template"]["spec"]
            head = rayclusters(api, namespace)[0]["spec"]["headGroupSpec"]["template"]["spec"]
            assert head["schedulingGates"] == [{"name": "kueue.x-k8s.io/elastic-job"}]
        finally:
            delete_cluster_queue(api, "elastic-job")


def pod_set_labels(cluster: dict) -> list[str | None]:
    """The pod-set label Kueue's admission writes into each pod template (head first, then each worker group)."""
    spec = cluster["spec"]
    templates = [spec["headGroupSpec"]["template"]] + [group["template"] for group in spec["workerGroupSpecs"]]
    return [template["metadata"].get("labels", {}).get("kueue.x-k8s.io/podset") for template in templates]


@pytest.mark.parametrize("version", ["helm3", "helm4"])
def test_an_admitted_release_upgrades_under_helm_3_and_helm_4(kueue, version):
    """Kueue admits the RayCluster by a patch that writes its pod sets into every pod template (the pod-set label,
    topology-aware scheduling's workload annotation, a flavor's node labels and tolerations); KubeRay v1.6.2's CRD
    declares no list type for .spec.workerGroupSpecs, so the whole list becomes Kueue's field. Helm 3 patches what
    the chart changed (a merge patch of its old and new manifests). Helm 4 applies server-side and, by default,
    refuses the list as a conflict with Kueue; with --server-side=false, as NOTES say, it upgrades as Helm 3 does,
    and the release keeps client-side apply on the next upgrade (--server-side=auto). Each upgrade changes the run
    (a new submitter Job) and leaves the cluster: Kueue's fields stay, the Workload stays admitted, the pods stay."""
    api, helm = kueue.api, kueue.helm(helm_binaries()[version])
    queue, args = f"upgrade-{version}", queued(f"upgrade-{version}")
    with kueue.release_namespace(helm, RELEASE, f"queue-upgrade-{version}", args) as namespace:
        create_queue(api, queue, [namespace], QUOTA, GPU)
        try:
            notes = helm.run("install", RELEASE, str(CHART), "-n", namespace, *args).stdout
            assert f"helm upgrade {RELEASE} <chart> -n {namespace} --server-side=false" in notes, notes
            wait_ready(kueue, namespace)
            [workload] = workloads(api, namespace)
            assert condition(workload, "Admitted")["status"] == "True"
            labels = pod_set_labels(rayclusters(api, namespace)[0])
            assert labels[0] == "head" and None not in labels, labels
            pods = sorted(p.metadata.name for p in ray_pods(api, namespace, RELEASE))
            jobs = {j.metadata.name for j in client.BatchV1Api(api).list_namespaced_job(namespace).items}

            upgrade = ["upgrade", RELEASE, str(CHART), "-n", namespace, *args]
            if version == "helm4":
                refused = helm.run(*upgrade, "--set", "ppo-job.trainer.totalEpochs=2", check=False)
                assert refused.returncode != 0
                assert "conflict" in refused.stderr and ".spec.workerGroupSpecs" in refused.stderr, refused.stderr
                print(f"\nhelm 4, server-side: {refused.stderr.strip().splitlines()[-1][:300]}")
                helm.run(*upgrade, "--set", "ppo-job.trainer.totalEpochs=2", "--server-side=false")
            else:
                helm.run(*upgrade, "--set", "ppo-job.trainer.totalEpochs=2")
            helm.run(*upgrade, "--set", "ppo-job.trainer.totalEpochs=3")  # helm 4: auto, the release's method

            assert pod_set_labels(rayclusters(api, namespace)[0]) == labels
            [still] = workloads(api, namespace)
            assert still["metadata"]["uid"] == workload["metadata"]["uid"]
            assert condition(still, "Admitted")["status"] == "True"
            assert sorted(p.metadata.name for p in ray_pods(api, namespace, RELEASE)) == pods
            now = {j.metadata.name for j in client.BatchV1Api(api).list_namespaced_job(namespace).items}
            assert now - jobs, "the changed run made no new submitter Job"
        finally:
            delete_cluster_queue(api, queue)
