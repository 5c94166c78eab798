"""Helm, for what only Helm can tell `generator check`: the chart's cross-field rules (`helm template`) and the
values as Helm merges them, --set and all. Found through $HELM, then `helm` on PATH, then the project's cache
(`make helm` builds it there). `python -m generator.helm` prints the Helm found, or the cache's path when there
is none (the Makefile's Helm: stdlib only, so the system python3 runs it).
"""

from __future__ import annotations

import atexit
import json
import os
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from generator import paths

_DUMP_TEMPLATE = "{{ toJson .Values }}\n"


class HelmMissing(RuntimeError):
    """No Helm to run."""


@dataclass(frozen=True)
class HelmInputs:
    """What a user gives Helm besides the chart: values files and overrides, release and namespace."""

    files: tuple[Path, ...] = ()
    sets: tuple[str, ...] = ()
    set_strings: tuple[str, ...] = ()
    set_jsons: tuple[str, ...] = ()
    release: str = "verl-ppo"
    namespace: str = "default"

    def arguments(self) -> list[str]:
        args = ["--namespace", self.namespace]
        for flag, items in (("-f", self.files), ("--set", self.sets), ("--set-string", self.set_strings),
                            ("--set-json", self.set_jsons)):
            for item in items:
                args += [flag, str(item)]
        return args


def cached_helm() -> Path:
    """The pinned Helm 4 that `make helm` builds."""
    return paths.tool_cache() / "bin" / "helm4"


def _runnable(path: Path) -> bool:
    return path.is_file() and os.access(path, os.X_OK)


def helm_binary() -> Path:
    """$HELM, else `helm` on PATH, else the project's cached Helm; HelmMissing says what to install."""
    named = os.environ.get("HELM")
    if named:
        if not _runnable(Path(named)):
            raise HelmMissing(f"$HELM is {named}, which is not an executable file: point HELM at a Helm 3 or 4 "
                              "binary, or unset it to use the helm on PATH")
        return Path(named)
    on_path = shutil.which("helm")
    if on_path:
        return Path(on_path)
    if _runnable(cached_helm()):
        return cached_helm()
    raise HelmMissing("no Helm found (no $HELM, no helm on PATH, nothing at "
                      f"{cached_helm()}): install Helm 3 or 4 (https://helm.sh/docs/intro/install/) or run `make helm`")


def template(chart: Path, inputs: HelmInputs, *extra: str) -> subprocess.CompletedProcess[str]:
    """`helm template` of the chart with these inputs."""
    command = [str(helm_binary()), "template", inputs.release, str(chart), *inputs.arguments(), *extra]
    return subprocess.run(command, capture_output=True, text=True, timeout=120)


def scratch_dir(prefix: str) -> Path:
    """A temporary directory, removed when the process exits."""
    root = Path(tempfile.mkdtemp(prefix=prefix))
    atexit.register(shutil.rmtree, root, ignore_errors=True)
    return root


@lru_cache(maxsize=None)
def _values_only_copy(chart: Path) -> Path:
    """A copy of the chart whose only template prints .Values: no rule runs, no schema is applied, so
    even a values file the chart rejects can be read back as Helm merged it."""
    copy = scratch_dir("verl-ppo-values-") / chart.name
    skipped = shutil.ignore_patterns("templates", "values.schema.json", "dashboards", "files")
    shutil.copytree(chart, copy, ignore=skipped)
    (copy / "templates").mkdir()
    (copy / "templates" / "values.json").write_text(_DUMP_TEMPLATE)
    return copy


def merged_values(chart: Path, inputs: HelmInputs) -> dict[str, Any]:
    """The values the chart's templates get, as Helm merges the inputs (its own reading of --set); ValueError
    with Helm's message if Helm refuses them."""
    done = template(_values_only_copy(chart.resolve()), inputs, "--show-only", "templates/values.json")
    if done.returncode:
        raise ValueError(done.stderr.strip())
    return json.loads(done.stdout.split("\n", 2)[2])  # after "---" and "# Source: ..."


if __name__ == "__main__":
    try:
        print(helm_binary())
    except HelmMissing:
        print(cached_helm())
    sys.exit(0)
