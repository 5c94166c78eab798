"""The PromQL in Ray's Grafana dashboards, as Grafana sends it once template variables are filled in."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

from support.tools import ROOT

DASHBOARDS = ROOT / "charts" / "verl-ppo" / "charts" / "observability" / "dashboards"
# Grafana's built-in interval variables, as Grafana would fill them for a one-hour view.
BUILTINS = {"__rate_interval": "1m", "__interval": "15s", "__interval_ms": "15000", "__range": "1h",
            "__range_s": "3600", "__range_ms": "3600000"}
VARIABLE = re.compile(r"\$\{(\w+)(?::\w+)?\}|\$(\w+)|\[\[(\w+)\]\]")
# Grafana-side functions of variable queries around a PromQL selector or expression.
LABEL_VALUES = re.compile(r"^\s*label_values\((?P<expr>.*),\s*[\w.]+\s*\)\s*$", re.DOTALL)
QUERY_RESULT = re.compile(r"^\s*query_result\((?P<expr>.*)\)\s*$", re.DOTALL)
# Metrics only a node with GPUs (or TPUs) exports: no data from them on a CPU test machine.
ACCELERATOR_METRICS = re.compile(r"ray_node_gpus_|ray_node_gram_|ray_component_gpu|ray_tpu_")


@dataclass(frozen=True)
class Query:
    dashboard: str
    where: str  # panel title and target refId, or "variable <name>"
    expr: str  # as in the dashboard, variables unfilled

    @property
    def needs_accelerator(self) -> bool:
        return bool(ACCELERATOR_METRICS.search(self.expr))


def shipped() -> list[Path]:
    return sorted(DASHBOARDS.glob("*.json"))


def _panels(panels: list[dict]) -> Iterator[dict]:
    for panel in panels:
        yield panel
        yield from _panels(panel.get("panels", []))  # rows hold their panels when collapsed


def panel_queries(path: Path) -> list[Query]:
    board = json.loads(path.read_text())
    return [Query(path.stem, f"panel {panel.get('title')!r} target {target.get('refId', index)}", target["expr"])
            for panel in _panels(board.get("panels", []))
            for index, target in enumerate(panel.get("targets", []))
            if target.get("expr")]


def variable_queries(path: Path) -> list[Query]:
    """The PromQL inside each query variable (label_values(<selector>, label) or query_result(<expr>))."""
    board = json.loads(path.read_text())
    queries = []
    for variable in board.get("templating", {}).get("list", []):
        if variable.get("type") != "query":
            continue
        raw = variable["query"]["query"] if isinstance(variable["query"], dict) else variable["query"]
        match = LABEL_VALUES.match(raw) or QUERY_RESULT.match(raw)
        if match:
            queries.append(Query(path.stem, f"variable {variable['name']}", match.group("expr")))
    return queries


def fill(expr: str, values: dict[str, str] | None = None, default: str = ".+") -> str:
    """Variables replaced as Grafana does: built-ins by durations, the dashboard's own by `values`
    (a regex, since Ray's filters are =~ matchers), else by `default` (what "All" matches); one in a range
    or a subquery's step (`[$window]`, Ray 2.60's interval variables) by a duration."""
    values = values or {}

    def replace(match: re.Match) -> str:
        name = next(group for group in match.groups() if group)
        in_range = match.string[match.start() - 1:match.start()] in ("[", ":")
        return BUILTINS.get(name) or values.get(name, "1m" if in_range else default)

    return VARIABLE.sub(replace, expr)
