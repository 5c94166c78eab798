"""Surviving mutants that are equivalent: no input the product can get tells them from the original.
Keyed by (module, operator name, the mutated line's source, stripped); the value says why."""

from __future__ import annotations

EQUIVALENT: dict[tuple[str, str, str], str] = {
    ("generator/summary.py", "core/NumberReplacer",
     'limits = pod_spec["containers"][0].get("resources", {}).get("limits", {})'):
        "containers[0] -> containers[-1]: the chart's Ray pods have one container",
    ("generator/summary.py", "core/NumberReplacer", 'limits = head["containers"][0]["resources"]["limits"]'):
        "containers[0] -> containers[-1]: the chart's Ray pods have one container",
    ("generator/summary.py", "core/NumberReplacer", 'limits = spec["containers"][0]["resources"]["limits"]'):
        "containers[0] -> containers[-1]: the chart's Ray pods have one container",
    ("generator/summary.py", "core/ReplaceComparisonOperator_Eq_LtE",
     'for config in (o for o in objects if o["kind"] == "ConfigMap" and "job.json" in o.get("data", {})):'):
        "only the job ConfigMap has data with job.json; no other kind carries `data`",
    ("generator/summary.py", "core/ReplaceComparisonOperator_Eq_GtE",
     'for config in (o for o in objects if o["kind"] == "ConfigMap" and "job.json" in o.get("data", {})):'):
        "only the job ConfigMap has data with job.json; no other kind carries `data`",
}


def why_equivalent(module: str, operator: str, source_line: str) -> str | None:
    return EQUIVALENT.get((module, operator, source_line.strip()))
