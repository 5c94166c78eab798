"""What `make demo` shows of a release on the local cluster: pods and their nodes, GPUs requested
against those available, the claim, the monitors and the Job."""

from __future__ import annotations

from kubernetes import client

from generator.quantity import cpu_millis, memory_bytes
from lab.localcluster.nodes import GPU_RESOURCE
from lab.localcluster.release import POD_MONITORS, release_pods


def _requested(pod: client.V1Pod, resource: str) -> int:
    return sum(int((c.resources.requests or {}).get(resource, 0)) for c in pod.spec.containers)


def release_report(api: client.ApiClient, namespace: str, release: str) -> str:
    core, batch = client.CoreV1Api(api), client.BatchV1Api(api)
    pods = sorted(release_pods(api, namespace, release), key=lambda pod: pod.metadata.name)
    lines = [f"Pods of release {release} (namespace {namespace}):",
             f"  {'pod':<44} {'phase':<10} {'node':<22} {'GPUs':>4}"]
    lines += [f"  {pod.metadata.name:<44} {pod.status.phase:<10} {pod.spec.node_name or '-':<22} "
              f"{_requested(pod, GPU_RESOURCE):>4}" for pod in pods]

    nodes = {pod.spec.node_name for pod in pods if pod.spec.node_name}
    lines.append("GPUs requested / allocatable, CPU and memory requested / allocatable, per node:")
    for node in sorted(core.list_node().items, key=lambda n: n.metadata.name):
        if node.metadata.name not in nodes:
            continue
        on_node = [pod for pod in pods if pod.spec.node_name == node.metadata.name]
        allocatable = node.status.allocatable
        cpu = sum(cpu_millis(c.resources.requests.get("cpu", "0")) for p in on_node for c in p.spec.containers)
        memory = sum(memory_bytes(c.resources.requests.get("memory", "0")) for p in on_node for c in p.spec.containers)
        lines.append(f"  {node.metadata.name:<22} GPUs {sum(_requested(p, GPU_RESOURCE) for p in on_node)}"
                     f"/{allocatable.get(GPU_RESOURCE, 0)}  "
                     f"CPU {cpu / 1000:g}/{cpu_millis(allocatable['cpu']) / 1000:g}"
                     f"  memory {memory / 2**30:.1f}/{memory_bytes(allocatable['memory']) / 2**30:.1f} GiB")

    for claim in core.list_namespaced_persistent_volume_claim(namespace).items:
        policy = (claim.metadata.annotations or {}).get("helm.sh/resource-policy", "-")
        lines.append(f"Claim {claim.metadata.name}: {claim.status.phase}, volume {claim.spec.volume_name}, "
                     f"{claim.spec.resources.requests['storage']} {','.join(claim.spec.access_modes)}, "
                     f"resource-policy {policy}")
    monitors = client.CustomObjectsApi(api).list_namespaced_custom_object(*POD_MONITORS[:2], namespace,
                                                                          POD_MONITORS[2])["items"]
    lines.append("PodMonitors: " + (", ".join(m["metadata"]["name"] for m in monitors) or "none"))
    for job in batch.list_namespaced_job(namespace).items:
        status = job.status
        lines.append(f"Job {job.metadata.name}: active {status.active or 0}, succeeded {status.succeeded or 0}, "
                     f"failed {status.failed or 0}")
    return "\n".join(lines)
