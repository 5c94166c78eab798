"""The Helm values model: values as the pinned Helm merges them, and the chart rendered with them.

Helm itself merges the chart's defaults (the umbrella's and its subcharts'), the -f files in order and
every --set / --set-string / --set-json, with its own YAML typing, list indexes and escaped dots, so
`generator check` always sees what `helm template` and `helm install` see.
"""

from __future__ import annotations

import atexit
import json
import os
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from generator import paths

_DUMP_TEMPLATE = "{{ toJson .Values }}\n"


class HelmMissing(RuntimeError):
    """The pinned Helm is not built yet."""


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


def helm_binary() -> Path:
    """$HELM, else the pinned Helm 4 that `make setup` builds."""
    binary = Path(os.environ.get("HELM") or paths.tool_cache() / "bin" / "helm4")
    if not binary.exists():
        raise HelmMissing(f"{binary} not found: run `make setup` to build the pinned Helm")
    return binary


def template(chart: Path, inputs: HelmInputs, *extra: str) -> subprocess.CompletedProcess[str]:
    """`helm template` of the chart with these inputs."""
    command = [str(helm_binary()), "template", inputs.release, str(chart), *inputs.arguments(), *extra]
    return subprocess.run(command, capture_output=True, text=True, timeout=120)


def scratch_dir(prefix: str) -> Path:
    """A temporary directory, removed when the process exits."""
    root = Path(tempfile.mkdtemp(prefix=prefix))
    atexit.register(shutil.rmtree, root, ignore_errors=True)
    return root


def shown_json(chart: Path, template_path: str, inputs: HelmInputs = HelmInputs()) -> Any:
    """What one template of the chart prints (`helm template --show-only`), read as JSON; ValueError with
    Helm's message if Helm refuses."""
    done = template(chart, inputs, "--show-only", template_path)
    if done.returncode:
        raise ValueError(done.stderr.strip())
    return json.loads(done.stdout.split("\n", 2)[2])  # after "---" and "# Source: ..."


@lru_cache(maxsize=None)
def _values_only_copy(chart: Path) -> Path:
    """A copy of the chart whose only template prints .Values: no rule runs, no schema is applied, so
    even a values file the chart rejects can be read back as Helm merged it."""
    copy = scratch_dir("verl-ppo-values-") / chart.name
    shutil.copytree(chart, copy, ignore=shutil.ignore_patterns("templates", "values.schema.json", "dashboards", "files"))
    (copy / "templates").mkdir()
    (copy / "templates" / "values.json").write_text(_DUMP_TEMPLATE)
    return copy


def merged_values(chart: Path, inputs: HelmInputs) -> dict[str, Any]:
    """The values the chart's templates get, as a dict; ValueError with Helm's message if Helm refuses them."""
    return shown_json(_values_only_copy(chart.resolve()), "templates/values.json", inputs)


def chart_values(*files: Path) -> dict[str, Any]:
    """The umbrella chart's values with these -f files, as `helm install verl-ppo charts/verl-ppo -f ...` sees them."""
    return merged_values(paths.CHART, HelmInputs(files=tuple(files)))
