"""Tier 1, generator: the catalog, the sizing rules, the values files and the schema (docs/testing.md)."""

from support.tiers import mark_tier as pytest_itemcollected  # noqa: F401
