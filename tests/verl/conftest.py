"""Tier 3, veRL: the rendered command composed with Hydra against veRL's own config of every supported version."""

from support.tiers import mark_tier as pytest_itemcollected  # noqa: F401
