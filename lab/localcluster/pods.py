"""Looking into the real node's pods: a command run in a container (through the apiserver and the
kubelet, as kubectl exec), a pod's logs, and the state of its containers."""

from __future__ import annotations

from dataclasses import dataclass

from kubernetes import client
from kubernetes.stream import stream


@dataclass(frozen=True)
class Executed:
    code: int
    output: str


def run_in(api: client.ApiClient, namespace: str, pod: str, command: list[str], container: str | None = None,
           timeout: float = 120) -> Executed:
    """Runs command in the pod's (first, or named) container; its exit status and its stdout and stderr."""
    core = client.CoreV1Api(api)
    options = {"container": container} if container else {}
    session = stream(core.connect_get_namespaced_pod_exec, pod, namespace, command=command, stdout=True,
                     stderr=True, stdin=False, tty=False, _preload_content=False, **options)
    session.run_forever(timeout=timeout)
    output = (session.read_stdout() or "") + (session.read_stderr() or "")
    if session.is_open():
        session.close()
        return Executed(-1, output + f"\n(still running after {timeout:.0f}s)")
    return Executed(session.returncode, output)


def containers_ready(pod: client.V1Pod) -> bool:
    statuses = pod.status.container_statuses or []
    return pod.status.phase == "Running" and bool(statuses) and all(s.ready for s in statuses)


def terminated_exit_code(pod: client.V1Pod) -> int | None:
    """The exit status of the pod's first container once it has ended, else None."""
    for status in pod.status.container_statuses or []:
        if status.state and status.state.terminated:
            return status.state.terminated.exit_code
    return None
