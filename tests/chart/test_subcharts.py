"""Tier 2: the subcharts are components of the umbrella chart, not charts to install alone. Each one's own
use (storage only, a RayCluster only, a run on an existing Ray cluster, observability only) is the umbrella
with the other components switched off, as the READMEs show it (generator/valuesdoc.py COMPONENT_USES);
installed alone, a component stops with one sentence saying what it is."""

import shlex
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from generator import paths
from generator.cli import main as generator_main
from generator.valuesdoc import use_sets
from support import helm as helm_cli
from support.tools import kubernetes_version

# The kinds each use renders (and only those); Pod: the ppo-job's helm test.
USE_KINDS = {
    "storage": {"PersistentVolumeClaim"},
    "raycluster": {"RayCluster", "NetworkPolicy", "ConfigMap", "ServiceAccount"},
    "ppo-job": {"ConfigMap", "Job", "Pod", "ServiceAccount", "Role", "RoleBinding"},
    "observability": {"PodMonitor", "ConfigMap"},
}


def use_args(name: str) -> list[str]:
    return shlex.split(use_sets(name))


def render(helm, *args: str) -> helm_cli.Result:
    return helm_cli.template(helm, *args, release="team", namespace="research")


@pytest.mark.parametrize("name", paths.components())
def test_each_components_use_renders_as_umbrella_values(helm, validator, name):
    lint = helm_cli.lint(helm, *use_args(name))
    assert lint.returncode == 0 and "[ERROR]" not in lint.output and "[WARNING]" not in lint.output, lint.output
    result = render(helm, *use_args(name))
    assert result.returncode == 0, result.output
    documents = result.documents()
    assert [e for doc in documents for e in validator.errors(doc)] == []
    assert {doc["kind"] for doc in documents} == USE_KINDS[name]


@pytest.mark.parametrize("name", paths.components())
def test_each_components_use_passes_generator_check(name, capsys):
    assert generator_main(["check", *use_args(name)]) == 0, capsys.readouterr().out


def test_every_component_has_a_use_in_its_readme():
    for name in paths.components():
        sets = use_sets(name)
        assert f"helm install verl-ppo charts/verl-ppo {sets}\n" in (paths.subchart_dir(name) / "README.md").read_text()
        assert f"`{sets}`" in (paths.CHART / "README.md").read_text()


def test_a_component_without_a_use_is_named(monkeypatch):
    monkeypatch.setattr(paths, "components", lambda: ("storage", "scheduler"))
    with pytest.raises(KeyError, match="component scheduler .* has no use in generator/valuesdoc.py COMPONENT_USES"):
        use_sets("scheduler")


def test_observability_only_selects_the_named_cluster(helm):
    monitors = [d for d in render(helm, *use_args("observability")).documents() if d["kind"] == "PodMonitor"]
    assert monitors and {m["spec"]["selector"]["matchLabels"]["ray.io/cluster"] for m in monitors} == {"team-ray"}


def test_a_run_on_an_existing_cluster_submits_there_and_mounts_the_existing_claim(helm):
    jobs = [d for d in render(helm, *use_args("ppo-job")).documents() if d["kind"] == "Job"]
    env = {e["name"]: e.get("value") for job in jobs for e in job["spec"]["template"]["spec"]["containers"][0]["env"]}
    assert env["RAY_DASHBOARD_URL"] == "http://team-ray-head-svc.research.svc:8265"
    mounts = [v for job in jobs for v in job["spec"]["template"]["spec"]["volumes"] if "persistentVolumeClaim" in v]
    assert {v["persistentVolumeClaim"]["claimName"] for v in mounts} == {"shared-data"}


def test_a_raycluster_only_has_the_workers_of_its_gpu_nodes(helm):
    (cluster,) = [d for d in render(helm, *use_args("raycluster")).documents() if d["kind"] == "RayCluster"]
    assert sum(group["replicas"] for group in cluster["spec"]["workerGroupSpecs"]) == 2  # 3 nodes, one on the head


def test_storage_only_creates_the_claim_of_its_size(helm):
    (claim,) = render(helm, *use_args("storage")).documents()
    assert claim["spec"]["resources"]["requests"]["storage"] == "500Gi"


@pytest.fixture(scope="session")
def built_alone(tmp_path_factory) -> dict[str, Path]:
    """Each subchart as someone would try to install it from a clone: `helm dependency build` first (in a
    copy, so the checkout stays as it is)."""
    root = tmp_path_factory.mktemp("subcharts") / "charts"
    shutil.copytree(paths.CHART / "charts", root, ignore=shutil.ignore_patterns("charts"))
    helm = helm_cli.helm_binaries()["helm4"]
    for name in paths.components():
        subprocess.run([str(helm), "dependency", "build", str(root / name)], check=True, capture_output=True)
    return {name: root / name for name in paths.components()}


@pytest.mark.parametrize("name", paths.components())
def test_a_component_installed_alone_says_it_is_a_component(helm, built_alone, name):
    result = helm_cli.run(helm, "template", "team", str(built_alone[name]), "--namespace", "research",
                          "--kube-version", kubernetes_version())
    assert result.returncode != 0
    (line,) = [line for line in result.stderr.splitlines() if line.startswith("Error:")]
    assert line.endswith(f"{name} is a component of the verl-ppo chart (charts/verl-ppo), not a chart to install "
                         "alone: install charts/verl-ppo and switch off the components you do not need (e.g. --set "
                         "raycluster.enabled=false); its README shows each use"), result.stderr


def test_the_umbrella_checks_once_with_every_component_in_view(helm):
    """One failure, not one per component, every field named by its path in the umbrella's values."""
    result = helm_cli.template(helm, "--set", "raycluster.head.serviceType=LoadBalancer",
                               "--set", "ppo-job.actor.ppoMicroBatchSizePerGpu=7")
    assert result.returncode != 0
    assert result.stderr.count("value(s) to fix") == 1 and "verl-ppo: 2 value(s) to fix" in result.stderr
    assert "  - raycluster.head.serviceType=LoadBalancer:" in result.stderr
    assert "--set raycluster.head.allowUnauthenticatedService=true" in result.stderr


@pytest.mark.parametrize("name", ["verl-ppo", *paths.components()])
def test_helm_show_readme_is_the_generated_readme(helm, name):
    chart = paths.CHART if name == "verl-ppo" else paths.subchart_dir(name)
    shown = helm_cli.run(helm, "show", "readme", str(chart))
    assert shown.returncode == 0 and shown.stdout.strip() == (chart / "README.md").read_text().strip()
    assert "## Parameters" in shown.stdout


def test_every_component_declares_the_library():
    for name in paths.components():
        meta = yaml.safe_load((paths.subchart_dir(name) / "Chart.yaml").read_text())
        assert [dep["name"] for dep in meta.get("dependencies", [])] == [paths.LIBRARY], name
        assert (paths.subchart_dir(name) / ".helmignore").is_file()
        assert meta["home"] == yaml.safe_load((paths.CHART / "Chart.yaml").read_text())["home"]


def test_every_template_of_a_component_starts_with_the_component_check():
    """The check is the first line, so no template reads a value before it (whatever order Helm renders in)."""
    for name in paths.components():
        for template in (paths.subchart_dir(name) / "templates").rglob("*.yaml"):
            assert template.read_text().startswith('{{- include "verl-ppo.component" . -}}\n'), template
