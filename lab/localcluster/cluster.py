"""The control plane, kwok and the KubeRay operator as local processes, on free ports, under one
state directory (certificates, kubeconfig, etcd data, logs, pid files)."""

from __future__ import annotations

import shutil
import ssl
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

import yaml
from kubernetes import client, config

from lab.localcluster import pki, processes
from lab.localcluster.hostnet import SERVICE_RANGE
from lab.localcluster.parts import Parts, parts
from lab.localcluster.realnode import RealNode, stop_real_node

# Stop order: the clients of the apiserver first, etcd last.
STOP_ORDER = ["prometheus-operator", "kueue", "kuberay-operator", "kwok", "kube-scheduler", "kube-controller-manager",
              "kube-apiserver", "etcd"]
# Marks the nodes kwok plays (its --manage-nodes-with-annotation-selector).
KWOK_ANNOTATION = ("kwok.x-k8s.io/node", "fake")
# kwok renews the fake nodes' leases; the node lifecycle controller reads them as heartbeats and
# lifts the not-ready taint new nodes get. A long grace period keeps a busy 2-core machine from
# having nodes declared lost. kwok renews a lease every quarter of its duration: at kwok's default
# (40 s) 1,024 nodes renew 100 leases a second, the apiserver's largest load at that size; a lease
# as long as the grace period renews every 75 s, four times within it.
NODE_GRACE_SECONDS = 300
# The KubeRay operator's client rate and workers as docs/scale.md advises for 1,000+ GPU nodes
# (flags of its main.go; v1.6.2 defaults: --qps=100, --burst=200, --reconcile-concurrency=1): a burst above
# the 1,024 pods of the largest benchmark, several releases of a test session reconciled at once.
OPERATOR_FLAGS = ("--qps=200", "--burst=1100", "--reconcile-concurrency=4")
ADMISSION = ("NamespaceLifecycle,LimitRanger,ServiceAccount,DefaultTolerationSeconds,PodSecurity,"
             "ResourceQuota,MutatingAdmissionWebhook,ValidatingAdmissionWebhook,ValidatingAdmissionPolicy")


