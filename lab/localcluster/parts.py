"""Where lab/scripts/build-localcluster.sh leaves the cluster's parts: binaries and CRDs under the cache,
named by the versions pinned in lab/versions.env."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from generator.paths import ROOT, tool_cache  # noqa: F401  (ROOT: this package's callers)
from lab.pins import pinned_versions


@dataclass(frozen=True)
class Parts:
    etcd: Path
    apiserver: Path
    controller_manager: Path
    scheduler: Path
    kwok: Path
    kuberay_operator: Path
    kueue: Path
    kueue_files: Path  # Kueue's CRDs and webhook manifests (build-localcluster.sh copies them from its module)
    prometheus_operator: Path
    prometheus_operator_files: Path  # every CRD of its module (build-localcluster.sh copies them)
    helm: Path
    kwok_stages: list[Path]
    crds: list[Path]

    def missing(self) -> list[Path]:
        """What lab/scripts/build-localcluster.sh has not (yet) put in place of what every local cluster starts
        (`make demo` builds no more)."""
        files = [self.etcd, self.apiserver, self.controller_manager, self.scheduler, self.kwok,
                 self.kuberay_operator, self.helm]
        absent = [path for path in files if not path.exists()]
        if not self.kwok_stages:
            absent.append(kwok_stages_dir())
        if len(self.crds) < 5:  # KubeRay's four CRDs and the PodMonitor one at least
            absent.append(tool_cache() / "crds")
        return absent

    def missing_for_tests(self) -> list[Path]:
        """What only the tests start beside the cluster (kueue.py, monitoring.py) and setup has not built."""
        files = [self.kueue, self.kueue_files / "manifests.yaml", self.prometheus_operator,
                 self.prometheus_operator_files / "monitoring.coreos.com_prometheuses.yaml"]
        return [path for path in files if not path.exists()]


@dataclass(frozen=True)
class RealNodeParts:
    """The real node's programs (lab/scripts/build-localcluster.sh) and its images (lab/scripts/build-images.sh)."""
    kubelet: Path
    kube_proxy: Path
    coredns: Path
    kube_router: Path
    crictl: Path
    debs: Path  # Debian's containerd, runc, CNI plugins, iptables, ... unpacked (realnode/debs)
    images: Path  # the images' OCI archives
    containerd_root: Path  # containerd's content and snapshots: images stay imported between runs

    def missing(self) -> list[Path]:
        files = [self.kubelet, self.kube_proxy, self.coredns, self.kube_router, self.crictl,
                 self.debs / "sbin" / "containerd", self.images / "pause.tar", self.images / "ray.tar"]
        return [path for path in files if not path.exists()]


def realnode_parts() -> RealNodeParts:
    return RealNodeParts(
        kubelet=_binary("kubelet", "KUBERNETES_VERSION"),
        kube_proxy=_binary("kube-proxy", "KUBERNETES_VERSION"),
        coredns=_binary("coredns", "COREDNS_VERSION"),
        kube_router=_binary("kube-router", "KUBE_ROUTER_VERSION"),
        crictl=_binary("crictl", "CRICTL_VERSION"),
        debs=tool_cache() / "realnode" / "debs",
        images=tool_cache() / "images",
        containerd_root=tool_cache() / "realnode" / "containerd",
    )


def _binary(name: str, version_key: str) -> Path:
    """A binary of lab/scripts/build-localcluster.sh: bin/<name>-<pinned version>."""
    return tool_cache() / "bin" / f"{name}-{pinned_versions()[version_key]}"


def kwok_stages_dir() -> Path:
    return tool_cache() / "kwok-stages" / pinned_versions()["KWOK_VERSION"]


def parts(helm: str = "helm4") -> Parts:
    versions = pinned_versions()
    return Parts(
        etcd=_binary("etcd", "ETCD_VERSION"),
        apiserver=_binary("kube-apiserver", "KUBERNETES_VERSION"),
        controller_manager=_binary("kube-controller-manager", "KUBERNETES_VERSION"),
        scheduler=_binary("kube-scheduler", "KUBERNETES_VERSION"),
        kwok=_binary("kwok", "KWOK_VERSION"),
        kuberay_operator=_binary("kuberay-operator", "KUBERAY_VERSION"),
        kueue=_binary("kueue", "KUEUE_VERSION"),
        kueue_files=tool_cache() / f"kueue-{versions['KUEUE_VERSION']}",
        prometheus_operator=_binary("prometheus-operator", "PROMETHEUS_OPERATOR_VERSION"),
        prometheus_operator_files=tool_cache() / f"prometheus-operator-{versions['PROMETHEUS_OPERATOR_VERSION']}",
        helm=tool_cache() / "bin" / helm,
        kwok_stages=sorted(kwok_stages_dir().glob("*.yaml")),
        # The operator watches every KubeRay kind, so all four CRDs; PodMonitors need their CRD too.
        crds=sorted((tool_cache() / "crds" / f"kuberay-operator-{versions['KUBERAY_VERSION']}").glob("*.yaml"))
        + sorted((tool_cache() / "crds" / f"prometheus-operator-{versions['PROMETHEUS_OPERATOR_VERSION']}")
                 .glob("*.yaml")),
    )
