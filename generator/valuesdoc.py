"""Each chart's README.md, generated from the `# --` comments of its values.yaml, grouped by section."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from itertools import groupby
from pathlib import Path

import jinja2
import yaml

from generator import paths

_KEY = re.compile(r"^(?P<indent> *)(?P<key>[A-Za-z0-9_.-]+):(?P<rest>.*)$")
_environment = jinja2.Environment(loader=jinja2.FileSystemLoader(paths.TEMPLATES), undefined=jinja2.StrictUndefined,
                                  keep_trailing_newline=True)


@dataclass(frozen=True)
class ComponentUse:
    """What a component serves on its own, as the umbrella chart's values that serve it (one line)."""

    what: str
    sets: str


# Each component's use without the others: the umbrella with the others switched off (tests/chart/test_subcharts.py
# renders each).
COMPONENT_USES = {
    "storage": ComponentUse("the shared claim alone, e.g. to load data and models before any cluster exists",
                            "--set raycluster.enabled=false --set ppo-job.enabled=false --set observability.enabled=false "
                            "--set storage.size=500Gi"),
    "raycluster": ComponentUse("a RayCluster sized for a GPU node type, without the submitter Job: submit your own jobs to it",
                               "--set ppo-job.enabled=false --set observability.enabled=false --set storage.enabled=false "
                               "--set global.storage.existingClaim=shared-data --set global.gpu.nodes=3"),
    "ppo-job": ComponentUse("a run on an existing Ray cluster: the submitter Job sends it there, waits for its GPUs and "
                            "exits with its outcome",
                            "--set raycluster.enabled=false --set observability.enabled=false --set storage.enabled=false "
                            "--set global.storage.existingClaim=shared-data "
                            "--set ppo-job.dashboardURL=http://team-ray-head-svc.research.svc:8265"),
    "observability": ComponentUse("PodMonitors and Ray's Grafana dashboards for an existing KubeRay cluster, selected by name",
                                  "--set storage.enabled=false --set raycluster.enabled=false --set ppo-job.enabled=false "
                                  "--set observability.rayClusterName=team-ray"),
}


@dataclass(frozen=True)
class Parameter:
    path: str
    default: str
    description: str

    @property
    def section(self) -> str:
        return self.path.split(".", 1)[0]


def parameters(values_text: str, prefix: str = "") -> list[Parameter]:
    """Each key preceded by a `# --` comment (continued by plain `#` lines) is a parameter; its
    default is read from the parsed YAML, so block lists and maps show as they load."""
    values = yaml.safe_load(values_text)
    found, stack, comment = [], [], []
    for line in values_text.splitlines():
        stripped = line.strip()
        if stripped.startswith("# --"):
            comment = [stripped[4:].strip()]
            continue
        if stripped.startswith("#") and comment:
            comment.append(stripped[1:].strip())
            continue
        match = _KEY.match(line)
        if not match:
            if not stripped.startswith("-"):
                comment = []
            continue
        stack[len(match.group("indent")) // 2:] = [match.group("key")]
        if comment:
            found.append(Parameter(prefix + ".".join(stack), _default(values, stack), " ".join(comment)))
        comment = []
    return found


def _default(values: dict, path: list[str]) -> str:
    for key in path:
        values = values[key]
    return values if isinstance(values, str) and values else json.dumps(values)


def table(params: list[Parameter]) -> str:
    rows = ["| Parameter | Default | Description |", "|---|---|---|"]
    for param in params:
        default = param.default.replace("|", "\\|")
        rows.append(f"| `{param.path}` | `{default}` | {param.description.replace('|', '/')} |")
    return "\n".join(rows)


def sections(params: list[Parameter]) -> list[tuple[str, str]]:
    """(section, table) for each top-level key, in values.yaml's order."""
    return [(name, table(list(group))) for name, group in groupby(params, key=lambda param: param.section)]


def chart_readme(chart: Path) -> str:
    meta = yaml.safe_load((chart / "Chart.yaml").read_text())
    own = parameters((chart / "values.yaml").read_text())
    is_umbrella = chart == paths.CHART
    if is_umbrella:  # each component's parameters in its section, after its `enabled` switch
        for name in paths.SUBCHARTS:
            component = parameters((paths.subchart_dir(name) / "values.yaml").read_text(), f"{name}.")
            at = max(i for i, param in enumerate(own) if param.section in ("global", name)) + 1
            own[at:at] = component
    return _environment.get_template("chart-readme.md.j2").render(
        chart=meta, umbrella=is_umbrella, sections=sections(own), components=paths.SUBCHARTS, uses=COMPONENT_USES)


def readmes() -> dict[Path, str]:
    """What each chart's README.md must contain."""
    return {chart / "README.md": chart_readme(chart) for chart in paths.chart_dirs()}