@dataclass
class LocalCluster:
    state: Path
    parts: Parts = field(default_factory=parts)
    apiserver_url: str = ""

    @property
    def kubeconfig(self) -> Path:
        return self.state / "kubeconfig"

    @property
    def pki_dir(self) -> Path:
        return self.state / "pki"

    def log(self, name: str) -> Path:
        return self.state / "logs" / f"{name}.log"

    def api(self) -> client.ApiClient:
        return config.new_client_from_config(config_file=str(self.kubeconfig))

    def start(self) -> "LocalCluster":
        """Starts every part and returns once the operator is serving; stops what started on failure."""
        missing = self.parts.missing()
        if missing:
            raise FileNotFoundError("local cluster parts missing (run lab/scripts/setup.sh): "
                                    + ", ".join(str(path) for path in missing))
        if any(processes.running(self.state).values()):
            raise RuntimeError(f"a local cluster already runs from {self.state}: stop it first (make demo-down)")
        # A fresh cluster: only what an earlier one left here goes, whatever else the directory holds.
        for leftover in ("pki", "etcd", "logs", "pids"):
            shutil.rmtree(self.state / leftover, ignore_errors=True)
        self.state.mkdir(parents=True, exist_ok=True)
        try:
            pki.write_pki(self.pki_dir)
            self._start_etcd_and_apiserver()
            self._start_controllers()
            install_crds(self.api(), self.parts.crds)
            self._start_operator()
        except BaseException:
            self.stop()
            raise
        return self

    def start_real_node(self, gpus: int, labels: dict[str, str]) -> RealNode:
        """Adds the real node (realnode.py) to the running cluster; stops everything on failure."""
        node = RealNode(self.state, self.kubeconfig, self.pki_dir, gpus, labels)
        try:
            node.start(self.api())
        except BaseException:
            self.stop()
            raise
        return node

    def stop(self) -> list[str]:
        return stop_cluster(self.state)

    def restart_apiserver(self, down_seconds: float) -> float:
        """Stops the kube-apiserver, starts it again after down_seconds; the seconds until it was ready again."""
        processes.restart(self.state, "kube-apiserver", down_seconds)
        return processes.wait_for("kube-apiserver after its restart",
                                  lambda: _get(f"{self.apiserver_url}/readyz", self.pki_dir), 180,
                                  self.log("kube-apiserver"))

    def _start_etcd_and_apiserver(self) -> None:
        etcd_port, peer_port, api_port = processes.free_port(), processes.free_port(), processes.free_port()
        etcd_url, peer_url = f"http://127.0.0.1:{etcd_port}", f"http://127.0.0.1:{peer_port}"
        processes.start(self.state, "etcd", [
            str(self.parts.etcd), "--name=local", f"--data-dir={self.state / 'etcd'}",
            f"--listen-client-urls={etcd_url}", f"--advertise-client-urls={etcd_url}",
            f"--listen-peer-urls={peer_url}", f"--initial-advertise-peer-urls={peer_url}",
            f"--initial-cluster=local={peer_url}",
            # A cluster that lives for one test: a write waits for no disk flush (at 256 pods a third
            # of a pod create's 56 ms in the apiserver was etcd's).
            "--unsafe-no-fsync",
        ])
        processes.wait_for("etcd", lambda: _get(f"{etcd_url}/health"), 60, self.log("etcd"))
        p = self.pki_dir
        processes.start(self.state, "kube-apiserver", [
            str(self.parts.apiserver), f"--etcd-servers={etcd_url}",
            "--bind-address=127.0.0.1", "--advertise-address=127.0.0.1", f"--secure-port={api_port}",
            # Endpoints may not name a loopback address: the apiserver's own Service gets none.
            "--endpoint-reconciler-type=none",
            f"--tls-cert-file={p / 'apiserver.crt'}", f"--tls-private-key-file={p / 'apiserver.key'}",
            f"--client-ca-file={p / 'ca.crt'}", "--authorization-mode=RBAC",
            f"--enable-admission-plugins={ADMISSION}", "--allow-privileged=true",
            "--service-account-issuer=https://kubernetes.default.svc.cluster.local",
            f"--service-account-key-file={p / 'sa.pub'}", f"--service-account-signing-key-file={p / 'sa.key'}",
            f"--service-cluster-ip-range={SERVICE_RANGE}", "--profiling=false",
            # exec and logs on a real node: the kubelet trusts the cluster's CA and serves on the node's address.
            f"--kubelet-client-certificate={p / 'admin.crt'}", f"--kubelet-client-key={p / 'admin.key'}",
            "--kubelet-preferred-address-types=InternalIP",
        ])
        self.apiserver_url = f"https://127.0.0.1:{api_port}"
        self._write_kubeconfig()
        processes.wait_for("kube-apiserver", lambda: _get(f"{self.apiserver_url}/readyz", self.pki_dir), 180,
                           self.log("kube-apiserver"))

    def _write_kubeconfig(self) -> None:
        p = self.pki_dir
        self.kubeconfig.write_text(yaml.safe_dump({
            "apiVersion": "v1", "kind": "Config", "current-context": "local",
            "clusters": [{"name": "local", "cluster": {"server": self.apiserver_url,
                                                      "certificate-authority": str(p / "ca.crt")}}],
            "users": [{"name": "admin", "user": {"client-certificate": str(p / "admin.crt"),
                                                 "client-key": str(p / "admin.key")}}],
            "contexts": [{"name": "local", "context": {"cluster": "local", "user": "admin"}}],
        }))
        self.kubeconfig.chmod(0o600)

    def _start_controllers(self) -> None:
        kubeconfig, p = f"--kubeconfig={self.kubeconfig}", self.pki_dir
        processes.start(self.state, "kube-controller-manager", [
            str(self.parts.controller_manager), kubeconfig, "--leader-elect=false", "--secure-port=0",
            f"--node-monitor-grace-period={NODE_GRACE_SECONDS}s", "--use-service-account-credentials=true",
            f"--service-account-private-key-file={p / 'sa.key'}", f"--root-ca-file={p / 'ca.crt'}",
        ])
        processes.start(self.state, "kube-scheduler", [
            str(self.parts.scheduler), kubeconfig, "--leader-elect=false", "--secure-port=0",
        ])
        stages = [f"--config={stage}" for stage in self.parts.kwok_stages]
        processes.start(self.state, "kwok", [
            str(self.parts.kwok), kubeconfig, *stages, "--manage-all-nodes=false",
            f"--manage-nodes-with-annotation-selector={KWOK_ANNOTATION[0]}={KWOK_ANNOTATION[1]}",
            "--cidr=10.244.0.0/16", "--node-ip=10.0.0.1", "--server-address=",
            f"--node-lease-duration-seconds={NODE_GRACE_SECONDS}",
        ])

    def stop_operator(self) -> None:
        """Stops the operator's process (a test that runs KubeRay's operator as a pod instead)."""
        processes.stop_one(self.state, "kuberay-operator")

    def start_operator(self) -> None:
        self._start_operator()

    def _start_operator(self) -> None:
        probe = processes.free_port()
        processes.start(self.state, "kuberay-operator", [
            str(self.parts.kuberay_operator), "--enable-leader-election=false", "--metrics-addr=0",
            f"--health-probe-bind-address=127.0.0.1:{probe}", "--log-stdout-encoder=console",
            *OPERATOR_FLAGS,
        ], env={"KUBECONFIG": str(self.kubeconfig)})
        processes.wait_for("kuberay-operator", lambda: _get(f"http://127.0.0.1:{probe}/readyz"), 120,
                           self.log("kuberay-operator"))


def stop_cluster(state: Path) -> list[str]:
    """Stops what a cluster started from state: its real node first (its pods, network and rules
    removed), then the kwok nodes' controller, the operator and the control plane."""
    return stop_real_node(state) + processes.stop_all(state, STOP_ORDER)


def _get(url: str, pki_dir: Path | None = None) -> bool:
    """True when url answers 200 (with the admin client certificate for the apiserver)."""
    context = None
    if pki_dir:
        context = ssl.create_default_context(cafile=str(pki_dir / "ca.crt"))
        context.load_cert_chain(str(pki_dir / "admin.crt"), str(pki_dir / "admin.key"))
    with urllib.request.urlopen(url, timeout=5, context=context) as response:
        return response.status == 200


def install_crds(api: client.ApiClient, files: list[Path], existing_ok: bool = False) -> None:
    """Creates the CRDs (those already there left as they are, where existing_ok) and waits until each
    is Established (its API served)."""
    extensions = client.ApiextensionsV1Api(api)
    names = []
    for path in files:
        for document in yaml.safe_load_all(path.read_text()):
            if document and document.get("kind") == "CustomResourceDefinition":
                try:
                    extensions.create_custom_resource_definition(document)
                except client.ApiException as error:
                    if not (existing_ok and error.status == 409):
                        raise
                names.append(document["metadata"]["name"])

    def established() -> bool:
        for name in names:
            conditions = extensions.read_custom_resource_definition(name).status.conditions or []
            if not any(c.type == "Established" and c.status == "True" for c in conditions):
                return False
        return True

    processes.wait_for("CRDs", established, 60)
