"""Tier 5: every PromQL expression of every shipped Ray dashboard parses with the pinned promtool,
template variables filled in as Grafana fills them; a planted broken expression fails."""

import json

import pytest

from support import dashboards, promtool
from support.tools import prometheus_binaries

SHIPPED = dashboards.shipped()


@pytest.fixture(scope="module", autouse=True)
def _promtool():
    if not prometheus_binaries()["promtool"].exists():
        pytest.fail("promtool is missing: run lab/scripts/setup.sh (make setup) first")


def test_every_dashboard_is_shipped():
    assert {path.stem for path in SHIPPED} >= {"default", "data", "train", "serve", "serve_deployment", "serve_llm"}


@pytest.mark.parametrize("path", SHIPPED, ids=[p.stem for p in SHIPPED])
def test_every_expression_parses(path, tmp_path):
    queries = dashboards.panel_queries(path) + dashboards.variable_queries(path)
    assert len(queries) >= 10, f"{path.name}: too few queries found ({len(queries)}); has the layout changed?"
    ok, output = promtool.check(queries, tmp_path)
    assert ok, output
    print(f"{path.stem}: {len(queries)} expressions parse")


def test_a_broken_expression_fails(tmp_path):
    board = json.loads((dashboards.DASHBOARDS / "default.json").read_text())
    panel = next(panel for panel in board["panels"] if panel.get("targets"))
    target = panel["targets"][0]
    target["expr"] = target["expr"].replace(")", "", 1)  # unbalanced parenthesis
    copy = tmp_path / "default.json"
    copy.write_text(json.dumps(board))
    ok, output = promtool.check(dashboards.panel_queries(copy), tmp_path)
    assert not ok
    assert f"panel '{panel['title']}'" in output, output


def test_filled_expressions_keep_no_variable():
    for path in SHIPPED:
        for query in dashboards.panel_queries(path) + dashboards.variable_queries(path):
            assert "$" not in dashboards.fill(query.expr), (path.stem, query.where)
