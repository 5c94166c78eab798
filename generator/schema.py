"""The values schema: schemas/values.schema.yaml is the source; each chart gets it as values.schema.json.

Helm checks values.schema.json before any template renders and refuses a mistyped, out-of-range or
unknown value, naming its path. The JSON is the source without its x- keywords: each node's fix sentence
(its x-fix, else the x-fixes of its keywords) is appended to its `description` ("... Fix: <sentence>"),
so editors and Artifact Hub show it. `generator check` reads the source itself (generator/schemafindings.py)
and prints the same fix beside each finding.

The umbrella's schema is the whole source. Helm also checks each component's schema against its section of
the values, which holds a copy of the release-wide `global` (checked in full by the umbrella's schema, so
a component's schema only knows it is a map), the `enabled` switch and the library's section besides the
component's own keys.
"""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path
from typing import Any, Callable

import yaml

from generator import paths
from generator.algorithms import algorithms
from generator.schemafindings import Wording, unfixed
from generator.verlversions import rollout_engines, trainer_modes, version_names

# Keywords whose x-fixes sentence mends a value (required and additionalProperties mend a map's keys).
VALUE_KEYWORDS = ("type", "enum", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "minLength",
                  "maxLength", "minItems", "maxItems", "uniqueItems")
# Keywords whose value maps names to schemas (the names are not keywords).
_NAMED_SCHEMAS = ("properties", "patternProperties", "definitions")
# Keywords whose value lists schemas that one fix sentence, the node's own, covers.
_FORMS = ("anyOf", "allOf")
GENERATED_NOTE = "Generated from schemas/values.schema.yaml by `python -m generator schema`."
# The lists a node's `x-enum-from` names: the chart's tables, so the schema types none of them again.
TABLE_ENUMS: dict[str, Callable[[], list[str]]] = {
    "verl-versions": version_names,
    "rollout-engines": rollout_engines,
    "trainer-modes": trainer_modes,
    "algorithms": lambda: list(algorithms()),
}


def _enums_filled(node: Any) -> Any:
    """The schema with each `x-enum-from: <table>` replaced by `enum: <the table's list>`."""
    if isinstance(node, list):
        return [_enums_filled(item) for item in node]
    if not isinstance(node, dict):
        return node
    filled = {key: _enums_filled(value) for key, value in node.items() if key != "x-enum-from"}
    if "x-enum-from" in node:
        filled["enum"] = TABLE_ENUMS[node["x-enum-from"]]()
    return filled


@lru_cache(maxsize=1)
def values_schema() -> dict[str, Any]:
    schema = _enums_filled(yaml.safe_load(paths.VALUES_SCHEMA.read_text()))
    missing = unfixed(schema)
    if missing:
        raise ValueError(f"{paths.VALUES_SCHEMA}: constraints without a fix sentence:\n" + "\n".join(missing))
    return schema


def value_maximum(*keys: str) -> int:
    """The schema's `maximum` for the values key at that path (e.g. "global", "gpu", "nodes"): the bound a CLI
    argument that lands there shares with the chart, written once in the schema."""
    node = values_schema()
    for key in keys:
        node = node["properties"][key]
    return node["maximum"]


def fix_sentence(node: dict[str, Any], wording: Wording) -> str:
    """What mends a value of this node: its x-fix, else the x-fixes of its value keywords ("" when none)."""
    if "x-fix" in node:
        return node["x-fix"]
    fixes = [wording.fix(keyword, node) for keyword in VALUE_KEYWORDS if keyword in node]
    return "; ".join(dict.fromkeys(fixes))


def _published(node: Any, wording: Wording, covered: bool = False) -> Any:
    """A schema node as the charts publish it: no x- keywords, the fix sentence in its description (not
    beside $ref, where JSON schema ignores it, nor in the forms of an anyOf or allOf its node's fix covers)."""
    if isinstance(node, list):
        return [_published(item, wording, covered) for item in node]
    if not isinstance(node, dict):
        return node
    fix = "" if covered or "$ref" in node else fix_sentence(node, wording)
    published: dict[str, Any] = {}
    if fix:
        published["description"] = f"{node['description']} Fix: {fix}" if "description" in node else f"Fix: {fix}"
    for key, value in node.items():
        if key.startswith("x-") or key in published:
            continue
        if key in _NAMED_SCHEMAS:
            published[key] = {name: _published(child, wording) for name, child in value.items()}
        elif key in ("enum", "const", "required", "default"):
            published[key] = value
        else:
            published[key] = _published(value, wording, covered=key in _FORMS)
    return published


def _merged_maps_unrequired(node: Any) -> Any:
    """The schema without `required` where Helm's lint merges a user's keys with no defaults under them.

    `helm lint` checks the umbrella's schema against its own values.yaml and the user's values, without the
    components' defaults: a user's partial section (raycluster.head.resources.cpu alone) would miss keys
    the defaults hold. List items and pattern-keyed maps come whole from the user and keep theirs; each
    component's own schema keeps every `required`, and Helm checks it against the merged section."""
    if isinstance(node, list):
        return [_merged_maps_unrequired(item) for item in node]
    if not isinstance(node, dict):
        return node
    return {key: value if key in ("items", "patternProperties", "enum", "const", "default")
            else {name: _merged_maps_unrequired(child) for name, child in value.items()} if key in _NAMED_SCHEMAS
            else _merged_maps_unrequired(value)
            for key, value in node.items() if key != "required"}


def umbrella_schema() -> dict[str, Any]:
    source = values_schema()
    published = _published(source, Wording(source))
    properties = {name: section if name == "global" else _merged_maps_unrequired(section)
                  for name, section in published["properties"].items()}
    return {**published, "properties": properties, "definitions": _merged_maps_unrequired(published["definitions"]),
            "description": GENERATED_NOTE}


def subchart_schema(name: str) -> dict[str, Any]:
    """A component's section of the schema, with every definition, as Helm checks its part of the values."""
    source = values_schema()
    section = {**source["properties"][name], "definitions": source["definitions"]}
    return {"$schema": source["$schema"], "title": f"verl-ppo {name} values", **_published(section, Wording(source)),
            "description": GENERATED_NOTE}


def _json(schema: dict[str, Any]) -> str:
    return json.dumps(schema, indent=2, ensure_ascii=False) + "\n"


def chart_schemas() -> dict[Path, str]:
    """What each chart's values.schema.json must contain."""
    schemas = {paths.CHART_SCHEMA: _json(umbrella_schema())}
    for name in paths.components():
        schemas[paths.subchart_dir(name) / "values.schema.json"] = _json(subchart_schema(name))
    return schemas
