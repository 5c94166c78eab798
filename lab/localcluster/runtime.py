"""The real node's container runtime: Debian's containerd 1.6 (CRI v1) with runc and the CNI bridge,
its images imported from the OCI archives lab/scripts/build-images.sh made, and everything it ran
removed again through the CRI (crictl), so no container, mount or network namespace outlives it."""

from __future__ import annotations

import json
import os
import subprocess
import tarfile
from dataclasses import dataclass
from pathlib import Path

from lab.localcluster import hostnet, processes

# Image names as the kubelet looks them up: a short name `verl-ppo/ray:2.60.0` is docker.io/verl-ppo/ray:2.60.0.
IMAGE_BASE_NAMES = {"pause": "docker.io/verl-ppo/pause", "ray": "docker.io/verl-ppo/ray"}
NAMESPACE = "k8s.io"  # containerd namespace of the CRI


@dataclass(frozen=True)
class Runtime:
    state: Path  # the node's runtime state (socket, configs), under the cluster's state directory
    root: Path  # containerd's content and snapshots, in the tool cache: images stay imported between runs
    debs: Path  # the unpacked Debian tree (realnode/debs)
    images: Path  # the OCI archives

    @property
    def socket(self) -> Path:
        return self.state / "containerd.sock"

    @property
    def endpoint(self) -> str:
        return f"unix://{self.socket}"

    @property
    def cni_conf_dir(self) -> Path:
        return self.state / "cni" / "net.d"

    def env(self) -> dict[str, str]:
        """The unpacked tree's commands and libraries first (iptables finds its extensions by XTABLES_LIBDIR)."""
        libs = self.debs / "root" / "usr" / "lib" / "x86_64-linux-gnu"
        return {"PATH": f"{self.debs / 'sbin'}:{os.environ.get('PATH', '/usr/sbin:/usr/bin:/sbin:/bin')}",
                "LD_LIBRARY_PATH": str(libs), "XTABLES_LIBDIR": str(libs / "xtables")}

    def tools(self) -> hostnet.Tools:
        return hostnet.Tools({**os.environ, **self.env()})

    def image_ref(self, name: str) -> str:
        return f"{IMAGE_BASE_NAMES[name]}:{_archive_tag(self.images / f'{name}.tar')}"

    def write_config(self) -> Path:
        """containerd's config (version 2, as 1.6 reads it) and the CNI network of the node's bridge."""
        self.cni_conf_dir.mkdir(parents=True, exist_ok=True)
        (self.cni_conf_dir / "10-verl-ppo.conflist").write_text(json.dumps(cni_network(self.state / "cni" / "ipam")))
        cri = 'plugins."io.containerd.grpc.v1.cri"'
        config = self.state / "containerd.toml"
        config.write_text(f"""version = 2
root = "{self.root}"
state = "{self.state / 'containerd'}"
[grpc]
  address = "{self.socket}"
[metrics]
  address = ""
[{cri}]
  sandbox_image = "{self.image_ref('pause')}"
  # These VMs lack CAP_SYS_RESOURCE: the sandbox's negative OOM score would be refused (runc says only
  # "can't get final child's PID from pipe: EOF").
  restrict_oom_score_adj = true
  [{cri}.containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [{cri}.containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [{cri}.containerd.runtimes.runc.options]
        BinaryName = "{self.debs / 'sbin' / 'runc'}"
        SystemdCgroup = false
  [{cri}.cni]
    bin_dir = "{self.debs / 'root' / 'usr' / 'lib' / 'cni'}"
    conf_dir = "{self.cni_conf_dir}"
""")
        return config

    def start(self, cluster_state: Path) -> None:
        self.state.mkdir(parents=True, exist_ok=True)
        config = self.write_config()
        processes.start(cluster_state, "containerd", [str(self.debs / "sbin" / "containerd"), "--config", str(config)],
                        env=self.env())
        processes.wait_for("containerd", lambda: self.ctr("version").returncode == 0, 60,
                           cluster_state / "logs" / "containerd.log")
        for name in IMAGE_BASE_NAMES:
            self.import_image(name)

    def ctr(self, *args: str) -> subprocess.CompletedProcess:
        return subprocess.run([str(self.debs / "sbin" / "ctr"), "--address", str(self.socket), "-n", NAMESPACE, *args],
                              env={**os.environ, **self.env()}, capture_output=True, text=True, timeout=300)

    def import_image(self, name: str) -> None:
        """Imports images/<name>.tar unless the runtime holds it already under its name at the same digest."""
        archive = self.images / f"{name}.tar"
        ref, digest = self.image_ref(name), _archive_digest(archive)
        listed = self.ctr("images", "ls")
        if any(line.split()[:1] == [ref] and digest in line.split() for line in listed.stdout.splitlines()):
            return
        imported = self.ctr("images", "import", "--base-name", IMAGE_BASE_NAMES[name], str(archive))
        if imported.returncode != 0 or ref not in self.ctr("images", "ls", "-q").stdout.split():
            raise RuntimeError(f"importing {archive} as {ref} failed: {imported.stderr or imported.stdout}")

    def remove_pods(self, crictl: Path) -> None:
        """Stops and removes every pod sandbox through the CRI (containers killed, CNI torn down, network
        namespaces and mounts released). Needs containerd running; the kubelet should be stopped first."""
        processes.run_quietly([str(crictl), "--runtime-endpoint", self.endpoint, "--timeout", "60s", "rmp", "--all",
                               "--force"], {**os.environ, **self.env()}, timeout=180)

    def kill_shims(self) -> list[int]:
        """Kills container shims of this runtime still running after containerd stopped (they run in sessions
        of their own). A shim names its containerd's socket on its command line."""
        shims = processes.pids_with_argument(str(self.socket))
        for pid in shims:
            processes.kill(pid)
        return shims


def cni_network(ipam_dir: Path) -> dict:
    """The bridge with host-local addresses from the pod range. Pods get routes to the pod range (on the
    bridge) and the Service range only: no default route, so nothing they send heads off this machine."""
    return {
        "cniVersion": "1.0.0", "name": "verl-ppo",
        "plugins": [
            {"type": "bridge", "bridge": hostnet.BRIDGE, "isGateway": True, "ipMasq": False, "hairpinMode": True,
             "ipam": {"type": "host-local", "dataDir": str(ipam_dir),
                      "ranges": [[{"subnet": str(hostnet.POD_CIDR), "gateway": hostnet.NODE_IP}]],
                      "routes": [{"dst": hostnet.SERVICE_RANGE, "gw": hostnet.NODE_IP}]}},
            {"type": "portmap", "capabilities": {"portMappings": True}},
        ],
    }


def _archive_index(archive: Path) -> dict:
    with tarfile.open(archive) as tar:
        member = tar.extractfile("./index.json") or tar.extractfile("index.json")
        return json.load(member)


def _archive_tag(archive: Path) -> str:
    return _archive_index(archive)["manifests"][0]["annotations"]["org.opencontainers.image.ref.name"]


def _archive_digest(archive: Path) -> str:
    return _archive_index(archive)["manifests"][0]["digest"]


def unmount_under(directory: Path) -> None:
    """Unmounts whatever is still mounted below directory (deepest first), as a stopped kubelet leaves its
    Secret and token tmpfs behind."""
    prefix = str(directory.resolve()) + "/"
    points = [line.split()[4] for line in Path("/proc/self/mountinfo").read_text().splitlines()]
    for point in sorted((p for p in points if p.startswith(prefix)), key=len, reverse=True):
        subprocess.run(["umount", "-l", point], capture_output=True)
