"""Running the pinned Helm binaries on the chart."""

from __future__ import annotations

import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from support import yamlload
from support.rendercache import RENDERS
from support.tools import ROOT, helm_binaries, kubernetes_version

CHART = ROOT / "charts" / "verl-ppo"
# A cluster with the Prometheus operator: lets the PodMonitors render under `auto`.
MONITORING_API = "monitoring.coreos.com/v1/PodMonitor"


@dataclass
class Result:
    returncode: int
    stdout: str
    stderr: str

    @property
    def output(self) -> str:
        return self.stdout + self.stderr

    def documents(self) -> list[dict[str, Any]]:
        return [doc for doc in yamlload.load_all(self.stdout) if doc]


def execute(command: list[str]) -> tuple[int, str, str]:
    completed = subprocess.run(command, capture_output=True, text=True, timeout=120)
    return completed.returncode, completed.stdout, completed.stderr


def run(binary: Path, *args: str) -> Result:
    """Helm's result; an offline render or lint run before in this session with the same inputs is not run again."""
    return Result(*RENDERS.run([str(binary), *args], execute))


def template(binary: Path, *extra: str, release: str = "verl-ppo", namespace: str = "training",
             monitoring: bool = True, chart: Path = CHART) -> Result:
    args = ["template", release, str(chart), "--namespace", namespace, "--kube-version", kubernetes_version()]
    if monitoring:
        args += ["--api-versions", MONITORING_API]
    return run(binary, *args, *extra)


def valid_documents(result: Result, validator: Any) -> list[dict]:
    """A render's objects, after asserting Helm succeeded and the validator finds nothing wrong in any."""
    assert result.returncode == 0, result.output
    documents = result.documents()
    problems = [error for doc in documents for error in validator.errors(doc)]
    assert problems == [], "\n".join(problems)
    return documents


def rendered_valid(binary: Path, validator: Any, *extra: str, **kwargs: Any) -> list[dict]:
    """`helm template` of the chart with `extra`, every object valid (valid_documents)."""
    return valid_documents(template(binary, *extra, **kwargs), validator)


def notes(*extra: str) -> str:
    """NOTES.txt as Helm 4 prints it after a client-only dry run (Helm 3 needs a cluster for that)."""
    result = run(helm_binaries()["helm4"], "install", "verl-ppo", str(CHART), "--dry-run=client",
                 "--namespace", "training", *extra)
    assert result.returncode == 0, result.output
    return result.stdout.split("NOTES:", 1)[1]


def lint(binary: Path, *extra: str) -> Result:
    return run(binary, "lint", "--strict", str(CHART), "--kube-version", kubernetes_version(), *extra)
