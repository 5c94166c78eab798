"""Tier 5, observability: the shipped dashboards' PromQL, a real Prometheus scraping a real Ray head and the rollout
metrics, the tracing hook in a real `ray start`."""

from support.tiers import mark_tier as pytest_itemcollected  # noqa: F401
