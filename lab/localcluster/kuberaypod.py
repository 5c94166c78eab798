"""KubeRay's operator as a pod on the real node, where a cluster runs it (its own namespace, the labels
KubeRay's chart gives it, in-cluster credentials), in place of the local process the cluster starts: its
calls to a head then leave from a pod address, which the release's NetworkPolicy must admit (kube-router
lets the node's own processes through to its pods whatever the policy says).

The apiserver listens on 127.0.0.1 only, so the pod reaches it as pods do elsewhere, through the
`kubernetes` Service (10.96.0.1, in the apiserver's certificate): its endpoint is a relay on the node's
bridge address that passes each connection on to the apiserver."""

from __future__ import annotations

import socket
import threading
from contextlib import contextmanager
from typing import Iterator

from kubernetes import client

from lab.localcluster import hostnet, processes
from lab.localcluster.cluster import OPERATOR_FLAGS, LocalCluster
from lab.localcluster.pods import containers_ready
from lab.localcluster.realnode import NAME as NODE

# Where KubeRay's guide installs its chart (no --namespace), and the labels the chart gives the pod.
NAMESPACE = "default"
NAME = "kuberay-operator"
POD_LABELS = {"app.kubernetes.io/name": "kuberay-operator", "app.kubernetes.io/component": "kuberay-operator",
              "app.kubernetes.io/instance": "kuberay-operator"}
PROBE_PORT = 8082
BINARY_IN_POD = "/kuberay/kuberay-operator"


class Relay:
    """Passes every TCP connection made to the bridge address's port on to 127.0.0.1:upstream_port."""

    def __init__(self, upstream_port: int) -> None:
        self.upstream_port = upstream_port
        self.listener = socket.create_server((hostnet.NODE_IP, 0))
        self.port = self.listener.getsockname()[1]
        self.closed = threading.Event()
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while not self.closed.is_set():
            try:
                downstream, _ = self.listener.accept()
            except OSError:
                return
            try:
                upstream = socket.create_connection(("127.0.0.1", self.upstream_port), timeout=10)
            except OSError:
                downstream.close()
                continue
            upstream.settimeout(None)
            for source, target in ((downstream, upstream), (upstream, downstream)):
                threading.Thread(target=_pump, args=(source, target), daemon=True).start()

    def close(self) -> None:
        self.closed.set()
        self.listener.close()


def _pump(source: socket.socket, target: socket.socket) -> None:
    try:
        while chunk := source.recv(65536):
            target.sendall(chunk)
    except OSError:
        pass
    finally:
        for sock in (source, target):
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass


def _apiserver_endpoint(relay_port: int) -> dict:
    """The `kubernetes` Service's endpoints (the apiserver's reconciler is off here: it has none)."""
    return {"apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
            "metadata": {"name": "kubernetes-relay", "namespace": "default",
                         "labels": {"kubernetes.io/service-name": "kubernetes",
                                    "endpointslice.kubernetes.io/managed-by": "verl-ppo-lab"}},
            "addressType": "IPv4", "endpoints": [{"addresses": [hostnet.NODE_IP], "conditions": {"ready": True}}],
            "ports": [{"name": "https", "port": relay_port, "protocol": "TCP"}]}


def _operator_pod(image: str, binary: str) -> dict:
    return {"metadata": {"name": NAME, "labels": POD_LABELS}, "spec": {
        "nodeName": NODE, "serviceAccountName": NAME, "terminationGracePeriodSeconds": 5,
        "containers": [{
            "name": NAME, "image": image, "imagePullPolicy": "Never", "command": [BINARY_IN_POD],
            "args": ["--enable-leader-election=false", "--metrics-addr=0",
                     f"--health-probe-bind-address=:{PROBE_PORT}", "--log-stdout-encoder=console", *OPERATOR_FLAGS],
            "readinessProbe": {"httpGet": {"path": "/readyz", "port": PROBE_PORT}, "periodSeconds": 2},
            "resources": {"requests": {"cpu": "100m", "memory": "128Mi"}},
            "volumeMounts": [{"name": "operator", "mountPath": BINARY_IN_POD, "readOnly": True}]}],
        "volumes": [{"name": "operator", "hostPath": {"path": binary, "type": "File"}}]}}


@contextmanager
def operator_in_a_pod(cluster: LocalCluster, api: client.ApiClient, image: str) -> Iterator[str]:
    """Replaces the operator's process by the pod (its name yielded) until the block ends, then brings the
    process back."""
    core, rbac, discovery = client.CoreV1Api(api), client.RbacAuthorizationV1Api(api), client.DiscoveryV1Api(api)
    relay = Relay(int(cluster.apiserver_url.rsplit(":", 1)[1]))
    cluster.stop_operator()
    try:
        discovery.create_namespaced_endpoint_slice("default", _apiserver_endpoint(relay.port))
        core.create_namespaced_service_account(NAMESPACE, {"metadata": {"name": NAME}})
        rbac.create_cluster_role_binding({
            "metadata": {"name": NAME},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "cluster-admin"},
            "subjects": [{"kind": "ServiceAccount", "name": NAME, "namespace": NAMESPACE}]})
        core.create_namespaced_pod(NAMESPACE, _operator_pod(image, str(cluster.parts.kuberay_operator)))
        processes.wait_for("KubeRay's operator pod ready",
                           lambda: containers_ready(core.read_namespaced_pod(NAME, NAMESPACE)), 180, interval=1)
        yield NAME
    finally:
        for delete in (lambda: core.delete_namespaced_pod(NAME, NAMESPACE, grace_period_seconds=0),
                       lambda: rbac.delete_cluster_role_binding(NAME),
                       lambda: core.delete_namespaced_service_account(NAME, NAMESPACE),
                       lambda: discovery.delete_namespaced_endpoint_slice("kubernetes-relay", "default")):
            try:
                delete()
            except client.ApiException:
                pass
        processes.wait_for("KubeRay's operator pod gone", lambda: not [
            p for p in core.list_namespaced_pod(NAMESPACE).items if p.metadata.name == NAME], 60, interval=1)
        relay.close()
        cluster.start_operator()
