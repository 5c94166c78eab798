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
    """What a component creates, and what it serves on its own with the values that serve it besides switching
    the other components off."""

    creates: str
    what: str
    values: str


# Each component's use without the others: the umbrella with the others switched off (tests/chart/test_subcharts.py
# renders each). Keyed by the components of the umbrella's Chart.yaml (paths.components()).
COMPONENT_USES = {
    "storage": ComponentUse(
        creates="the shared ReadWriteMany claim (dynamic, VKE TOS or NAS)",
        what="the shared claim alone, e.g. to load data and models before any cluster exists",
        values="--set storage.size=500Gi"),
    "raycluster": ComponentUse(
        creates="the RayCluster (in RayJob mode the head's Service), its dashboard Ingress and NetworkPolicy",
        what="a RayCluster sized for a GPU node type, without the submitter Job: submit your own jobs to it",
        values="--set global.storage.existingClaim=shared-data --set global.gpu.nodes=3"),
    "ppo-job": ComponentUse(
        creates="the submitter Job, its ConfigMap, RBAC, hooks, the optional preparation Job",
        what="a run on an existing Ray cluster: the submitter Job sends it there, waits for its GPUs and exits "
             "with its outcome",
        values="--set global.storage.existingClaim=shared-data "
               "--set ppo-job.dashboardURL=http://team-ray-head-svc.research.svc:8265"),
    "observability": ComponentUse(
        creates="PodMonitors, Grafana dashboard ConfigMaps, TensorBoard",
        what="PodMonitors and Ray's Grafana dashboards for an existing KubeRay cluster, selected by name",
        values="--set observability.rayClusterName=team-ray"),
}


def use_sets(name: str) -> str:
    """The umbrella's values of a component's use alone: every other component switched off, then its own."""
    if name not in COMPONENT_USES:
        raise KeyError(f"component {name} (charts/verl-ppo/Chart.yaml) has no use in generator/valuesdoc.py "
                       "COMPONENT_USES")
    others = [f"--set {other}.enabled=false" for other in paths.components() if other != name]
    return " ".join([*others, COMPONENT_USES[name].values])


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
        for name in paths.components():
            component = parameters((paths.subchart_dir(name) / "values.yaml").read_text(), f"{name}.")
            at = max(i for i, param in enumerate(own) if param.section in ("global", name)) + 1
            own[at:at] = component
    uses = {name: {"creates": COMPONENT_USES[name].creates, "what": COMPONENT_USES[name].what, "sets": use_sets(name)}
            for name in paths.components()}
    return _environment.get_template("chart-readme.md.j2").render(
        chart=meta, umbrella=is_umbrella, sections=sections(own), uses=uses)


def readmes() -> dict[Path, str]:
    """What each chart's README.md must contain."""
    return {chart / "README.md": chart_readme(chart) for chart in paths.chart_dirs()}
