"""The chart's templates stay readable (issue 33): no line over 160 characters, each rule building its problem
and its fix on lines of their own; and every template a comment or the values schema names by its define exists,
so a renamed rule leaves no stale pointer behind."""

from __future__ import annotations

import re
from pathlib import Path

import yaml

from generator.paths import CHART, CHART_VALUES, ROOT, VALUES_SCHEMA, components, subchart_dir

LONGEST_LINE = 160
# A dotted name under the library's prefix or a component's: a template's name, or a path in the values.
PREFIXES = "|".join(("verl-ppo", *components()))
DOTTED_NAME = re.compile(rf"(?<![\w./$-])({PREFIXES})\.([A-Za-z]\w*)(?:\.[A-Za-z]\w*)*(?![\w/-])")


def templates() -> list[Path]:
    return sorted(path for path in CHART.rglob("*") if path.is_file() and "templates" in path.relative_to(CHART).parts)


def test_no_template_line_is_longer_than_160_characters():
    found = templates()
    assert len(found) > 20, found  # the chart's templates, not an empty glob
    long = [f"{path.relative_to(ROOT)}:{number}: {len(line)} characters"
            for path in found for number, line in enumerate(path.read_text().splitlines(), 1)
            if len(line) > LONGEST_LINE]
    assert long == [], "\n".join(long)


def values_keys() -> dict[str, set[str]]:
    """Each prefix's top-level values keys: the library has none, a component those of its values.yaml and the
    umbrella's section for it."""
    umbrella = yaml.safe_load(CHART_VALUES.read_text())
    keys = {"verl-ppo": set()}
    for component in components():
        own = yaml.safe_load((subchart_dir(component) / "values.yaml").read_text()) or {}
        keys[component] = set(own) | set(umbrella.get(component) or {})
    return keys


def test_every_template_named_in_the_templates_and_the_schema_is_defined():
    """`verl-ppo.<x>` is a template's name; so is `<component>.<x>`, unless <x> is one of the component's values."""
    defined = {name for path in templates() for name in re.findall(r'define "([^"]+)"', path.read_text())}
    keys = values_keys()
    stale = [f"{path.relative_to(ROOT)}: {match.group(0)}"
             for path in [*templates(), VALUES_SCHEMA] for match in DOTTED_NAME.finditer(path.read_text())
             if match.group(0) not in defined and match.group(2) not in keys[match.group(1)]]
    assert stale == [], "\n".join(stale)
