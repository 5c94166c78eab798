"""Tier 2: each component installs on its own, for the cases platform teams have, with its own
defaults, schema, rules and README; under the umbrella the same templates serve."""

import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from generator import paths
from generator.cli import main as generator_main
from support import helm as helm_cli
from support.tools import kubernetes_version

CLAIM = ["--set", "global.storage.existingClaim=shared-data"]
# A component's use case alone: its arguments, and the kinds it must render (and only those).
USE_CASES = {
    "storage": ([], {"PersistentVolumeClaim"}),
    "raycluster": ([*CLAIM, "--set", "global.gpu.nodes=3"], {"RayCluster", "NetworkPolicy", "ConfigMap", "ServiceAccount"}),
    "ppo-job": ([*CLAIM, "--set", "dashboardURL=http://team-ray-head-svc.research.svc:8265"],
                {"ConfigMap", "Job", "Pod", "ServiceAccount", "Role", "RoleBinding"}),  # Pod: helm test
    "observability": (["--set", "rayClusterName=team-ray"], {"PodMonitor", "ConfigMap"}),
}
# helm template only: a cluster that serves the PodMonitor API (lint has no such flag).
RENDER_ONLY = ["--api-versions", helm_cli.MONITORING_API]


def built_alone(root: Path) -> dict[str, Path]:
    """Each subchart as a user installs it from a clone: `helm dependency build` first (in a copy, so the
    checkout stays as it is)."""
    shutil.copytree(paths.CHART / "charts", root, ignore=shutil.ignore_patterns("charts"))
    helm = helm_cli.helm_binaries()["helm4"]
    for name in paths.SUBCHARTS:
        subprocess.run([str(helm), "dependency", "build", str(root / name)], check=True, capture_output=True)
    return {name: root / name for name in paths.SUBCHARTS}


@pytest.fixture(scope="session")
def standalone(tmp_path_factory) -> dict[str, Path]:
    return built_alone(tmp_path_factory.mktemp("subcharts") / "charts")


def render(helm, chart: Path, *args: str, release: str = "team") -> helm_cli.Result:
    return helm_cli.run(helm, "template", release, str(chart), "--namespace", "research",
                        "--kube-version", kubernetes_version(), *RENDER_ONLY, *args)


@pytest.mark.parametrize("name", paths.SUBCHARTS)
def test_each_component_lints_and_renders_alone(helm, validator, standalone, name):
    args, kinds = USE_CASES[name]
    lint = helm_cli.run(helm, "lint", "--strict", str(standalone[name]), "--kube-version", kubernetes_version(), *args)
    assert lint.returncode == 0 and "[ERROR]" not in lint.output and "[WARNING]" not in lint.output, lint.output
    result = render(helm, standalone[name], *args)
    assert result.returncode == 0, result.output
    documents = result.documents()
    assert [e for doc in documents for e in validator.errors(doc)] == []
    assert {doc["kind"] for doc in documents} == kinds


def test_observability_alone_selects_the_named_cluster(helm, standalone):
    args, _ = USE_CASES["observability"]
    monitors = [d for d in render(helm, standalone["observability"], *args).documents() if d["kind"] == "PodMonitor"]
    assert {m["spec"]["selector"]["matchLabels"]["ray.io/cluster"] for m in monitors} == {"team-ray"}


def test_ppo_job_alone_submits_to_the_given_cluster(helm, standalone):
    args, _ = USE_CASES["ppo-job"]
    jobs = [d for d in render(helm, standalone["ppo-job"], *args).documents() if d["kind"] == "Job"]
    env = {e["name"]: e.get("value") for job in jobs for e in job["spec"]["template"]["spec"]["containers"][0]["env"]}
    assert env["RAY_DASHBOARD_URL"] == "http://team-ray-head-svc.research.svc:8265"
    mounts = [v for job in jobs for v in job["spec"]["template"]["spec"]["volumes"] if "persistentVolumeClaim" in v]
    assert {v["persistentVolumeClaim"]["claimName"] for v in mounts} == {"shared-data"}


def test_a_component_alone_runs_the_rulebook_with_its_own_field_names(helm, standalone):
    result = render(helm, standalone["raycluster"], "--set", "head.serviceType=LoadBalancer")
    assert result.returncode != 0
    assert "2 value(s) to fix" in result.stderr, result.stderr
    assert "  - head.serviceType=LoadBalancer:" in result.stderr and "--set head.allowUnauthenticatedService=true" in result.stderr
    assert "  - global.storage.existingClaim=\"\":" in result.stderr
    assert "raycluster." not in result.stderr  # no umbrella prefix where the chart is installed alone


# One rule of each component broken where the component is installed alone, as it names the field there.
OWN_RULE = {
    "storage": (["--set", "type=nas"], 'nas.server="":'),
    "raycluster": ([*CLAIM, "--set", "nccl.IB_HCA=mlx5"], "nccl.IB_HCA=mlx5:"),
    "ppo-job": ([*CLAIM, "--set", "actor.ppoMicroBatchSizePerGpu=7"], "actor.ppoMicroBatchSizePerGpu=7:"),
    "observability": (["--set", "rayClusterName=team-ray", "--set", "podMonitor.enabled=true"], "podMonitor.enabled=true:"),
}


