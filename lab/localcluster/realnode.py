"""A real node beside the kwok ones: kubelet and kube-proxy of the pinned Kubernetes build, containerd
with runc and the CNI bridge (runtime.py), CoreDNS for cluster DNS and kube-router's NetworkPolicy
firewall, each a local process under the cluster's state directory. Pod and Service addresses live on
the node's own bridge only (hostnet.py). One real node per machine: it owns the bridge and iptables."""

from __future__ import annotations

import json
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

import yaml
from kubernetes import client

from generator.discover import GPU_RESOURCE
from lab.localcluster import hostnet, processes
from lab.localcluster.parts import RealNodeParts, realnode_parts
from lab.localcluster.runtime import Runtime, unmount_under

NAME = "realnode-0"
# Which state directory's real node holds this machine's bridge and firewall now.
OWNER = Path("/run/verl-ppo-realnode")
CLUSTER_DOMAIN = "cluster.local"
# Stop order of its processes: the kubelet's clients first, containerd (whose pods crictl removes) last.
STOP_ORDER = ["kube-router", "coredns", "kube-proxy", "kubelet"]
LABEL = "verl-ppo.io/real-node"


@dataclass
class RealNode:
    state: Path  # the cluster's state directory
    kubeconfig: Path
    pki_dir: Path
    gpus: int = 4  # nvidia.com/gpu advertised: Ray sees them as logical GPUs
    labels: dict[str, str] = field(default_factory=dict)
    parts: RealNodeParts = field(default_factory=realnode_parts)

    @property
    def directory(self) -> Path:
        return self.state / "realnode"

    def runtime(self) -> Runtime:
        return Runtime(self.directory / "runtime", self.parts.containerd_root, self.parts.debs, self.parts.images)

    def start(self, api: client.ApiClient) -> None:
        """Brings the node up and returns once it is Ready with its GPUs and DNS and the firewall run."""
        missing = self.parts.missing()
        if missing:
            raise FileNotFoundError("real node parts missing (run lab/scripts/setup.sh): "
                                    + ", ".join(map(str, missing)))
        claim_machine(self.state)
        runtime = self.runtime()
        self.directory.mkdir(parents=True, exist_ok=True)
        record = {"forwarding": hostnet.set_up(runtime.tools())}
        (self.directory / "node.json").write_text(json.dumps(record))
        runtime.start(self.state)
        self._start_kubelet(runtime)
        processes.wait_for(f"node {NAME} Ready", lambda: _ready(api), 120, self.state / "logs" / "kubelet.log")
        core = client.CoreV1Api(api)
        core.patch_node(NAME, {"spec": {"podCIDR": str(hostnet.POD_CIDR), "podCIDRs": [str(hostnet.POD_CIDR)]}})
        core.patch_node_status(NAME, [{"op": "add", "path": f"/status/capacity/{GPU_RESOURCE.replace('/', '~1')}",
                                       "value": str(self.gpus)}])
        processes.wait_for(f"{self.gpus} {GPU_RESOURCE} allocatable on {NAME}",
                           lambda: core.read_node(NAME).status.allocatable.get(GPU_RESOURCE) == str(self.gpus), 60)
        self._start_proxy(runtime)
        self._start_dns()
        self._start_firewall(runtime)
        hostnet.put_isolation_first(runtime.tools())

    def _start_kubelet(self, runtime: Runtime) -> None:
        kubelet_dir = self.directory / "kubelet"
        kubelet_dir.mkdir(parents=True, exist_ok=True)
        healthz = processes.free_port()
        config = {
            "apiVersion": "kubelet.config.k8s.io/v1beta1", "kind": "KubeletConfiguration",
            # The v1.35 kubelet refuses cgroup v1 unless told; these VMs mount cgroup v1 only.
            "failCgroupV1": False, "cgroupDriver": "cgroupfs", "failSwapOn": False,
            "address": hostnet.NODE_IP, "port": processes.free_port(), "readOnlyPort": 0,
            "healthzBindAddress": "127.0.0.1", "healthzPort": healthz,
            # The apiserver (exec, logs) presents the admin client certificate of the cluster's CA.
            "authentication": {"anonymous": {"enabled": False}, "webhook": {"enabled": False},
                               "x509": {"clientCAFile": str(self.pki_dir / "ca.crt")}},
            "authorization": {"mode": "AlwaysAllow"},
            "containerRuntimeEndpoint": runtime.endpoint, "imageServiceEndpoint": runtime.endpoint,
            "clusterDNS": [hostnet.NODE_IP], "clusterDomain": CLUSTER_DOMAIN, "resolvConf": "",
            "hairpinMode": "hairpin-veth", "podLogsDir": str(kubelet_dir / "pod-logs"),
            "volumePluginDir": str(kubelet_dir / "volume-plugins"), "serializeImagePulls": False,
            # The node's images come from no registry: never collect them.
            "imageGCHighThresholdPercent": 100, "imageGCLowThresholdPercent": 99,
            "evictionHard": {"memory.available": "200Mi", "nodefs.available": "2%", "imagefs.available": "2%"},
            "rotateCertificates": False, "staticPodPath": "",
        }
        (kubelet_dir / "config.yaml").write_text(yaml.safe_dump(config))
        labels = {**self.labels, LABEL: "true"}
        processes.start(self.state, "kubelet", [
            str(self.parts.kubelet), f"--config={kubelet_dir / 'config.yaml'}", f"--kubeconfig={self.kubeconfig}",
            f"--root-dir={kubelet_dir / 'root'}", f"--cert-dir={kubelet_dir / 'pki'}", f"--hostname-override={NAME}",
            f"--node-ip={hostnet.NODE_IP}", "--node-labels=" + ",".join(f"{k}={v}" for k, v in sorted(labels.items())),
        ], env=runtime.env())

    def _start_proxy(self, runtime: Runtime) -> None:
        healthz = processes.free_port()
        processes.start(self.state, "kube-proxy", [
            str(self.parts.kube_proxy), f"--kubeconfig={self.kubeconfig}", f"--hostname-override={NAME}",
            "--proxy-mode=iptables", f"--cluster-cidr={hostnet.POD_CIDR}",
            # NodePorts only on the bridge address, never on this machine's outward interfaces.
            f"--nodeport-addresses={hostnet.NODE_IP}/32",
            f"--healthz-bind-address=127.0.0.1:{healthz}", f"--metrics-bind-address=127.0.0.1:{processes.free_port()}",
            # Leave the machine's conntrack table size alone.
            "--conntrack-max-per-core=0",
        ], env=runtime.env())
        processes.wait_for("kube-proxy", lambda: _get(f"http://127.0.0.1:{healthz}/healthz"), 60,
                           self.state / "logs" / "kube-proxy.log")

    def _start_dns(self) -> None:
        """CoreDNS on the bridge address: cluster names from the apiserver, every other name NXDOMAIN
        (nothing is forwarded off this machine)."""
        ready = processes.free_port()
        corefile = self.directory / "Corefile"
        corefile.write_text(f"""{CLUSTER_DOMAIN}:53 {{
    bind {hostnet.NODE_IP}
    ready 127.0.0.1:{ready}
    errors
    cache 5
    kubernetes {CLUSTER_DOMAIN} {{
        kubeconfig {self.kubeconfig} local
        pods insecure
    }}
}}
.:53 {{
    bind {hostnet.NODE_IP}
    errors
    template ANY ANY {{
        rcode NXDOMAIN
    }}
}}
""")
        processes.start(self.state, "coredns", [str(self.parts.coredns), "-conf", str(corefile)])
        processes.wait_for("coredns", lambda: _get(f"http://127.0.0.1:{ready}/ready"), 60,
                           self.state / "logs" / "coredns.log")

    def _start_firewall(self, runtime: Runtime) -> None:
        """kube-router's NetworkPolicy firewall only (no routing, no service proxy: kube-proxy has those).
        Its health port would listen on every address: off; it is up once its filter chain exists."""
        processes.start(self.state, "kube-router", [
            str(self.parts.kube_router), f"--kubeconfig={self.kubeconfig}", f"--hostname-override={NAME}",
            "--run-firewall=true", "--run-router=false", "--run-service-proxy=false", "--enable-cni=false",
            "--enable-ipv6=false", "--health-port=0", "--metrics-port=0",
            f"--service-cluster-ip-range={hostnet.SERVICE_RANGE}",
        ], env=runtime.env())
        tools = runtime.tools()
        processes.wait_for("kube-router",
                           lambda: tools.iptables("-S", "KUBE-ROUTER-FORWARD", check=False).returncode == 0,
                           60, self.state / "logs" / "kube-router.log")


