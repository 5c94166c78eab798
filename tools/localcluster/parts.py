"""Where scripts/build-localcluster.sh leaves the cluster's parts: binaries and CRDs under the cache,
named by the versions pinned in tools/versions.env."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from generator.paths import ROOT, pinned_versions, tool_cache  # noqa: F401  (ROOT: this package's callers)


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
    helm: Path
    kwok_stages: list[Path]
    crds: list[Path]

    def missing(self) -> list[Path]:
        """What scripts/build-localcluster.sh has not (yet) put in place."""
        files = [self.etcd, self.apiserver, self.controller_manager, self.scheduler, self.kwok,
                 self.kuberay_operator, self.kueue, self.kueue_files / "manifests.yaml", self.helm]
        absent = [path for path in files if not path.exists()]
        if not self.kwok_stages:
            absent.append(kwok_stages_dir())
        if len(self.crds) < 5:  # KubeRay's four CRDs and the PodMonitor one at least
            absent.append(tool_cache() / "crds")
        return absent


def kwok_stages_dir() -> Path:
    return tool_cache() / "kwok-stages" / pinned_versions()["KWOK_VERSION"]


def parts(helm: str = "helm4") -> Parts:
    versions, bin_dir = pinned_versions(), tool_cache() / "bin"
    kube = versions["KUBERNETES_VERSION"]
    return Parts(
        etcd=bin_dir / f"etcd-{versions['ETCD_VERSION']}",
        apiserver=bin_dir / f"kube-apiserver-{kube}",
        controller_manager=bin_dir / f"kube-controller-manager-{kube}",
        scheduler=bin_dir / f"kube-scheduler-{kube}",
        kwok=bin_dir / f"kwok-{versions['KWOK_VERSION']}",
        kuberay_operator=bin_dir / f"kuberay-operator-{versions['KUBERAY_VERSION']}",
        kueue=bin_dir / f"kueue-{versions['KUEUE_VERSION']}",
        kueue_files=tool_cache() / f"kueue-{versions['KUEUE_VERSION']}",
        helm=bin_dir / helm,
        kwok_stages=sorted(kwok_stages_dir().glob("*.yaml")),
        # The operator watches every KubeRay kind, so all four CRDs; PodMonitors need their CRD too.
        crds=sorted((tool_cache() / "crds" / f"kuberay-operator-{versions['KUBERAY_VERSION']}").glob("*.yaml"))
        + sorted((tool_cache() / "crds" / f"prometheus-operator-{versions['PROMETHEUS_OPERATOR_VERSION']}").glob("*.yaml")),
    )
