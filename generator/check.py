"""`generator check`: values against the values schema (schemas/values.schema.yaml, with its fix sentences), then the chart's own rules through the pinned
Helm, then what only Python can know (extraArgs against veRL's own config).

No rule is written here: the chart's rulebook (verl-ppo-lib's _rules.tpl and each component's
_rules.tpl) is the only one, and Helm merges the values, so this and `helm template` always agree.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from generator import paths, schemafindings, verlconfig
from generator.finding import Finding
from generator.schema import chart_schema
from generator.helm import HelmInputs, merged_values, template

# One broken rule as the rulebook prints it: "  - <field>=<value>: <why>. Fix: <how>".
_RULE_LINE = re.compile(r"^  - (?P<field>[^=]+)=(?P<value>.*?): (?P<problem>.*)\. Fix: (?P<fix>.*)$")
# A Hydra key=value override (what the rulebook accepts in extraArgs).
OVERRIDE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z0-9_]+)*=")


@dataclass
class Verdict:
    findings: list[Finding] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def schema_findings(chart: Path, values: dict[str, Any]) -> list[Finding]:
    """The values schema's findings, in its own words (what the rulebook's verl-ppo.schemaRules prints)."""
    return schemafindings.findings(chart_schema(chart), values)


def rule_findings(helm_error: str) -> list[Finding]:
    """The broken rules in `helm template`'s error; any other error as one finding with Helm's text."""
    found = [Finding(**match.groupdict()) for match in map(_RULE_LINE.match, helm_error.splitlines()) if match]
    return found or [Finding("(helm template)", "", helm_error.strip(), "see Helm's message")]


def verl_config_findings(job: dict[str, Any], prefix: str) -> tuple[list[Finding], list[str]]:
    """extraArgs keys that veRL's own config (of the chosen version) rejects, where it is available."""
    version, extra_args = str(job.get("verlVersion")), job.get("extraArgs") or []
    if not extra_args:
        return [], []
    if not verlconfig.hydra_available():
        return [], ["extraArgs not checked against veRL's config: hydra-core is not installed"]
    directory = verlconfig.config_dir(version)
    if directory is None:
        return [], [f"extraArgs not checked against veRL's config: veRL {version}'s config not found (run make setup)"]
    findings = []
    for index, arg in enumerate(extra_args):
        why = verlconfig.rejected_override(directory, arg) if OVERRIDE.match(arg) else None
        if why:
            findings.append(Finding(f"{prefix}extraArgs[{index}]", arg, f"is rejected by veRL {version}'s config: {why}",
                                    "fix the key (see veRL's trainer/config/ppo_trainer.yaml)"))
    return findings, []


def check(chart: Path, inputs: HelmInputs) -> Verdict:
    """Schema first (the rules assume well-typed values), then the chart's rules, then veRL's config."""
    try:
        values = merged_values(chart, inputs)
    except ValueError as refused:
        return Verdict([Finding("(values)", "", str(refused), "fix the values file or the --set syntax Helm names")])
    verdict = Verdict(schema_findings(chart, values))
    if verdict.findings:
        return verdict
    rendered = template(chart, inputs)
    if rendered.returncode:
        verdict.findings += rule_findings(rendered.stderr)
    umbrella = chart == paths.CHART
    job, prefix = (values.get("ppo-job"), "ppo-job.") if umbrella else (values, "")
    if (umbrella or chart.name == "ppo-job") and job and job.get("enabled", True):
        findings, notes = verl_config_findings(job, prefix)
        verdict.findings += findings
        verdict.notes += notes
    return verdict
