"""Parsing PromQL with the pinned promtool: each expression becomes a recording rule of one rule file."""

from __future__ import annotations

import subprocess
from pathlib import Path

import yaml

from support.dashboards import Query, fill
from support.tools import prometheus_binaries


def rule_name(index: int) -> str:
    return f"dashboard_query_{index}"


def check(queries: list[Query], workdir: Path) -> tuple[bool, str]:
    """Runs `promtool check rules` on the filled-in expressions; returns (ok, output naming each bad query)."""
    rules = {"groups": [{"name": "dashboards", "rules": [
        {"record": rule_name(index), "expr": fill(query.expr)} for index, query in enumerate(queries)]}]}
    path = workdir / "dashboard-queries.rules.yaml"
    path.write_text(yaml.safe_dump(rules, width=10_000))
    result = subprocess.run([str(prometheus_binaries()["promtool"]), "check", "rules", str(path)],
                            capture_output=True, text=True, timeout=60)
    output = result.stdout + result.stderr
    # promtool reports a bad rule by its position; name the dashboard panel it came from.
    named = [f"{query.dashboard}: {query.where}" for index, query in enumerate(queries)
             if f"{rule_name(index)}\n" in output or f'"{rule_name(index)}"' in output]
    return result.returncode == 0, output + ("\n" + "\n".join(named) if named else "")
