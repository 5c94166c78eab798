"""The values schema: schemas/values.schema.yaml is the source; each chart gets its part as JSON.

The umbrella chart gets the whole schema. A subchart installed on its own gets its section of it, with
the release-wide `global` section (Helm hands the subchart its values plus `global` and, under the
umbrella, the `enabled` switch; the section declares both).
"""

from __future__ import annotations

import copy
import json
from functools import lru_cache
from pathlib import Path
from typing import Any

import yaml

from generator import paths


@lru_cache(maxsize=1)
def values_schema() -> dict[str, Any]:
    return yaml.safe_load(paths.VALUES_SCHEMA.read_text())


def subchart_schema(name: str) -> dict[str, Any]:
    schema = values_schema()
    section = copy.deepcopy(schema["properties"][name])
    section["properties"]["global"] = copy.deepcopy(schema["properties"]["global"])
    return {"$schema": schema["$schema"], "title": f"verl-ppo {name} values", **section,
            "definitions": schema["definitions"]}


def _without_required(schema: Any) -> Any:
    if isinstance(schema, dict):
        return {key: _without_required(value) for key, value in schema.items() if key != "required"}
    if isinstance(schema, list):
        return [_without_required(item) for item in schema]
    return schema


def umbrella_schema() -> dict[str, Any]:
    """The whole schema, minus `required` inside the components' sections: `helm lint` checks the
    umbrella's schema against the umbrella's values.yaml alone, which no longer holds the components'
    defaults; each component's own schema (checked against its values with its defaults) keeps them."""
    schema = copy.deepcopy(values_schema())
    for name in paths.SUBCHARTS:
        schema["properties"][name] = _without_required(schema["properties"][name])
    return schema


def _json(schema: dict[str, Any]) -> str:
    return json.dumps(schema, indent=2, sort_keys=False) + "\n"


def chart_schemas() -> dict[Path, str]:
    """What each chart's values.schema.json must contain."""
    schemas = {paths.CHART_SCHEMA: _json(umbrella_schema())}
    for name in paths.SUBCHARTS:
        schemas[paths.subchart_dir(name) / "values.schema.json"] = _json(subchart_schema(name))
    return schemas