def claim_machine(state: Path) -> None:
    """Records state as the owner of this machine's real node; refuses while another one runs."""
    if OWNER.exists():
        owner = Path(OWNER.read_text().strip())
        if owner != state and any(processes.running(owner).values()):
            raise RuntimeError(f"a real node already runs on this machine, from {owner}: stop that cluster first "
                               f"(make demo-down, or python -m lab.localcluster --state {owner} down)")
        stop_real_node(owner)  # what a cluster that died without `down` left
    OWNER.write_text(str(state))


def stop_real_node(state: Path) -> list[str]:
    """Stops the real node of the cluster in state and removes what it left: pods (through the CRI),
    shims, mounts, kube-proxy's and kube-router's rules, the bridge and the isolation chain."""
    node = state / "realnode"
    if not (node / "node.json").exists():
        return []
    parts = realnode_parts()
    runtime = Runtime(node / "runtime", parts.containerd_root, parts.debs, parts.images)
    stopped = processes.stop_named(state, STOP_ORDER)
    if processes.running(state).get("containerd"):
        runtime.remove_pods(parts.crictl)
    stopped += processes.stop_named(state, ["containerd"])
    runtime.kill_shims()
    _kill_pod_processes()  # what a CRI removal that failed left in the pods' cgroups
    unmount_under(node)
    tools = runtime.tools()
    for cleanup in ([str(parts.kube_proxy), "--cleanup"], [str(parts.kube_router), "--cleanup-config"]):
        processes.run_quietly(cleanup, tools.env)
    hostnet.tear_down(tools, json.loads((node / "node.json").read_text())["forwarding"])
    _remove_cgroups()
    (node / "node.json").unlink()
    if OWNER.exists() and Path(OWNER.read_text().strip()) == state:
        OWNER.unlink()
    return stopped