@pytest.mark.parametrize("name", paths.SUBCHARTS)
def test_each_component_alone_fails_on_its_own_rule(helm, standalone, name):
    """Its own validate.yaml runs the rulebook (under the umbrella only the umbrella's does)."""
    args, line = OWN_RULE[name]
    result = helm_cli.run(helm, "template", "team", str(standalone[name]), "--namespace", "research",
                          "--kube-version", kubernetes_version(), *args)  # no PodMonitor API: observability's rule
    assert result.returncode != 0 and "1 value(s) to fix" in result.stderr, result.stderr
    assert f"  - {line} " in result.stderr, result.stderr


def test_a_component_alone_checks_its_values_schema(helm, standalone):
    """Alone, a component's values meet its section of the values schema and the global section, before any
    template reads them."""
    result = render(helm, standalone["ppo-job"], *CLAIM, "--set", "data.trainBatchSize=many", "--set", "global.gpu=x")
    assert result.returncode != 0 and "ppo-job:\n" in result.stderr, result.stderr
    assert "at '/data/trainBatchSize': got string, want integer" in result.stderr
    assert "at '/global/gpu': got string, want object" in result.stderr


def test_no_gpu_worker_rule_past_the_schema(helm, standalone):
    """The schema keeps global.gpu.nodes >= 1 (under the umbrella 0 GPUs would also divide by zero in the
    batch rules); past it (--skip-schema-validation), the raycluster component alone still names the field."""
    result = helm_cli.run(helm, "template", "team", str(standalone["raycluster"]), *CLAIM, "--skip-schema-validation",
                          "--set", "global.gpu.nodes=0", "--set", "head.trainsOnHead=false")
    assert result.returncode != 0 and "  - global.gpu.nodes=0: leaves no GPU worker" in result.stderr, result.stderr


@pytest.mark.parametrize("name", ["raycluster", "ppo-job"])
def test_rayjob_mode_needs_the_umbrella_by_each_components_own_rule(helm, standalone, name):
    """The RayJob embeds both components' specs: only the umbrella renders it, so a component alone refuses the mode."""
    result = render(helm, standalone[name], *CLAIM, "--set", "global.mode=RayJob")
    assert result.returncode != 0 and "  - global.mode=RayJob: needs the umbrella chart" in result.stderr, result.stderr


def test_the_umbrella_checks_once_with_every_component_in_view(helm):
    """Under the umbrella only its own call of the rulebook runs: one failure, not one per component."""
    result = helm_cli.template(helm, "--set", "raycluster.head.serviceType=LoadBalancer",
                               "--set", "ppo-job.actor.ppoMicroBatchSizePerGpu=7")
    assert result.returncode != 0
    assert result.stderr.count("value(s) to fix") == 1 and "verl-ppo: 2 value(s) to fix" in result.stderr


@pytest.mark.parametrize("name", ["verl-ppo", *paths.SUBCHARTS])
def test_helm_show_readme_is_the_generated_readme(helm, standalone, name):
    chart = paths.CHART if name == "verl-ppo" else standalone[name]
    shown = helm_cli.run(helm, "show", "readme", str(chart))
    assert shown.returncode == 0 and shown.stdout.strip() == (chart / "README.md").read_text().strip()
    assert "## Parameters" in shown.stdout


def test_every_component_declares_the_library():
    for name in paths.SUBCHARTS:
        meta = yaml.safe_load((paths.subchart_dir(name) / "Chart.yaml").read_text())
        assert [dep["name"] for dep in meta.get("dependencies", [])] == [paths.LIBRARY], name
        assert (paths.subchart_dir(name) / ".helmignore").is_file()
        assert meta["home"] == yaml.safe_load((paths.CHART / "Chart.yaml").read_text())["home"]


def test_generator_check_checks_a_component_alone(standalone, capsys):
    chart = str(standalone["ppo-job"])
    assert generator_main(["check", "--chart", chart, *CLAIM]) == 0, capsys.readouterr().out
    assert generator_main(["check", "--chart", chart, *CLAIM, "--set", "actor.ppoMicroBatchSizePerGpu=7"]) == 1
    assert "actor.ppoMicroBatchSizePerGpu=7: must divide 16" in capsys.readouterr().out


@pytest.mark.parametrize("umbrella", ["elsewhere", "holding-it"])
def test_generator_check_checks_a_component_alone_with_its_extra_args(standalone, capsys, monkeypatch, umbrella):
    """ppo-job alone: its extraArgs meet veRL's config as under the umbrella, named without the umbrella's prefix;
    also with the umbrella one level up, holding it in its charts/ (as --chart's help names it: a path that
    begins with the umbrella's)."""
    chart = standalone["ppo-job"]
    if umbrella == "holding-it":
        monkeypatch.setattr(paths, "CHART", chart.parent.parent)
    args = ["check", "--chart", str(chart), *CLAIM, "--set", "extraArgs[0]=trainer.val_before_trian=False"]
    assert generator_main(args) == 1
    assert ": extraArgs[0]=trainer.val_before_trian=False: is rejected by veRL" in capsys.readouterr().out
