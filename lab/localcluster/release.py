"""A Helm release of the chart on the local cluster: its namespace (Pod Security enforced), the
volume its claim binds to, helm itself, and what the release's objects report."""

from __future__ import annotations

import json
import subprocess
from dataclasses import dataclass
from pathlib import Path

import yaml
from kubernetes import client

from generator.helm import HelmInputs, merged_values
from lab.localcluster.parts import ROOT

CHART = ROOT / "charts" / "verl-ppo"
# The seed's release scaled to the real node (image, resources, stand-in driver): tier 7 and make demo.
REALNODE_VALUES = Path(__file__).resolve().parent / "realnode-values.yaml"
RAY = ("ray.io", "v1", "rayclusters")
RAY_JOBS = ("ray.io", "v1", "rayjobs")
POD_MONITORS = ("monitoring.coreos.com", "v1", "podmonitors")
# Label the chart puts on every object and pod of a release (its selector labels).
RELEASE_LABEL = "app.kubernetes.io/instance"


@dataclass(frozen=True)
class Helm:
    binary: Path
    kubeconfig: Path

    def run(self, *args: str, check: bool = True, timeout: float = 300) -> subprocess.CompletedProcess:
        completed = subprocess.run([str(self.binary), "--kubeconfig", str(self.kubeconfig), *args],
                                   capture_output=True, text=True, timeout=timeout)
        if check and completed.returncode != 0:
            raise RuntimeError(f"helm {' '.join(args)} failed ({completed.returncode}):\n{completed.stderr}")
        return completed

    def claim(self, release: str, namespace: str, *values_args: str) -> tuple[str, str] | None:
        """(name, size) of the claim the release would create, from `helm template` of the same values."""
        rendered = self.run("template", release, str(CHART), "--namespace", namespace, *values_args).stdout
        for document in yaml.safe_load_all(rendered):
            if document and document.get("kind") == "PersistentVolumeClaim":
                return document["metadata"]["name"], document["spec"]["resources"]["requests"]["storage"]
        return None


def create_namespace(api: client.ApiClient, name: str, enforce: str = "baseline") -> None:
    """A namespace whose pods the apiserver's PodSecurity admission holds to the `enforce` level."""
    labels = {"pod-security.kubernetes.io/enforce": enforce, "pod-security.kubernetes.io/enforce-version": "latest"}
    client.CoreV1Api(api).create_namespace({"metadata": {"name": name, "labels": labels}})


def claim_volume_path(namespace: str, claim: str) -> Path:
    """This machine's directory behind the release's claim: the real node's pods mount it; kwok mounts nothing."""
    return Path("/var/lib/verl-ppo-localcluster") / f"{namespace}-{claim}"


def create_claim_volume(api: client.ApiClient, namespace: str, claim: str, size: str) -> str:
    """A volume reserved for the release's claim (claimRef), as an administrator pre-provisions one
    where no ReadWriteMany provisioner runs: a hostPath, the same directory for every pod of the real node."""
    name = f"{namespace}-{claim}"
    client.CoreV1Api(api).create_persistent_volume({
        "metadata": {"name": name, "labels": {"verl-ppo.io/localcluster": "claim-volume"}},
        "spec": {
            "capacity": {"storage": size}, "accessModes": ["ReadWriteMany"],
            "persistentVolumeReclaimPolicy": "Retain", "storageClassName": "",
            "claimRef": {"namespace": namespace, "name": claim},
            "hostPath": {"path": str(claim_volume_path(namespace, claim)), "type": "DirectoryOrCreate"},
        },
    })
    return name


def prepare(api: client.ApiClient, helm: Helm, release: str, namespace: str, values_args: list[str],
            enforce: str = "baseline") -> None:
    """Namespace and claim volume for a release about to be installed with values_args."""
    create_namespace(api, namespace, enforce)
    claim = helm.claim(release, namespace, *values_args)
    if claim:
        create_claim_volume(api, namespace, *claim)


def submitter_container(rendered: list[dict]) -> dict:
    """The submitter's container: of the release's Job, or in RayJob mode of the RayJob's submitter pod template."""
    for document in rendered:
        if document["kind"] == "RayJob":
            return document["spec"]["submitterPodTemplate"]["spec"]["containers"][0]
        if document["kind"] == "Job" and "helm.sh/hook" not in document["metadata"].get("annotations", {}):
            return document["spec"]["template"]["spec"]["containers"][0]
    raise ValueError("the release renders no submitter (no Job, no RayJob)")


def plant_inputs(helm: Helm, release: str, namespace: str, values_args: list[str]) -> Path:
    """Writes placeholder files where the release's submitter looks for its inputs (data files, model
    config: VERL_PPO_INPUTS of its rendered Job) into the claim's directory on this machine, so a real
    submitter finds them; the stand-in driver reads none. Returns that directory."""
    rendered = [d for d in yaml.safe_load_all(helm.run("template", release, str(CHART), "--namespace", namespace,
                                                        *values_args).stdout) if d]
    claim = next(d["metadata"]["name"] for d in rendered if d["kind"] == "PersistentVolumeClaim")
    container = submitter_container(rendered)
    inputs = next(json.loads(e["value"]) for e in container["env"] if e["name"] == "VERL_PPO_INPUTS")
    mount = next(m["mountPath"] for m in container["volumeMounts"] if m["name"] == "shared-data")
    directory = claim_volume_path(namespace, claim)
    for path in inputs:
        target = directory / Path(path).relative_to(mount)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text("placeholder written by lab/localcluster (the stand-in driver reads none)\n")
    return directory


def release_pods(api: client.ApiClient, namespace: str, release: str) -> list[client.V1Pod]:
    return client.CoreV1Api(api).list_namespaced_pod(namespace, label_selector=f"{RELEASE_LABEL}={release}").items


def is_ray_pod(pod: client.V1Pod) -> bool:
    """Head and workers carry KubeRay's node-type label."""
    return bool((pod.metadata.labels or {}).get("ray.io/node-type"))


def ray_pods(api: client.ApiClient, namespace: str, release: str) -> list[client.V1Pod]:
    return [pod for pod in release_pods(api, namespace, release) if is_ray_pod(pod)]


def rayclusters(api: client.ApiClient, namespace: str) -> list[dict]:
    return client.CustomObjectsApi(api).list_namespaced_custom_object(*RAY[:2], namespace, RAY[2])["items"]


def rayjob(api: client.ApiClient, namespace: str, name: str) -> dict:
    return client.CustomObjectsApi(api).get_namespaced_custom_object(*RAY_JOBS[:2], namespace, RAY_JOBS[2], name)


def raycluster_ready(api: client.ApiClient, namespace: str) -> bool:
    """The operator's verdict: state ready, with every worker its spec asks for ready."""
    clusters = rayclusters(api, namespace)
    if len(clusters) != 1:
        return False
    wanted = sum(group.get("replicas", 0) for group in clusters[0]["spec"].get("workerGroupSpecs", []))
    status = clusters[0].get("status") or {}
    return status.get("state") == "ready" and status.get("readyWorkerReplicas", 0) == wanted \
        and status.get("desiredWorkerReplicas", 0) == wanted


def release_values(*files: Path) -> dict:
    """.Values of the chart with these -f files, as Helm merges them."""
    return merged_values(CHART, HelmInputs(files=files))


def pod_security_level(values: dict) -> str:
    """The Pod Security level a release of these values can be held to: baseline, unless the Ray
    pods add IPC_LOCK for RDMA (baseline forbids that capability: privileged)."""
    rdma = values["raycluster"]["rdma"]
    return "privileged" if rdma["enabled"] and rdma["ipcLock"] else "baseline"
