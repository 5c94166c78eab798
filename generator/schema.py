"""The values schema: schemas/values.schema.yaml is the source, the chart gets it as JSON."""

from __future__ import annotations

import json
from functools import lru_cache
from typing import Any

import yaml

from generator import paths


@lru_cache(maxsize=1)
def values_schema() -> dict[str, Any]:
    return yaml.safe_load(paths.VALUES_SCHEMA.read_text())


def chart_schema_json() -> str:
    """What charts/verl-ppo/values.schema.json must contain."""
    return json.dumps(values_schema(), indent=2, sort_keys=False) + "\n"