def pod_pids(pod_uid: str = "") -> list[int]:
    """The processes in the kubelet's pod cgroups (the pids hierarchy lists them all; cgroupfs names a pod's
    cgroup pod<uid>): every pod's, or those of the pod with this uid."""
    top = Path("/sys/fs/cgroup/pids/kubepods")
    if not top.is_dir():
        return []
    pods = list(top.rglob(f"pod{pod_uid}")) if pod_uid else [top]
    return sorted({int(pid) for pod in pods for procs in pod.rglob("cgroup.procs")
                   for pid in procs.read_text().split()})


def _kill_pod_processes() -> None:
    """SIGKILL to every process still in the kubelet's pod cgroups."""
    for pid in pod_pids():
        processes.kill(pid)


def _remove_cgroups() -> None:
    """The kubelet's pod cgroups (kubepods under each hierarchy), deepest first; only empty ones go."""
    for hierarchy in Path("/sys/fs/cgroup").iterdir():
        top = hierarchy / "kubepods"
        if top.is_dir():
            deepest_first = sorted((p for p in top.rglob("*") if p.is_dir()), key=lambda p: len(p.parts), reverse=True)
            for directory in deepest_first:
                _rmdir(directory)
            _rmdir(top)


def _rmdir(directory: Path) -> None:
    try:
        directory.rmdir()
    except OSError:
        pass


def _ready(api: client.ApiClient) -> bool:
    node = client.CoreV1Api(api).read_node(NAME)
    return any(c.type == "Ready" and c.status == "True" for c in node.status.conditions or [])


def _get(url: str) -> bool:
    with urllib.request.urlopen(url, timeout=5) as response:
        return response.status == 200


def memory_bytes(state: Path) -> dict[str, int]:
    """Resident memory of the node's processes (kubelet, containerd and its shims, DNS, proxy, firewall)
    and of its pods (the kubepods memory cgroup), in bytes."""
    figures = {name: _rss(pid) for name, pid in processes.pids(state).items()
               if name in {*STOP_ORDER, "containerd"}}
    runtime_socket = str(state / "realnode" / "runtime" / "containerd.sock")
    figures["shims"] = sum(_rss(pid) for pid in processes.pids_with_argument(runtime_socket))
    usage = Path("/sys/fs/cgroup/memory/kubepods/memory.usage_in_bytes")
    figures["pods"] = int(usage.read_text()) if usage.exists() else 0
    return figures


def _rss(pid: int) -> int:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0
