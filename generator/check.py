"""`generator check`: values against the values schema (schemas/values.schema.yaml, with its fix sentences),
then the chart's cross-field rules through Helm, then what only Python can know (extraArgs against veRL's
own config; where all that passes, whether the run fits its GPUs by the plan: generator/valuesplan.py).

No rule is written here: the chart's rulebook (verl-ppo-lib's _rules.tpl and each component's
_rules.tpl) is the only one, and Helm merges the values, so this and `helm template` always agree. Helm
renders with --skip-schema-validation, so the rules' findings come in the same run as the schema's. Only what
Helm's merge hides is found here first: a key given twice in one map of a file, whose first values Helm drops.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from generator import paths, schemafindings, verlconfig
from generator.catalog import load_catalog
from generator.finding import Finding
from generator.measurements import measured_runs
from generator.planreport import model_error
from generator.schema import values_schema
from generator.helm import HelmInputs, merged_values, template
from generator.valuesplan import memory_findings

# One broken rule as the rulebook prints it: "  - <field>=<value>: <why>. Fix: <how>".
_RULE_LINE = re.compile(r"^  - (?P<field>[^=]+)=(?P<value>.*?): (?P<problem>.*)\. Fix: (?P<fix>.*)$")
# A plain Hydra key=value override, what the rulebook accepts in extraArgs: ppo-job's files/hydra.yaml, which
# the rulebook reads too.
_HYDRA = paths.subchart_dir("ppo-job") / "files" / "hydra.yaml"
_SYNTAX = yaml.safe_load(_HYDRA.read_text())
OVERRIDE = re.compile(_SYNTAX["overridePattern"])
_VALUE = re.compile(_SYNTAX["valuePattern"].replace("SCALAR", _SYNTAX["scalarPattern"]))
_REFUSED_KEYS = [re.compile(refusal["pattern"]) for refusal in _SYNTAX["keyRefusals"]]


def composable(arg: Any) -> bool:
    """An extraArgs item the rulebook's syntax rules let through (the rulebook names the others): key=value, a value
    Hydra's parser reads as one, a key not Hydra's own. Only these are composed with veRL's config."""
    if not isinstance(arg, str) or not OVERRIDE.match(arg):
        return False
    key, value = arg.split("=", 1)
    return _VALUE.fullmatch(value) is not None and not any(pattern.search(key) for pattern in _REFUSED_KEYS)


@dataclass
class Verdict:
    findings: list[Finding] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def schema_findings(values: dict[str, Any]) -> list[Finding]:
    """The values schema's findings, in its own words, each with its fix sentence."""
    return schemafindings.findings(values_schema(), values)


def rule_findings(helm_error: str) -> list[Finding]:
    """The broken rules in `helm template`'s error; any other error as one finding with Helm's text."""
    found = [Finding(**match.groupdict()) for match in map(_RULE_LINE.match, helm_error.splitlines()) if match]
    return found or [Finding("(helm template)", "", helm_error.strip(), "see Helm's message")]


def with_rule_findings(schema: list[Finding], helm_error: str) -> list[Finding]:
    """The schema's findings, then the broken rules on fields the schema did not name. Past a schema finding
    a template may trip over the value: such an error is the schema finding's echo, not news."""
    rules = rule_findings(helm_error)
    if schema:
        named = {finding.field for finding in schema}
        rules = [finding for finding in rules if finding.field != "(helm template)" and finding.field not in named]
    return schema + rules


def verl_config_findings(job: dict[str, Any]) -> tuple[list[Finding], list[str]]:
    """extraArgs keys that veRL's own config (of the chosen version) rejects, where it is available."""
    version, extra_args = str(job.get("verlVersion")), job.get("extraArgs") or []
    if not isinstance(extra_args, list) or not extra_args:
        return [], []
    if not verlconfig.hydra_available():
        return [], ["extraArgs not checked against veRL's config: hydra-core is not installed"]
    directory = verlconfig.config_dir(version)
    if directory is None:
        return [], [f"extraArgs not checked against veRL's config: veRL {version}'s config not found (run make setup)"]
    findings = []
    for index, arg in enumerate(extra_args):
        why = verlconfig.rejected_override(directory, arg) if composable(arg) else None
        if why:
            findings.append(Finding(f"ppo-job.extraArgs[{index}]", arg,
                                    f"is rejected by veRL {version}'s config: {why}",
                                    "fix the key (see veRL's trainer/config/ppo_trainer.yaml)"))
    return findings, []


def duplicate_key_findings(files: tuple[Path, ...]) -> list[Finding]:
    """Each key a file gives twice in one map: Helm's YAML reader keeps the last and drops the first's values without
    a word (a second `ppo-job:` block drops the whole first one). A file YAML cannot read is left to Helm's error."""
    findings = []
    for path in files:
        try:
            documents = list(yaml.compose_all(path.read_text(encoding="utf-8"), Loader=yaml.SafeLoader))
        except (OSError, UnicodeDecodeError, yaml.YAMLError):
            continue
        pending = [(node, "") for node in documents if node is not None]
        seen_nodes: set[int] = set()  # an alias is walked once, at its first path
        while pending:
            node, where = pending.pop()
            if id(node) in seen_nodes:
                continue
            seen_nodes.add(id(node))
            if isinstance(node, yaml.SequenceNode):
                pending += [(item, f"{where}[{index}]") for index, item in enumerate(node.value)]
            if not isinstance(node, yaml.MappingNode):
                continue
            seen: dict[str, int] = {}
            for key, value in node.value:
                name = str(key.value) if isinstance(key, yaml.ScalarNode) else ""
                field = f"{where}.{name}" if where else name
                if name and key.tag != "tag:yaml.org,2002:merge" and name in seen:
                    findings.append(Finding(field, "", f"is given twice in {path} (lines {seen[name]} and "
                                            f"{key.start_mark.line + 1}): Helm keeps the last and drops the first's "
                                            "values", "merge the two into one"))
                seen.setdefault(name, key.start_mark.line + 1)
                pending.append((value, field))
    return findings


def check(chart: Path, inputs: HelmInputs) -> Verdict:
    """A key given twice, the schema's findings, then the chart's rules (where every value is of the kind its node
    allows: the rules read them so), then veRL's config."""
    try:
        values = merged_values(chart, inputs)
    except ValueError as refused:
        return Verdict([Finding("(values)", "", str(refused), "fix the values file or the --set syntax Helm names")])
    verdict = Verdict(duplicate_key_findings(inputs.files) + schema_findings(values))
    if schemafindings.mistyped(values_schema(), values):
        return verdict  # the rules would read the mistyped values as something else
    rendered = template(chart, inputs, "--skip-schema-validation")
    if rendered.returncode:
        verdict.findings = with_rule_findings(verdict.findings, rendered.stderr)
    job = values.get("ppo-job")
    if isinstance(job, dict) and job.get("enabled", True):
        findings, notes = verl_config_findings(job)
        named = {finding.field for finding in verdict.findings}  # the rulebook's word on an item comes first
        verdict.findings += [finding for finding in findings if finding.field not in named]
        verdict.notes += notes
    if not verdict.findings:  # values the chart and veRL take: would the run fit its GPUs?
        catalog = load_catalog()
        try:
            findings, notes = memory_findings(values, catalog, model_error(catalog, measured_runs()))
        # Values the plan has no figure for: no verdict, not a crash.
        except (ValueError, ArithmeticError, KeyError, TypeError) as beyond:
            findings, notes = [], [f"the plan of these values was not made: {beyond}"]
        verdict.findings += findings
        verdict.notes += notes
    return verdict
