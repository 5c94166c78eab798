"""chart-testing's `ct lint` over the umbrella, as chart repositories run it in CI: Chart.yaml against
the pinned release's schema (yamale), Chart.yaml and values.yaml against lab/lintconf.yaml (yamllint), and
`helm lint` of the chart with every ci/*-values.yaml it has. The subcharts are its components, not charts
to install alone (their `helm lint` alone stops at the component check): their Chart.yaml and values.yaml
meet the same yamale and yamllint checks directly. ct is built by lab/scripts/build-release-tools.sh; yamllint
and yamale come from the project venv; lab/ct.yaml holds the settings. Runs with Helm 3 and Helm 4 as the
`helm` ct finds on PATH."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from generator import paths
from generator.paths import tool_cache
from lab.pins import pinned_versions
from lab.release.versions import Layout

CHARTS = Layout(paths.ROOT).charts()


def ct_binary() -> Path:
    return tool_cache() / "bin" / f"ct-{pinned_versions()['CHART_TESTING_VERSION']}"


def chart_schema() -> Path:
    return tool_cache() / f"chart-testing-{pinned_versions()['CHART_TESTING_VERSION']}" / "chart_schema.yaml"


def ct_lint(helm: Path, work: Path, root: Path, charts: list[Path]) -> subprocess.CompletedProcess:
    """`ct lint` in root (a git work tree, as ct wants), with `helm` on PATH being the one under test."""
    for needed in (ct_binary(), chart_schema()):
        if not needed.exists():
            pytest.fail(f"{needed} is missing: run lab/scripts/setup.sh (make setup) first")
    tools = work / "bin"
    tools.mkdir(exist_ok=True)
    (tools / "helm").unlink(missing_ok=True)
    (tools / "helm").symlink_to(helm)
    # yamllint and yamale: console scripts of the venv this test runs in.
    env = {**os.environ, "PATH": os.pathsep.join([str(tools), str(Path(sys.executable).parent), os.environ["PATH"]]),
           "HOME": str(work)}
    return subprocess.run([str(ct_binary()), "lint", "--config", str(root / "lab" / "ct.yaml"),
                           "--chart-yaml-schema", str(chart_schema()),
                           "--charts", ",".join(str(chart.relative_to(root)) for chart in charts)],
                          cwd=root, env=env, capture_output=True, text=True, timeout=600)


def test_ct_lint_the_chart(helm, tmp_path):
    root = scratch_repository(tmp_path)  # ct's `helm dependency build` writes into the chart
    result = ct_lint(helm, tmp_path, root, [root / paths.CHART.relative_to(paths.ROOT)])
    output = result.stdout + result.stderr
    assert result.returncode == 0, output
    assert "✔︎ verl-ppo =>" in output, f"verl-ppo not linted:\n{output}"


def component_lint(chart: Path) -> subprocess.CompletedProcess:
    """ct's own checks of a chart's files without its `helm lint`: yamale on Chart.yaml, yamllint on both."""
    if not chart_schema().exists():
        pytest.fail(f"{chart_schema()} is missing: run scripts/setup.sh (make setup) first")
    tools = Path(sys.executable).parent
    yamale = subprocess.run([str(tools / "yamale"), "--schema", str(chart_schema()), str(chart / "Chart.yaml")],
                            capture_output=True, text=True, timeout=120)
    if yamale.returncode:
        return yamale
    return subprocess.run([str(tools / "yamllint"), "--config-file", str(paths.ROOT / "lab" / "lintconf.yaml"),
                           str(chart / "Chart.yaml"), str(chart / "values.yaml")], capture_output=True, text=True,
                           timeout=120)


@pytest.mark.parametrize("name", [name for name in CHARTS if name != "verl-ppo"])
def test_each_components_files_pass_cts_file_checks(name):
    result = component_lint(CHARTS[name])
    assert result.returncode == 0, result.stdout + result.stderr


def scratch_repository(work: Path) -> Path:
    """A git work tree holding a copy of the charts, values files and ct settings (ct wants a git
    repository)."""
    root = work / "repository"
    root.mkdir()
    (root / "lab").mkdir()
    for name in ("charts", "values", "lab/ct.yaml", "lab/lintconf.yaml"):
        source = paths.ROOT / name
        (shutil.copytree if source.is_dir() else shutil.copy)(source, root / name)
    subprocess.run(["git", "init", "-q", "-b", "main"], cwd=root, check=True)
    return root


@pytest.mark.parametrize("breakage, expected", [
    # yamale: a maintainer needs a name
    (lambda chart: (chart / "Chart.yaml").write_text((chart / "Chart.yaml").read_text()
                                                     + "maintainers:\n  - email: someone@example.invalid\n"),
     "maintainers"),
    # yamllint: trailing spaces in values.yaml
    (lambda chart: (chart / "values.yaml").write_text((chart / "values.yaml").read_text() + "extra: 1   \n"),
     "trailing spaces"),
])
def test_ct_lint_fails_a_broken_chart(helm, tmp_path, breakage, expected):
    root = scratch_repository(tmp_path)
    umbrella = root / paths.CHART.relative_to(paths.ROOT)
    breakage(umbrella)
    result = ct_lint(helm, tmp_path, root, [umbrella])
    assert result.returncode != 0 and expected in result.stdout + result.stderr, result.stdout + result.stderr
    storage = root / CHARTS["storage"].relative_to(paths.ROOT)
    breakage(storage)
    result = component_lint(storage)
    assert result.returncode != 0 and expected in result.stdout + result.stderr, result.stdout + result.stderr
