"""Tier 2: the chart's helm-unittest suites (charts/verl-ppo/tests/*_test.yaml, the plain cases: a value in, a field
out), run by the pinned helm-unittest plugin under Helm 3 and Helm 4: every suite runs, every case passes, and a
case that expects another field fails the run."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from generator import paths
from support.tools import helm_unittest_plugins

SUITES = sorted((paths.CHART / "tests").glob("*_test.yaml"))


def unittest(helm: Path, chart: Path) -> subprocess.CompletedProcess:
    plugins = helm_unittest_plugins()
    if not (plugins / "unittest" / "plugin.yaml").is_file():
        pytest.fail(f"{plugins} has no helm-unittest plugin: run lab/scripts/setup.sh helm-unittest (make setup)")
    return subprocess.run([str(helm), "unittest", "--strict", str(chart)], capture_output=True,
                          text=True, timeout=300, env={**os.environ, "HELM_PLUGINS": str(plugins)})


def test_every_suite_runs_and_passes(helm):
    assert len(SUITES) >= 5, SUITES
    result = unittest(helm, paths.CHART)
    output = result.stdout + result.stderr
    assert result.returncode == 0, output
    assert re.search(rf"^Test Suites:\s+{len(SUITES)} passed, {len(SUITES)} total$", output, re.MULTILINE), output
    tests = int(re.search(r"^Tests:\s+(\d+) passed, \1 total$", output, re.MULTILINE).group(1))
    assert tests >= 20, output


def test_a_case_that_expects_another_field_fails_the_run(helm, tmp_path):
    chart = tmp_path / "charts" / "verl-ppo"
    shutil.copytree(paths.CHART, chart)
    (tmp_path / "values").symlink_to(paths.VALUES_DIR)  # the suites read values/ as the repository lays it out
    suite = chart / "tests" / "raycluster_test.yaml"
    text, expected = suite.read_text(), "{name: as-metrics, containerPort: 44217}"
    assert text.count(expected) == 1
    suite.write_text(text.replace(expected, expected.replace("44217", "44218")))
    result = unittest(helm, chart)
    output = result.stdout + result.stderr
    assert result.returncode != 0
    assert re.search(r"^Tests:\s+1 failed, \d+ passed", output, re.MULTILINE), output
    assert "declares on the head the ports the PodMonitors scrape" in output
