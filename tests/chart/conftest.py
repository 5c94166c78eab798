"""Tier 2, chart: lint and render with Helm 3 and Helm 4, every object validated strictly, bad input refused
(docs/testing.md). The plain cases, a value in and a field out, are helm-unittest suites under the chart
(charts/verl-ppo/tests/, run by test_chart_unittest.py)."""

from support.tiers import mark_tier as pytest_itemcollected  # noqa: F401
