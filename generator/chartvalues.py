"""The values a chart's templates get (.Values), merged in Python by Helm 4's rules, so what only reads values
(render, the demo) runs without Helm: the -f files merged in order, each enabled component's defaults under
its name (Chart.yaml's conditions), the chart's `global` copied into each component's, then every default the
values leave out. `generator check` asks Helm instead (helm.py): it takes --set, which only Helm reads.

The rules (Helm's chart/common/util/coalesce.go): maps merge key by key, a list or a scalar replaces; a null
in the values removes that key's default; a null default is left out.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import yaml

from generator import paths

GLOBAL = "global"
Values = dict[str, Any]


@dataclass(frozen=True)
class Chart:
    name: str
    defaults: Values  # its values.yaml
    dependencies: tuple[Chart, ...]  # the charts under its charts/
    conditions: dict[str, str]  # Chart.yaml's condition of each dependency, by name
    requirements: tuple[str, ...]  # the names Chart.yaml lists as dependencies


def _yaml_map(path: Path) -> Values:
    data = yaml.safe_load(path.read_text()) if path.exists() else None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ValueError(f"{path}: values must be a map of keys, not a {type(data).__name__}")
    return data


def load_chart(directory: Path) -> Chart:
    metadata = _yaml_map(directory / "Chart.yaml")
    requirements = tuple(entry["name"] for entry in metadata.get("dependencies") or [])
    loaded = [load_chart(sub.parent) for sub in sorted((directory / "charts").glob("*/Chart.yaml"))]
    # In Helm's order: a chart Chart.yaml does not list first, then as listed (the globals' copies share maps).
    loaded.sort(key=lambda dependency: requirements.index(dependency.name) if dependency.name in requirements else -1)
    return Chart(
        name=metadata["name"],
        defaults=_yaml_map(directory / "values.yaml"),
        dependencies=tuple(loaded),
        conditions={entry["name"]: entry.get("condition", "") for entry in metadata.get("dependencies") or []},
        requirements=requirements,
    )


def merge_files(files: tuple[Path, ...]) -> Values:
    """The -f files, a later one's maps merged into an earlier one's, anything else replaced."""
    def merged(base: Values, over: Values) -> Values:
        out = dict(base)
        for key, value in over.items():
            both_maps = isinstance(value, dict) and isinstance(out.get(key), dict)
            out[key] = merged(out[key], value) if both_maps else value
        return out

    result: Values = {}
    for path in files:
        result = merged(result, _yaml_map(path))
    return result


def _drop_nulls(table: Values) -> None:
    for key, value in list(table.items()):
        if value is None:
            del table[key]
        elif isinstance(value, dict):
            _drop_nulls(value)


def _coalesce_tables(dst: Values, src: Values, merge: bool) -> Values:
    """src's keys under dst's: dst wins; with merge off, a null in dst removes src's value."""
    defaulted = {key for key, value in src.items() if value is not None}
    for key, value in dst.items():
        if value is None:
            src[key] = None
    for key, value in src.items():
        if key in dst and not merge and dst[key] is None and key in defaulted:
            del dst[key]
        elif key not in dst:
            dst[key] = value
        elif isinstance(value, dict) and isinstance(dst[key], dict):
            _coalesce_tables(dst[key], value, merge)
    return dst


def _coalesce_own(chart: Chart, values: Values, merge: bool) -> None:
    """The chart's own defaults under the values."""
    components = {dependency.name for dependency in chart.dependencies}
    for key, default in copy.deepcopy(chart.defaults).items():
        if key not in values:
            if not merge and default is None:
                continue
            if not merge and isinstance(default, dict):
                _drop_nulls(default)
            values[key] = default
        elif values[key] is None and not merge:
            del values[key]
        elif isinstance(values[key], dict) and isinstance(default, dict):
            table_merge = merge or key in components  # a component's section keeps its nulls for its own pass
            if not table_merge:
                _drop_nulls(default)
            _coalesce_tables(values[key], default, table_merge)


def _copy_globals(section: Values, parent: Values) -> None:
    """The parent's global over the component's own (a map merged, the parent's keys first)."""
    own, given = section.get(GLOBAL, {}), parent.get(GLOBAL, {})
    if not isinstance(own, dict) or not isinstance(given, dict):
        return
    for key, value in given.items():
        if isinstance(value, dict):
            table = dict(value)
            if key not in own:
                own[key] = table
            elif isinstance(own[key], dict):
                own[key] = _coalesce_tables(table, own[key], True)
        elif not isinstance(own.get(key), dict):
            own[key] = value
    section[GLOBAL] = own


def _coalesce(chart: Chart, values: Values, merge: bool) -> Values:
    _coalesce_own(chart, values, merge)
    for dependency in chart.dependencies:
        section = values.setdefault(dependency.name, {})
        if not isinstance(section, dict):
            raise ValueError(f"{dependency.name} must be a map of that component's values, not {section!r}")
        _copy_globals(section, values)
        values[dependency.name] = _coalesce(dependency, section, merge)
    return values


def _path_value(values: Values, path: str) -> Any:
    """The scalar at a dotted path (a condition's), or None."""
    *tables, key = path.split(".")
    for name in tables:
        values = values.get(name) if isinstance(values, dict) else None
    found = values.get(key) if isinstance(values, dict) else None
    return None if isinstance(found, dict) else found


def _enabled(chart: Chart, values: Values, path: str = "") -> Chart:
    """The chart without the components its conditions switch off, at every level."""
    merged = _coalesce(chart, copy.deepcopy(values), False)

    def switched_on(name: str) -> bool:
        for condition in filter(None, (part.strip() for part in chart.conditions.get(name, "").split(","))):
            state = _path_value(merged, path + condition)
            if isinstance(state, bool):
                return state
        return True

    kept = tuple(_enabled(dependency, merged, f"{path}{dependency.name}.")
                 for dependency in chart.dependencies if switched_on(dependency.name))
    off = {dependency.name for dependency in chart.dependencies} - {dependency.name for dependency in kept}
    return replace(chart, dependencies=kept, requirements=tuple(name for name in chart.requirements if name not in off))


def _with_component_defaults(chart: Chart) -> Chart:
    """Each chart that lists dependencies takes its components' defaults into its own, nulls kept, deepest first."""
    chart = replace(chart, dependencies=tuple(map(_with_component_defaults, chart.dependencies)))
    return replace(chart, defaults=_coalesce(chart, {}, True)) if chart.requirements else chart


def chart_values(*files: Path, chart_dir: Path = paths.CHART) -> Values:
    """.Values of the chart (the umbrella unless named) with these -f files, as `helm install verl-ppo
    charts/verl-ppo -f ...` gives them to its templates."""
    given = merge_files(files)
    chart = _with_component_defaults(_enabled(load_chart(chart_dir), given))
    return _coalesce(chart, copy.deepcopy(given), False)
