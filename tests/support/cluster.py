"""The local cluster for test tier 6: one per test session, nodes of every catalog shape at once
(so the scheduler must pick the right ones) and a CPU node, a namespace per case."""

from __future__ import annotations

from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

from kubernetes import client

from generator.catalog import load_catalog
from lab.localcluster import processes
from lab.localcluster.cluster import LocalCluster
from lab.localcluster.nodes import create_cpu_node, create_nodes, ready_nodes
from lab.localcluster.parts import parts
from lab.localcluster.release import POD_MONITORS, RAY, RAY_JOBS, Helm, create_namespace, prepare, raycluster_ready

# Namespace whose Pod Security level is `restricted`: pods are dry-run created there to show they pass it.
RESTRICTED_NAMESPACE = "pss-restricted"


@dataclass
class TestCluster:
    cluster: LocalCluster
    api: client.ApiClient
    nodes: dict[str, list[str]]  # shape name -> its node names
    cpu_node: str

    def helm(self, binary: Path) -> Helm:
        return Helm(binary, self.cluster.kubeconfig)

    @contextmanager
    def release_namespace(self, helm: Helm, release: str, namespace: str, values_args: list[str],
                          enforce: str = "baseline") -> Iterator[str]:
        """A namespace (and the volume for the release's claim) removed with all it holds afterwards."""
        prepare(self.api, helm, release, namespace, values_args, enforce)
        try:
            yield namespace
        finally:
            core = client.CoreV1Api(self.api)
            helm.run("uninstall", release, "--namespace", namespace, "--no-hooks", check=False)
            core.delete_namespace(namespace)
            for volume in core.list_persistent_volume().items:
                if volume.spec.claim_ref and volume.spec.claim_ref.namespace == namespace:
                    core.delete_persistent_volume(volume.metadata.name)
            # The next case may need these nodes: wait until the namespace's pods are gone.
            processes.wait_for(f"pods of {namespace} deleted",
                               lambda: not core.list_namespaced_pod(namespace).items, 120)


def start_test_cluster(state: Path) -> TestCluster:
    """Nodes for each shape: twice its default count, room for the upgrade that doubles the training nodes."""
    cluster = LocalCluster(state, parts()).start()
    try:
        api = cluster.api()
        nodes = {shape.name: create_nodes(api, shape, 2 * shape.default_nodes)
                 for shape in load_catalog().shapes.values()}
        cpu_node = create_cpu_node(api)
        every = [cpu_node, *(name for names in nodes.values() for name in names)]
        processes.wait_for("kwok nodes Ready", lambda: ready_nodes(api, every), 120, cluster.log("kwok"))
        create_namespace(api, RESTRICTED_NAMESPACE, enforce="restricted")
        return TestCluster(cluster, api, nodes, cpu_node)
    except BaseException:
        cluster.stop()
        raise


def warnings(api: client.ApiClient, namespace: str) -> str:
    """The namespace's Warning events, one a line: why pods were refused or not scheduled."""
    events = client.CoreV1Api(api).list_namespaced_event(namespace, field_selector="type=Warning").items
    return "\n".join(f"{e.involved_object.kind}/{e.involved_object.name}: {e.reason}: {e.message}" for e in events)


def wait_ready(test_cluster: TestCluster, namespace: str, timeout: float = 180) -> float:
    try:
        return processes.wait_for(f"RayCluster in {namespace} ready",
                                  lambda: raycluster_ready(test_cluster.api, namespace), timeout)
    except TimeoutError as error:
        raise AssertionError(f"{error}; warnings:\n{warnings(test_cluster.api, namespace)}") from None


def leftovers(api: client.ApiClient, namespace: str) -> list[str]:
    """Every object in the namespace but those Kubernetes itself puts in each one."""
    core, custom = client.CoreV1Api(api), client.CustomObjectsApi(api)
    found = [f"Pod/{o.metadata.name}" for o in core.list_namespaced_pod(namespace).items]
    found += [f"Service/{o.metadata.name}" for o in core.list_namespaced_service(namespace).items]
    found += [f"ConfigMap/{o.metadata.name}" for o in core.list_namespaced_config_map(namespace).items
              if o.metadata.name != "kube-root-ca.crt"]
    found += [f"Secret/{o.metadata.name}" for o in core.list_namespaced_secret(namespace).items]
    found += [f"ServiceAccount/{o.metadata.name}" for o in core.list_namespaced_service_account(namespace).items
              if o.metadata.name != "default"]
    found += [f"PersistentVolumeClaim/{o.metadata.name}"
              for o in core.list_namespaced_persistent_volume_claim(namespace).items]
    found += [f"Job/{o.metadata.name}" for o in client.BatchV1Api(api).list_namespaced_job(namespace).items]
    apps, rbac = client.AppsV1Api(api), client.RbacAuthorizationV1Api(api)
    found += [f"Deployment/{o.metadata.name}" for o in apps.list_namespaced_deployment(namespace).items]
    found += [f"ReplicaSet/{o.metadata.name}" for o in apps.list_namespaced_replica_set(namespace).items]
    found += [f"Role/{o.metadata.name}" for o in rbac.list_namespaced_role(namespace).items]
    found += [f"RoleBinding/{o.metadata.name}" for o in rbac.list_namespaced_role_binding(namespace).items]
    found += [f"NetworkPolicy/{o.metadata.name}"
              for o in client.NetworkingV1Api(api).list_namespaced_network_policy(namespace).items]
    found += [f"Ingress/{o.metadata.name}"
              for o in client.NetworkingV1Api(api).list_namespaced_ingress(namespace).items]
    for group, version, plural in (RAY, RAY_JOBS, POD_MONITORS):
        found += [f"{plural}/{o['metadata']['name']}"
                  for o in custom.list_namespaced_custom_object(group, version, namespace, plural)["items"]]
    return sorted(found)


def dry_run_restricted(api: client.ApiClient, pod: client.V1Pod) -> None:
    """Creates (dry run) the pod's spec in the `restricted` namespace: the apiserver's PodSecurity
    admission refuses it with 403 if it does not meet that level."""
    spec = api.sanitize_for_serialization(pod.spec)
    # Pod Security reads neither the node nor the ServiceAccount; the account exists only in the release's namespace.
    for field in ("nodeName", "serviceAccountName", "serviceAccount"):
        spec.pop(field, None)
    client.CoreV1Api(api).create_namespaced_pod(
        RESTRICTED_NAMESPACE,
        {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": pod.metadata.name}, "spec": spec},
        dry_run="All")
